"""Loaders on hostile paths and malformed documents: one BenchError line, within seconds, never a hang or another
exception; each data file read once and hashed as read; ids checked; duplicates, orphans and empty groups reported."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest
from fuzz_strategies import time_limit
from unprivileged import as_unprivileged

from memini_bench.core.dataset import Dataset
from memini_bench.errors import BenchError
from memini_bench.loaders import _json, load

SAMPLE = Path(__file__).resolve().parents[2] / "memini_bench" / "data" / "sample.json"


def _one_line_error(suite: str, path: str, seconds: float = 5.0) -> str:
    with time_limit(seconds), pytest.raises(BenchError) as exc:
        load(suite, path)
    message = str(exc.value)
    assert "\n" not in message and message
    return message


@pytest.fixture
def quick_fifo(monkeypatch):
    monkeypatch.setattr(_json, "FIFO_WAIT_S", 0.3)


def _feed(path: str, data: bytes) -> threading.Thread:
    """A writer thread: opens ``path`` (blocks until the reader opens it), writes ``data`` slowly, closes."""
    def write() -> None:
        with open(path, "wb") as fh:
            for i in range(0, len(data), 4096):
                fh.write(data[i:i + 4096])
                fh.flush()

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("suite", ["file", "locomo", "longmemeval", "vetobench"])
def test_special_paths_are_one_line_errors_within_seconds(tmp_path, quick_fifo, suite):
    loop = tmp_path / "loop.json"
    loop.symlink_to(tmp_path / "loop2.json")
    (tmp_path / "loop2.json").symlink_to(loop)
    fifo = tmp_path / "silent.json"
    os.mkfifo(fifo)
    cases = {
        str(tmp_path): "" if suite == "vetobench" else "is a directory",
        "/dev/zero": "character device", "/dev/null": "character device",
        str(loop): "symbolic link loop" if suite != "vetobench" else "",
        str(tmp_path / ("x" * 300)): "too long",
        str(tmp_path / "missing.json"): "no such",
        str(fifo): "a FIFO with no data",
        "/proc/self/status": "not a JSON data file", "/proc/self/mem": "cannot read",
        "/proc/self/pagemap": "not a JSON data file", "/proc/self": "",
        "bad\0name.json": "NUL",
    }
    if suite == "vetobench":  # the path must name a corpus*.json (or a folder of them) for the suite to read it
        (tmp_path / "empty").mkdir()
        (tmp_path / "looped").mkdir()
        os.symlink(loop, tmp_path / "looped" / "corpus.json")
        (tmp_path / "looped" / "scenarios.json").write_text("{}")
        cases = {str(tmp_path / "empty"): "no corpus*.json here", str(tmp_path / ("corpus" + "x" * 300)): "too long",
                 str(tmp_path / "looped"): "symbolic link loop", "/dev/zero": "expected a corpus*.json",
                 str(fifo): "expected a corpus*.json"}
    for path, fragment in cases.items():
        message = _one_line_error(suite, path)  # returns: the FIFO never blocks
        assert fragment in message, (path, message)


def test_a_fifo_with_a_writer_is_read_once_and_hashed_as_read(tmp_path):
    data = SAMPLE.read_bytes() * 1  # a multi-chunk writer: the reader must wait for the end, not the first chunk
    fifo = tmp_path / "data.json"
    os.mkfifo(fifo)
    writer = _feed(str(fifo), data)
    with time_limit(10):
        ds = load("file", str(fifo))
    writer.join(5)
    assert (len(ds.items), len(ds.questions)) == (10, 8)
    assert ds.source_sha256 == hashlib.sha256(data).hexdigest() and ds.sources[0].size == len(data)


def test_a_pipe_like_process_substitution_is_hashed_as_read():
    """``-data <(cat file)`` is a /dev/fd/N pipe: it can be read once only, and its hash is of what came through."""
    data = SAMPLE.read_bytes()
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)), daemon=True)
    writer.start()
    try:
        with time_limit(10):
            ds = load("sample", f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)
    assert ds.source_sha256 == hashlib.sha256(data).hexdigest() != hashlib.sha256(b"").hexdigest()


def test_an_unreadable_file_is_a_one_line_error(open_tmp):
    tmp_path = open_tmp
    path = tmp_path / "secret.json"
    path.write_bytes(SAMPLE.read_bytes())
    path.chmod(0)
    tmp_path.chmod(0o755)
    kind, message = as_unprivileged(lambda: load("file", str(path)).name)
    assert kind == "BenchError" and "permission denied" in message and "\n" not in message


def test_an_endless_stream_is_cut_at_the_cap(monkeypatch):
    monkeypatch.setattr(_json, "MAX_STREAM_BYTES", 1 << 20)
    read_end, write_end = os.pipe()

    def endless() -> None:
        try:
            os.write(write_end, b"[")
            while True:
                os.write(write_end, b"1," * 65536)
        except OSError:
            pass

    threading.Thread(target=endless, daemon=True).start()
    try:
        message = _one_line_error("locomo", f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)
        os.close(write_end)
    assert "longer than 1 MiB" in message


def test_a_utf8_bom_is_skipped_and_counted_in_the_hash(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + SAMPLE.read_bytes())
    ds = load("file", str(path))
    assert len(ds.items) == 10 and ds.source_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


# ---- the document: JSON paths, ids, duplicates, coverage ---------------------------------------------------------


def _file(tmp_path: Path, doc: object, name: str = "data.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _items(*ids: str, group: str = "") -> list[dict]:
    return [{"id": i, "content": f"text {i}", "group": group} for i in ids]


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["questions"][1]["gold"].append(None), "questions[1].gold[1]: expected a string, got null"),
    (lambda d: d["questions"][0].update(query=None), "questions[0].query: expected a string, got null"),
    (lambda d: d["items"][1].update(id="a\nb"), "items[1].id: id 'a\\nb' contains the control character '\\n'"),
    (lambda d: d["items"][0].update(id="x\0"), "items[0].id: id 'x\\x00' contains the control character"),
    (lambda d: d["items"][0].update(id=""), "items[0].id: is an empty id"),
    (lambda d: d["items"][0].update(time="2023-02-30T00:00:00Z"), "items[0].time: '2023-02-30T00:00:00Z' is not"),
    (lambda d: d["items"][0].update(time="0001-01-01T00:00:00+01:00"), "items[0].time: '0001-01-01T00:00:00+01:00' "
     "is out of range"),
    (lambda d: d["items"][0].update(group=7), "items[0].group: expected a string, got a number"),
    (lambda d: d["questions"][1].update(id="q0"), "questions[1].id: duplicate question id 'q0'"),
    (lambda d: d.update(items={}), "data.json: items: expected an array, got an object"),
    (lambda d: d["items"].__setitem__(0, "a"), "items[0]: expected an object, got a string"),
])
def test_file_suite_names_the_json_path(tmp_path, edit, message):
    doc = {"name": "t", "items": _items("a", "b"), "questions": [{"id": "q0", "query": "q", "gold": ["a"]},
                                                                  {"id": "q1", "query": "q", "gold": ["b"]}]}
    edit(doc)
    assert message in _one_line_error("file", _file(tmp_path, doc))


def test_text_keeps_nul_and_newlines(tmp_path):
    doc = {"items": [{"id": "a", "content": "line\none\0two"}], "questions": [{"query": "x\0y\nz", "gold": ["a"]}]}
    ds = load("file", _file(tmp_path, doc))
    assert ds.items[0].content == "line\none\0two" and ds.questions[0].query == "x\0y\nz"


def test_questions_that_can_never_be_hit_are_noted(tmp_path):
    doc = {"items": _items("a", "b", group="g1") + _items("c", group="g2"),
           "questions": [{"id": "empty", "query": "q", "gold": [], "group": "g1"},
                         {"id": "lonely", "query": "q", "gold": ["a"], "group": "nobody"},
                         {"id": "cross", "query": "q", "gold": ["c", "zz"], "group": "g1"},
                         {"id": "fine", "query": "q", "gold": ["a"], "group": "g1"}]}
    notes = load("file", _file(tmp_path, doc)).notes
    assert "1 questions have no gold ids (scored as misses): empty" in notes
    assert "1 questions ask a group with no items (scored as misses): lonely" in notes
    assert "2 gold ids match no item of their question's group (never hit), 1 of them items of another group: c, zz" \
        in notes


@pytest.mark.parametrize("name, file_name", [("../../x", "x"), ("/etc/passwd", "etc_passwd"), ("..", "dataset"),
                                             ("a b/c", "a_b_c"), ("ok-name_1.2", "ok-name_1.2")])
def test_dataset_names_are_safe_file_names(tmp_path, name, file_name):
    doc = {"name": name, "items": _items("a"), "questions": [{"query": "q", "gold": ["a"]}]}
    ds = load("file", _file(tmp_path, doc))
    assert ds.name == file_name
    assert any(repr(name) in n for n in ds.notes) == (name != file_name)
    assert Dataset(name, (), ()).name == file_name  # every construction path, not only the loader


def _locomo(*conversations: dict) -> list[dict]:
    return [{"sample_id": c.get("id", f"c{i}"), "conversation": c["conversation"], "qa": c.get("qa", [])}
            for i, c in enumerate(conversations)]


def _turns(*dia_ids: str) -> list[dict]:
    return [{"speaker": "A", "dia_id": d, "text": f"turn {d}"} for d in dia_ids]


def test_locomo_duplicates(tmp_path):
    conv = {"conversation": {"session_1": _turns("D1:1", "D1:2"), "session_1_date_time": "1:56 pm on 8 May, 2023",
                             "session_2": _turns("D1:2", "D2:1"), "session_2_date_time": "not a date",
                             "session_3": "garbage"},
            "qa": [{"question": "q", "evidence": ["D1:2"], "category": 1}]}
    ds = load("locomo", _file(tmp_path, _locomo(conv)))
    assert [i.id for i in ds.items] == ["c0/D1:1", "c0/D1:2", "c0/D2:1"]
    assert ds.items[1].content == "[1:56 pm on 8 May, 2023] A: turn D1:2" and ds.items[2].time is None
    assert any("1 turns repeat an earlier dia_id" in n and "c0/D1:2" in n for n in ds.notes)
    assert any("1 session entries are not arrays of turns" in n for n in ds.notes)
    assert any("1 session dates do not parse" in n for n in ds.notes)
    twice = _locomo(dict(conv, id="same"), dict(conv, id="same"))
    assert "[1].sample_id: conversation 'same' appears twice" in _one_line_error("locomo", _file(tmp_path, twice))
    huge = {"conversation": {f"session_{'9' * 5000}": _turns("D1:1")}, "qa": [{"question": "q", "evidence": "D1:1"}]}
    assert len(load("locomo", _file(tmp_path, _locomo(huge))).items) == 1


def _lme(qid: str, sessions: dict[str, str], answers: list[str], date: str = "2023/05/30 (Tue) 23:40") -> dict:
    return {"question_id": qid, "question": f"question {qid}", "question_type": "single-session-user",
            "answer": "a", "question_date": date, "answer_session_ids": answers,
            "haystack_session_ids": list(sessions), "haystack_dates": [date] * len(sessions),
            "haystack_sessions": [[{"role": "user", "content": text}] for text in sessions.values()]}


def test_longmemeval_duplicates(tmp_path):
    record = _lme("q1", {"s1": "one", "s2": "two"}, ["s1"])
    record["haystack_session_ids"] = ["s1", "s1"]
    ds = load("longmemeval", _file(tmp_path, [record]))
    assert [i.id for i in ds.items] == ["q1/s1"] and ds.items[0].content == "user: one\n"
    assert any("1 haystack sessions repeat a session id" in n for n in ds.notes)
    twice = [_lme("q1", {"s1": "one"}, ["s1"]), _lme("q1", {"s2": "two"}, ["s2"])]
    assert "[1].question_id: 'q1' appears twice (also [0])" in _one_line_error("longmemeval", _file(tmp_path, twice))
    bad = _lme("q1", {"s1": "one"}, ["s1"], date="2023/13/45 (Tue) 99:99")
    ds = load("longmemeval", _file(tmp_path, [bad]))
    assert ds.questions[0].now is None and any("1 question dates do not parse" in n for n in ds.notes)
    nulls = _lme("q1", {"s1": "one"}, [None])
    assert "[0].answer_session_ids[0]: expected a string, got null" in _one_line_error(
        "longmemeval", _file(tmp_path, [nulls]))


def test_longmemeval_empty_haystack_and_gold_are_noted(tmp_path):
    rows = [_lme("q1", {"s1": "one"}, []), _lme("q2", {}, ["s9"]), _lme("q3", {"s1": "x"}, ["s1"])]
    notes = load("longmemeval", _file(tmp_path, rows)).notes
    assert "1 questions have no gold ids (scored as misses): q1" in notes
    assert "1 questions ask a group with no items (scored as misses): q2" in notes
