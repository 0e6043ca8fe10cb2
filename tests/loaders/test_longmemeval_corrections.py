"""Fact histories from LongMemEval's knowledge-update questions (``-suite corrections -data <LongMemEval file>``):
hand-worked records give the writes, gold and stale ids that the module docstring says; on the real sample, every
question's ids are checked against an oracle computed here from the raw JSON; bad files are one line naming the
place (and the CLI exits 2 writing nothing); a hypothesis fuzz holds mutated files to that contract, replayed and
scored downstream."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cli_run import run_cli
from corrections_replay import replay_scored
from fuzz_strategies import longmemeval_docs, mutated, serialized, time_limit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.core.contract import SUPERSEDES
from memini_bench.errors import BenchError
from memini_bench.loaders.corrections import load_corrections, meta_of, timeline
from memini_bench.loaders.longmemeval_corrections import histories_from_longmemeval

ROOT = Path(__file__).resolve().parents[2]
LME = ROOT.parent / "shared" / "data" / "longmemeval"
SAMPLE = LME / "longmemeval_oracle_sample97.json"
needs_sample = pytest.mark.skipif(not SAMPLE.exists(), reason=f"LongMemEval sample not found at {SAMPLE} "
                                  "(../shared/data is not checked out here)")


def _turn(role: str, content: str, has_answer: bool | None = None) -> dict:
    turn = {"role": role, "content": content}
    if has_answer is not None:
        turn["has_answer"] = has_answer
    return turn


def _record(qid: str, question: str, sessions: list[tuple[str, str, list[dict]]], answers: list[str],
            qtype: str = "knowledge-update") -> dict:
    return {"question_id": qid, "question_type": qtype, "question": question, "answer": "x",
            "question_date": "2023/12/01 (Fri) 10:00", "answer_session_ids": answers,
            "haystack_session_ids": [s for s, _, _ in sessions], "haystack_dates": [d for _, d, _ in sessions],
            "haystack_sessions": [t for _, _, t in sessions]}


# The newer session comes first in the file: time order, not file order, decides which value is current.
NEW = ("s_new", "2023/09/30 (Sat) 08:34", [_turn("user", "Hi"), _turn("assistant", "Hello"),
                                          _turn("user", "I earned $420 at the market", True)])
OLD = ("s_old", "2023/04/11 (Tue) 07:47", [_turn("user", "I earned $220 at the market", True),
                                          _turn("assistant", "Nice", True), _turn("user", "Thanks")])
FILLER = ("s_fill", "2023/06/01 (Thu) 12:00", [_turn("user", "Recipe for soup?"), _turn("assistant", "Sure")])
RECORDS = [
    _record("ku1", "How much did I earn at the market on my latest visit?", [NEW, FILLER, OLD], ["s_new", "s_old"]),
    _record("ku2", "What was my previous score?", [OLD, NEW], ["s_old", "s_new"]),
    _record("ku3_abs", "How much did I earn at the fair?", [OLD, NEW], ["s_old", "s_new"]),
    _record("ku4", "How many bikes do I own?", [OLD], ["s_old"]),
    _record("ku5", "Same day?", [("a", "2023/01/01 (Sun) 10:00", [_turn("user", "one", True)]),
                                 ("b", "2023/01/01 (Sun) 10:00", [_turn("user", "two", True)])], ["a", "b"]),
    _record("other", "Where did I go?", [FILLER], ["s_fill"], qtype="multi-session"),
]


def _load(tmp_path: Path, records: list, **kw):
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(records))
    return load_corrections(str(path), **kw)


def test_turn_level_writes_gold_and_stale_follow_the_evidence_in_date_order(tmp_path):
    ds = _load(tmp_path, RECORDS, granularity="turn")
    assert ds.name == "longmemeval-corrections-turns"
    assert [q.id for q in ds.questions] == ["ku1"]
    q = ds.questions[0]
    assert q.category == "current" and q.group == "ku1"
    assert q.gold == ("ku1/s_new_3",)  # the has_answer user turn of the newest answer session
    assert meta_of(q.meta, "stale") == ("ku1/s_old_1",)  # the assistant's has_answer turn is not indexed
    items = {it.id: it for it in ds.items if it.group == "ku1"}
    assert set(items) == {"ku1/s_old_1", "ku1/s_old_3", "ku1/s_fill_1", "ku1/s_new_1", "ku1/s_new_3"}
    assert meta_of(items["ku1/s_new_3"].meta, SUPERSEDES) == ("ku1/s_old_1",)
    assert meta_of(items["ku1/s_new_1"].meta, SUPERSEDES) is None  # a distractor
    assert items["ku1/s_new_3"].content == "I earned $420 at the market"
    order = [it.id for step in timeline(ds) for it in getattr(step, "items", (getattr(step, "item", None),))]
    assert order[:3] == ["ku1/s_old_1", "ku1/s_old_3", "ku1/s_fill_1"]  # oldest session first
    notes = " ".join(ds.notes)
    for why, qid in (("earlier value", "ku2"), ("abstention", "ku3_abs"), ("fewer than two", "ku4"),
                     ("strictly later", "ku5")):
        assert why in notes and qid in notes


def test_session_level_and_a_shared_haystack(tmp_path):
    ds = _load(tmp_path, RECORDS)
    assert ds.name == "longmemeval-corrections"
    q = ds.questions[0]
    assert q.gold == ("ku1/s_new",) and meta_of(q.meta, "stale") == ("ku1/s_old",)
    assert next(it for it in ds.items if it.id == "ku1/s_new").content.startswith("user: Hi\nassistant: Hello\n")
    shared = _load(tmp_path, RECORDS, shared_haystack=True)
    assert shared.name == "longmemeval-corrections-shared"
    assert {it.group for it in shared.items} == {"longmemeval"}
    # every record's sessions pooled, deduplicated by id: the other question type's session is a distractor
    assert sorted(it.id for it in shared.items) == ["a", "b", "s_fill", "s_new", "s_old"]
    assert shared.questions[0].gold == ("s_new",)


@pytest.mark.parametrize(("change", "expected"), [
    (lambda r: r.__setitem__(0, []), "[0]: expected a LongMemEval record object"),
    (lambda r: r[0].update(haystack_dates=["2023/01/01 (Sun) 10:00"]), "differ in length"),
    (lambda r: r[0]["haystack_sessions"].__setitem__(0, "text"), "haystack_sessions[0]"),
    (lambda r: r[0]["haystack_sessions"][0][2].update(has_answer="yes"), "has_answer"),
    (lambda r: r[1].update(question_id="ku1"), "appears twice"),
    (lambda r: r.__setitem__(slice(None), [r[1], r[5]]), "no knowledge-update question to ask"),
])
def test_a_bad_longmemeval_file_is_one_line_naming_the_place(tmp_path, change, expected):
    records = copy.deepcopy(RECORDS)
    change(records)
    with pytest.raises(BenchError) as err:
        _load(tmp_path, records, granularity="turn")
    message = str(err.value)
    assert message.startswith(str(tmp_path / "lme.json")) and "\n" not in message
    assert expected in message, message


def test_the_longmemeval_flags_are_refused_for_a_fact_history_file():
    with pytest.raises(BenchError, match="-shared-haystack: read only for a LongMemEval file"):
        load_corrections(shared_haystack=True)
    with pytest.raises(BenchError, match="-granularity: read only for a LongMemEval file"):
        load_corrections(granularity="turn")


def test_the_cli_refuses_a_bad_file_with_exit_2_and_writes_nothing(tmp_path, capsys):
    records = copy.deepcopy(RECORDS)
    records[0]["haystack_dates"] = ["2023/01/01 (Sun) 10:00"]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(records))
    out = tmp_path / "out"
    code, _, err = run_cli(["run", "-suite", "corrections", "-data", str(path), "-systems", "keyword",
                            "-embedder", "hash", "-out", str(out)], capsys)
    assert code == 2 and "differ in length" in err and "Traceback" not in err
    assert not out.exists() or not any(out.iterdir())


def test_the_cli_runs_a_longmemeval_file_and_scores_current_and_stale(tmp_path, capsys):
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(RECORDS))
    code, out, err = run_cli(["run", "-suite", "corrections", "-data", str(path), "-granularity", "turn",
                              "-systems", "keyword,recent-k", "-embedder", "hash", "-k", "1", "-out",
                              str(tmp_path / "o")], capsys)
    assert code == 0, err
    doc = json.loads(next((tmp_path / "o").glob("*.json")).read_text())
    scores = {(s["kind"], s["metric"]): s["mean"] for s in doc["corrections"]["scores"]["1"]["recent-k"]}
    # recent-k returns the newest write: ku1/s_new_3 is the last user turn of the newest session, so it is gold
    assert scores[("current", "recall_any@1")] == 1.0 and scores[("current", "stale_above@1")] == 0.0


def _oracle(records: list) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Per asked question, (gold, stale) computed straight from the raw JSON: the has_answer user turns of the
    latest-dated answer session, and of the others."""
    out = {}
    for r in records:
        if r["question_type"] != "knowledge-update" or r["question_id"].endswith("_abs"):
            continue
        if any(w in r["question"].lower() for w in ("previous", "before", "earlier")):
            continue
        evidence = []
        for sid, date, session in zip(r["haystack_session_ids"], r["haystack_dates"], r["haystack_sessions"],
                                      strict=True):
            if sid in r["answer_session_ids"]:
                ids = [f"{sid}_{j + 1}" for j, t in enumerate(session) if t["role"] == "user" and t.get("has_answer")]
                evidence.append((date, ids))  # 'YYYY/MM/DD (Day) HH:MM' sorts as text
        evidence.sort()
        out[r["question_id"]] = (tuple(evidence[-1][1]), tuple(i for _, ids in evidence[:-1] for i in ids))
    return out


@needs_sample
def test_the_real_sample_matches_an_oracle_built_from_the_raw_json():
    records = json.loads(SAMPLE.read_text())
    expected = _oracle(records)
    ds = load_corrections(str(SAMPLE), shared_haystack=True, granularity="turn")
    assert len(ds.questions) == len(expected) == 18
    for q in ds.questions:
        gold, stale = expected[q.id]
        assert (q.gold, meta_of(q.meta, "stale")) == (gold, stale), q.id
    assert "dfde3500, 50635ada, 10e09553" in " ".join(ds.notes)
    # every user turn of the 97 records' sessions is written once (deduplicated by session id)
    users = {f"{sid}_{j + 1}" for r in records for sid, s in zip(r["haystack_session_ids"], r["haystack_sessions"],
                                                                   strict=True)
             for j, t in enumerate(s) if t["role"] == "user" and t["content"].strip()}
    assert {it.id for it in ds.items} == users


def _ku_docs() -> st.SearchStrategy[list]:
    """The hand-written records above, or the shared LongMemEval fuzz records (odd ids, dates and texts) made
    knowledge-update questions."""
    hand = st.lists(st.sampled_from(copy.deepcopy(RECORDS)), min_size=1, max_size=4,
                    unique_by=lambda r: r["question_id"])
    odd = longmemeval_docs().map(lambda rows: [{**r, "question_type": "knowledge-update"} for r in rows])
    return st.one_of(hand, odd)


FAST = settings(max_examples=80, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FAST
@given(data=st.data())
def test_fuzz_a_longmemeval_file_loads_and_replays_or_is_one_line(data, tmp_path_factory):
    """Any mutated LongMemEval file given to -suite corrections: a Dataset (replayed through memini-keyword and
    recent-k, scored) or one BenchError line; nothing else raised, no hang."""
    raw = data.draw(serialized(data.draw(mutated(_ku_docs()))))
    path = tmp_path_factory.mktemp("fuzz") / "lme.json"
    path.write_bytes(raw)
    shared, granularity = data.draw(st.booleans()), data.draw(st.sampled_from(["session", "turn"]))
    with time_limit(300):
        try:
            ds = load_corrections(str(path), shared_haystack=shared, granularity=granularity)
        except BenchError as exc:
            assert str(exc) and "\n" not in str(exc)
            return
        replay_scored(ds)


def test_histories_from_longmemeval_refuses_an_unknown_granularity():
    with pytest.raises(BenchError, match="-granularity 'word'"):
        histories_from_longmemeval(RECORDS, "x.json", granularity="word")
