"""LoCoMo's observation and summary units, the evidence distance and LoCoMo's evidence recall: a hand-made
conversation in locomo10.json's format, hand-computed answers, and the counts on the real file."""

from __future__ import annotations

import json

import pytest

from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.evaluation.evidence import bucket_of, distance_table, evidence_recall, evidence_table
from memini_bench.loaders import LoadOptions, load
from memini_bench.loaders.locomo import evidence_distance


def _conv() -> dict:
    turn = lambda s, t, text: {"speaker": "A" if t % 2 else "B", "dia_id": f"D{s}:{t}", "text": text}  # noqa: E731
    return {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "A", "speaker_b": "B",
            "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [turn(1, 1, "I adopted a cat"),
                                                                           turn(1, 2, "nice")],
            "session_2_date_time": "2:00 pm on 9 June, 2023", "session_2": [turn(2, 1, "the cat is Max"),
                                                                            turn(2, 2, "cute")],
            "session_10_date_time": "3:00 pm on 1 July, 2023", "session_10": [turn(10, 1, "I moved to Oslo")],
        },
        "observation": {
            "session_1_observation": {"A": [["A adopted a cat.", "D1:1"]], "B": [["B likes cats.", "D1:2"]]},
            "session_2_observation": {"A": [["A's cat is named Max.", "D2:1, D1:1"]]},
            "session_10_observation": {"A": [["A moved to Oslo.", ["D10:1"]]]},
        },
        "session_summary": {"session_1_summary": "A adopted a cat.", "session_2_summary": "The cat is Max.",
                            "session_10_summary": "A moved."},
        "qa": [
            {"question": "What pet?", "answer": "cat", "evidence": ["D1:1"], "category": 4},
            {"question": "Cat's name?", "answer": "Max", "evidence": ["D2:1", "D1:1"], "category": 1},
            {"question": "Where?", "answer": "Oslo", "evidence": ["D10:1"], "category": 4},
            {"question": "Reply?", "answer": "cute", "evidence": ["D2:2"], "category": 2},  # no observation
            {"question": "No evidence", "answer": "-", "evidence": [], "category": 3},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([_conv()]))
    return path


def test_observation_unit(locomo_file):
    ds = load("locomo", str(locomo_file), LoadOptions(unit="observation"))
    assert ds.name == "locomo-observations"
    assert [i.id for i in ds.items] == ["c1/session_1/obs0", "c1/session_1/obs1", "c1/session_2/obs0",
                                        "c1/session_10/obs0"]
    assert ds.items[0].content == "[1:56 pm on 8 May, 2023] A adopted a cat."
    assert dict(ds.items[2].meta)["covers"] == ("D2:1", "D1:1")  # a comma-separated dia_id, split as upstream
    q = {x.query: x for x in ds.questions}
    assert q["What pet?"].gold == ("c1/session_1/obs0", "c1/session_2/obs0")
    assert q["Cat's name?"].gold == ("c1/session_1/obs0", "c1/session_2/obs0")
    assert q["Reply?"].gold == ()  # kept, a miss: LoCoMo's recall scores it 0
    assert "No evidence" not in q
    assert any("1 questions have evidence ids that no observation carries" in n for n in ds.notes)
    assert dict(q["Where?"].meta)["evidence_distance"] == 0
    assert dict(q["Cat's name?"].meta)["evidence_distance"] == 9  # session 10 is the last; earliest evidence 1


def test_summary_unit(locomo_file):
    ds = load("locomo", str(locomo_file), LoadOptions(unit="summary"))
    assert ds.name == "locomo-summaries"
    assert [i.id for i in ds.items] == ["c1/session_1/summary", "c1/session_2/summary", "c1/session_10/summary"]
    q = {x.query: x for x in ds.questions}
    assert q["Cat's name?"].gold == ("c1/session_1/summary", "c1/session_2/summary")
    assert dict(q["Cat's name?"].meta)["evidence"] == ("S2", "S1")
    assert q["Reply?"].gold == ("c1/session_2/summary",)


def test_turn_and_session_levels_carry_the_distance(locomo_file):
    for suite in ("locomo", "locomo-sessions"):
        ds = load(suite, str(locomo_file))
        assert [dict(q.meta).get("evidence_distance") for q in ds.questions] == [9, 9, 0, 8]


def test_evidence_distance_by_hand():
    assert evidence_distance(10, ["D10:1"]) == 0
    assert evidence_distance(10, ["D3:1", "D7:2"]) == 7
    assert evidence_distance(10, ["D11:1"]) is None  # no such session
    assert [bucket_of(d) for d in (0, 1, 2, 3, 5, 6, 10, 11, 20, 21, 40)] == \
        ["0", "1-2", "1-2", "3-5", "3-5", "6-10", "6-10", "11-20", "11-20", "21+", "21+"]


def _run(q: Question, ranking: list[str]) -> QuestionRun:
    return QuestionRun(q, tuple((i,) for i in ranking), (0.0,) * len(ranking), (0,) * len(ranking), 0.0)


def test_locomo_evidence_recall_by_hand(locomo_file):
    ds = load("locomo", str(locomo_file), LoadOptions(unit="observation"))
    covers = {i.id: dict(i.meta)["covers"] for i in ds.items}
    q = {x.query: x for x in ds.questions}
    runs = (_run(q["What pet?"], ["c1/session_1/obs1", "c1/session_1/obs0"]),  # 1/1 at K 2, 0/1 at K 1
            _run(q["Cat's name?"], ["c1/session_1/obs0"]),  # covers D1:1 of D2:1, D1:1: 1/2
            _run(q["Where?"], ["c1/session_1/obs0"]),  # 0/1
            _run(q["Reply?"], ["c1/session_2/obs0"]))  # 0/1: no unit carries D2:2
    result = RunResult("s", ds.name, 2, 0.0, 1, runs)
    assert evidence_recall(result, 2, covers) == (pytest.approx((1 + 0.5 + 0 + 0) / 4), 4)
    assert evidence_recall(result, 1, covers)[0] == pytest.approx((0 + 0.5 + 0 + 0) / 4)
    text, block = evidence_table(ds, [result], [1, 2])
    assert "LoCoMo's evidence recall" in text and len(block["locomo_evidence_recall"]) == 2
    text, block = distance_table([result], [1, 2])
    rows = block["evidence_distance"]["systems"]["s"]
    # recall_all needs both gold observations (s1/obs0, s2/obs0) of the two cat questions: neither run has s2/obs0
    assert rows["6-10"] == {"questions": 3, "recall_any": pytest.approx(2 / 3), "recall_all": 0.0}
    assert rows["0"]["recall_any"] == 0.0


def test_unit_flag_is_refused_where_unused(locomo_file, capsys):
    from memini_bench.cli import main

    with pytest.raises(SystemExit) as done:
        main(["-suite", "locomo-sessions", "-unit", "observation", "-data", str(locomo_file), "-no-write"])
    assert done.value.code == 2 and "-unit: not used by -suite locomo-sessions" in capsys.readouterr().err


def test_real_locomo_counts(locomo_path):
    obs = load("locomo", str(locomo_path), LoadOptions(unit="observation"))
    summ = load("locomo", str(locomo_path), LoadOptions(unit="summary"))
    raw = json.loads(locomo_path.read_text())
    facts = sum(len(f) for r in raw for s in r["observation"].values() for f in s.values())
    assert len(obs.items) == facts == 2541
    assert len(summ.items) == sum(len(r["session_summary"]) for r in raw) == 272
    assert len(obs.questions) == len(summ.questions) == 1982  # every question with a D<n>:<m> evidence id
