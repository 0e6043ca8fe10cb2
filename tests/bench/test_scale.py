"""Scale support: the streaming JSON array reader (against orjson and the whole-file reader), the LongMemEval
loader's text interning and streamed loading, and the LongMemEval-shaped file generator."""

from __future__ import annotations

import hashlib
import json

import orjson
import pytest
from conftest import SHARED_DATA, shared

from devbench import synth
from memini_bench.errors import BenchError
from memini_bench.loaders import _stream, load

TRICKY = [
    {"a": "]}[{,\"\\", "b": [1, 2.5e-3, -0.0, True, None], "c": {"d": "é😀\u2028"}},
    {}, [], "x", 12345678901234567890, -7.25e10, {"long": "y" * 300, "n": 9007199254740993},
]


@pytest.fixture(params=["scanner", "json"])
def streamed(monkeypatch, request):
    """Every regular file is streamed, in blocks of ``block`` bytes (set by the test), by the byte stream with the
    C element scanner and by the text stream with json's scanner."""
    if request.param == "scanner" and _stream._jsonscan is None:
        pytest.skip("the C scanner is not built here")
    monkeypatch.setenv("MEMINI_BENCH_KERNELS", "1" if request.param == "scanner" else "0")
    monkeypatch.setattr(_stream, "STREAM_ABOVE", -1)

    def block(n: int) -> None:
        monkeypatch.setattr(_stream, "BLOCK_BYTES", n)
    return block


def _read(path, suite="x"):
    rows, source = _stream.json_array(path, suite)
    return list(rows), source()


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
def test_stream_reader_matches_orjson(tmp_path, streamed, block):
    streamed(block)
    path = tmp_path / "a.json"
    for text in (json.dumps(TRICKY), json.dumps(TRICKY, indent=3, ensure_ascii=False), "[]", " [ 1 ,2 ] \n",
                 "\ufeff[1]", "\ufeff [\"\\\\\", \"a\\\"]\"]", '[{"a": "\\\\"}, "\\\\\\"", 5]'):
        path.write_bytes(text.encode("utf-8"))
        rows, source = _read(path)
        assert rows == orjson.loads(text.removeprefix("\ufeff").encode())
        assert (source.sha256, source.size) == (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size)


@pytest.mark.parametrize(("text", "message"), [
    ("", "not a JSON data file"), ('{"a": 1}', "expected an array, got an object"), ("[1, 2", "not valid JSON"),
    ('[{"a": "b}]', "not valid JSON"), ("[1] x", "extra data"), ("[1 2]", "expected ',' or ']'"),
    ("[NaN]", "not valid JSON"), ("[1,]", "not valid JSON"), ("x", "not a JSON data file"),
])
def test_stream_reader_refuses_malformed_files(tmp_path, streamed, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    for block in (2, 1 << 20):
        streamed(block)
        with pytest.raises(BenchError, match=message):
            _read(path, "longmemeval")


def test_stream_reader_refuses_bad_utf8(tmp_path, streamed):
    streamed(1 << 20)
    path = tmp_path / "bad.json"
    path.write_bytes(b'["\xff"]')
    with pytest.raises(BenchError, match="not UTF-8"):
        _read(path, "longmemeval")


def _small_shape(**kw) -> synth.Shape:
    return synth.Shape(records=6, sessions=12, session_chars=1500, pool=20, **kw)


def test_generator_is_deterministic_and_has_the_shape(tmp_path):
    shared("locomo/locomo10.json")
    source = synth.load_source(SHARED_DATA)
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    synth.write(a, source, _small_shape())
    synth.write(b, source, _small_shape())
    synth.write(c, source, _small_shape(seed=1))
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    rows = json.loads(a.read_text())
    assert len(rows) == 6 and all(len(r["haystack_sessions"]) == len(r["haystack_session_ids"]) == 12 for r in rows)
    texts: dict[str, str] = {}
    for r in rows:
        assert set(r["answer_session_ids"]) <= set(r["haystack_session_ids"])
        assert len(set(r["haystack_session_ids"])) == 12
        assert r["haystack_dates"] == sorted(r["haystack_dates"])
        for sid, turns in zip(r["haystack_session_ids"], r["haystack_sessions"], strict=True):
            assert [t["role"] for t in turns[:2]] == ["user", "assistant"]
            assert texts.setdefault(sid, json.dumps(turns)) == json.dumps(turns)  # a session id has one text
    assert len(texts) < 6 * 12  # filler sessions recur across records


def test_longmemeval_streamed_equals_whole_file_and_interns_texts(tmp_path, monkeypatch):
    shared("locomo/locomo10.json")
    path = tmp_path / "lme.json"
    synth.write(path, synth.load_source(SHARED_DATA), _small_shape())
    whole = load("longmemeval", str(path))
    monkeypatch.setattr(_stream, "STREAM_ABOVE", -1)
    monkeypatch.setattr(_stream, "BLOCK_BYTES", 4096)
    streamed = load("longmemeval", str(path))
    assert streamed == whole  # items, questions, notes and the source's hash and size
    by_text: dict[str, object] = {}
    for it in streamed.items:
        assert by_text.setdefault(it.content, it.content) is it.content  # equal texts are one object
    assert len(by_text) < len(streamed.items) == 6 * 12


def _session(*turns: tuple[str, object]) -> list[dict[str, object]]:
    return [{"role": role, "content": content} for role, content in turns]


def _records_with_shared_sessions() -> list[dict[str, object]]:
    """Records whose sessions recur (across records, inside one, under other ids), with turns that are not plain
    (a missing role, an extra key, a null content) and dates that are blank or missing."""
    a = _session(("user", "Hello  World é"), ("assistant", "Hi 😀 \u2028 there"))
    b = _session(("user", "B text"), ("assistant", "more"))
    odd = [{"content": "no role"}, {"role": "assistant", "content": None, "extra": [1, {"x": "]"}]}]
    rows = []
    for i in range(6):
        sessions = [a, b, odd, _session(("user", f"own {i}"))] + ([a] if i % 2 else [])
        ids = ["sa", "sb", "so", f"own{i}"] + (["sa2"] if i % 2 else [])
        rows.append({"question_id": f"q{i}" + ("_abs" if i == 5 else ""), "question_type": "t", "question": f"q {i}?",
                     "answer": "x", "question_date": "2023/05/30 (Tue) 23:40", "answer_session_ids": [f"own{i}"],
                     "haystack_session_ids": ids,
                     "haystack_dates": [f"2023/05/2{j} (Mon) 10:00" for j in range(len(ids) - 1)] + [""],
                     "haystack_sessions": sessions})
    return rows


@pytest.mark.parametrize("mode", ["full", "user-only", "dated"])
@pytest.mark.parametrize("pooled", [False, True])
def test_shared_sessions_are_parsed_once_and_load_as_the_whole_file(tmp_path, monkeypatch, mode, pooled):
    """The byte stream's ``shared`` path (each distinct session's bytes parsed once, its text made once) loads the
    same data set as the whole-file parse, record shapes it leaves to the whole parse included (an escaped key,
    the key twice, odd spacing); and it did skip the repeats."""
    from memini_bench.loaders.longmemeval import load_longmemeval

    if _stream._jsonscan is None:
        pytest.skip("the C scanner is not built here")
    rows = _records_with_shared_sessions()
    parts = [json.dumps(r, ensure_ascii=False) for r in rows]
    parts[1] = parts[1].replace('"haystack_sessions"', '"haystack\\u005fsessions"')  # an escape: parsed whole
    parts[2] = parts[2][:-1] + ', "haystack_sessions": ' + json.dumps(rows[2]["haystack_sessions"]) + "}"  # twice
    parts[3] = json.dumps(rows[3], indent=2)
    path = tmp_path / "lme.json"
    path.write_text("[" + ",\n".join(parts) + "]", encoding="utf-8")
    options = {"session_doc_mode": mode, "shared_haystack": pooled}
    whole = load_longmemeval(str(path), **options)
    monkeypatch.setattr(_stream, "STREAM_ABOVE", -1)
    for block in (64, 1 << 20):
        monkeypatch.setattr(_stream, "BLOCK_BYTES", block)
        assert load_longmemeval(str(path), **options) == whole
    stream, _ = _stream.json_array(path, "longmemeval", shared="haystack_sessions")
    kinds = [{type(s) for s in r["haystack_sessions"]} for r in stream]
    assert kinds == [{_stream.Shared}, {list}, {list}, {_stream.Shared}, {_stream.Shared}, {_stream.Shared}]
    stream, _ = _stream.json_array(path, "longmemeval", shared="haystack_sessions")
    unparsed = [sum(s.value is _stream.UNPARSED for s in r["haystack_sessions"] if type(s) is not list)
                for r in stream]
    assert unparsed == [0, 0, 0, 1, 3, 4]  # record 3 is indented: other bytes, but its second "a" recurs


@pytest.mark.parametrize(("session", "message"), [
    ('[{"role": "user", "content": NaN}]', "not valid JSON"), ('[{"role": "user", "content": 5}]', "content"),
    ('[{"role": "user", "content": "\\ud800 x"}]', "not valid JSON|UTF-8|surrogate"),
])
def test_shared_sessions_keep_the_whole_parse_errors(tmp_path, monkeypatch, session, message):
    """A bad session met by the ``shared`` path is the same one-line error as the whole file's parse gives."""
    from memini_bench.loaders.longmemeval import load_longmemeval

    if _stream._jsonscan is None:
        pytest.skip("the C scanner is not built here")
    good = json.dumps(_records_with_shared_sessions()[0])
    bad = good.replace('"haystack_sessions": [', '"haystack_sessions": [' + session + ", ").replace('"q0"', '"q9"')
    path = tmp_path / "lme.json"
    path.write_text(f"[{good}, {bad}]", encoding="utf-8")
    errors = []
    for above in (1 << 40, -1):
        monkeypatch.setattr(_stream, "STREAM_ABOVE", above)
        with pytest.raises(BenchError, match=message) as caught:
            load_longmemeval(str(path))
        errors.append(str(caught.value))
    assert errors[0].split(":")[0] == errors[1].split(":")[0]
