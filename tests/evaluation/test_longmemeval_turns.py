"""LongMemEval at turn granularity: the loader against a hand-made record, and the metrics against LongMemEval's own
``src/retrieval/eval_utils.py`` (transcribed below with numpy, as upstream wrote it) on random rankings."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.evaluation.longmemeval_turns import lme_ndcg, session_scores, table, turn_scores
from memini_bench.loaders import LoadOptions, load

# ---- LongMemEval's eval_utils.py (np.asfarray is np.asarray(dtype=float) in numpy 2) ----------------------------


def up_dcg(relevances, k):
    relevances = np.asarray(relevances, dtype=float)[:k]
    if relevances.size:
        return relevances[0] + np.sum(relevances[1:] / np.log2(np.arange(2, relevances.size + 1)))
    return 0.


def up_ndcg(rankings, correct_docs, corpus_ids, k=10):
    relevances = [1 if doc_id in correct_docs else 0 for doc_id in corpus_ids]
    sorted_relevances = [relevances[idx] for idx in rankings[:k]]
    ideal_relevance = sorted(relevances, reverse=True)
    ideal_dcg = up_dcg(ideal_relevance, k)
    actual_dcg = up_dcg(sorted_relevances, k)
    if ideal_dcg == 0:
        return 0.
    return actual_dcg / ideal_dcg


def up_evaluate(rankings, correct_docs, corpus_ids, k=10):
    recalled_docs = set(corpus_ids[idx] for idx in rankings[:k])
    recall_any = float(any(doc in recalled_docs for doc in correct_docs))
    recall_all = float(all(doc in recalled_docs for doc in correct_docs))
    return recall_any, recall_all, up_ndcg(rankings, correct_docs, corpus_ids, k)


def up_turn2session(rankings, correct_docs, corpus_ids, k=10):
    def strip_turn_id(docid):
        return '_'.join(docid.split('_')[:-1])
    correct_docs = list(set([strip_turn_id(x) for x in correct_docs]))
    corpus_ids = [strip_turn_id(x) for x in corpus_ids]
    effective_k = k
    unique_docids = set(corpus_ids[idx] for idx in rankings[:effective_k])
    while effective_k <= len(corpus_ids) and len(unique_docids) < k:
        effective_k += 1
        unique_docids = set(corpus_ids[idx] for idx in rankings[:effective_k])
    return up_evaluate(rankings, correct_docs, corpus_ids, k=effective_k)


# ---- a hand-made record in LongMemEval's format --------------------------------------------------------------------


def _record(qid, sessions, answer_ids):
    return {"question_id": qid, "question_type": "single-session-user", "question": f"question {qid}?",
            "answer": "x", "question_date": "2023/05/30 (Tue) 23:40",
            "haystack_session_ids": [sid for sid, _ in sessions],
            "haystack_dates": ["2023/05/20 (Sat) 02:21"] * len(sessions),
            "haystack_sessions": [turns for _, turns in sessions], "answer_session_ids": answer_ids}


def _u(text, has=False):
    return {"role": "user", "content": text, "has_answer": has}


def _a(text):
    return {"role": "assistant", "content": text}


@pytest.fixture
def lme_file(tmp_path):
    records = [
        _record("q1", [("answer_s1", [_u("hi"), _a("hello"), _u("my car is blue", True), _a("ok")]),
                       ("filler_1", [_u("weather?"), _a("sunny"), _u("thanks")])], ["answer_s1"]),
        _record("q2", [("answer_s2", [_u("no evidence here"), _a("ok")])], ["answer_s2"]),  # no has_answer turn
        _record("q3_abs", [("filler_2", [_u("nothing")])], []),
    ]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(records))
    return path


def test_turn_items_and_gold(lme_file):
    ds = load("longmemeval", str(lme_file), LoadOptions(granularity="turn"))
    assert ds.name == "longmemeval-turns"
    q1 = [i for i in ds.items if i.group == "q1"]
    # user turns only, numbered by their 1-based place among all the session's turns (upstream's i_turn + 1)
    assert [i.id for i in q1] == ["q1/answer_s1_1", "q1/answer_s1_3", "q1/filler_1_1", "q1/filler_1_3"]
    assert q1[1].content == "my car is blue" and q1[1].session == "q1/answer_s1"
    assert [q.id for q in ds.questions] == ["q1"]
    assert ds.questions[0].gold == ("q1/answer_s1_3",)
    assert {q.id for q in ds.excluded} == {"q2", "q3_abs"}
    assert any("left out 1 questions with no has_answer user turn" in n for n in ds.notes)
    dated = load("longmemeval", str(lme_file), LoadOptions(granularity="turn", session_doc="dated"))
    assert dated.items[1].content == "[2023/05/20 (Sat) 02:21] my car is blue"


def test_session_granularity_is_unchanged(lme_file):
    ds = load("longmemeval", str(lme_file))
    assert ds.name == "longmemeval" and [i.id for i in ds.items][:2] == ["q1/answer_s1", "q1/filler_1"]
    assert ds.questions[0].gold == ("q1/answer_s1",)


def _run(gold, ranking):
    q = Question(id="q", query="?", gold=tuple(gold), group="g")
    return QuestionRun(q, tuple((i,) for i in ranking), tuple(0.0 for _ in ranking), tuple(0 for _ in ranking), 0.0)


def test_hand_computed_ndcg():
    # ranks 0-based: gold at 1 and 3 of 2 golds; LongMemEval's DCG: rel_0 + sum rel_i / log2(i+1)
    dcg = 1 / np.log2(2) + 1 / np.log2(4)
    ideal = 1 + 1 / np.log2(2)
    assert lme_ndcg([0, 1, 0, 1], 2, 10) == pytest.approx(dcg / ideal)


@pytest.mark.parametrize("seed", range(40))
def test_metrics_match_longmemevals_code(seed):
    rng = random.Random(seed)
    sessions = [f"{'answer' if s < 3 else 'filler'}_{s}" for s in range(rng.randint(3, 9))]
    corpus_ids, session_of, gold = [], {}, []
    for sid in sessions:
        for t in range(rng.randint(1, 5)):
            tid = f"{sid}_{2 * t + 1}"
            has = sid.startswith("answer") and (rng.random() < 0.4 or (sid == "answer_0" and t == 0))
            session_of[tid] = sid
            # upstream renames a non-has_answer turn of an answer session 'noans'; its item id here stays tid
            corpus_ids.append(tid if has or not sid.startswith("answer") else tid.replace("answer", "noans"))
            if has:
                gold.append(tid)
    ours_ids = [c.replace("noans", "answer") for c in corpus_ids]
    rankings = list(range(len(corpus_ids)))
    rng.shuffle(rankings)
    correct = [c for c in corpus_ids if "answer" in c]
    run = _run(gold, [ours_ids[r] for r in rankings])
    for k in (1, 3, 5, 10, 30, 50):
        assert turn_scores(run, k) == pytest.approx(up_evaluate(rankings, correct, corpus_ids, k))
        *ours, truncated = session_scores(run, k, session_of, len(corpus_ids))
        assert not truncated
        assert tuple(ours) == pytest.approx(up_turn2session(rankings, correct, corpus_ids, k))


def test_a_short_ranking_is_counted_as_truncated():
    session_of = {f"s{i}_1": f"s{i}" for i in range(20)}
    run = _run(["s0_1"], [f"s{i}_1" for i in range(5)])
    *_, truncated = session_scores(run, 10, session_of, corpus=20)
    assert truncated
    *_, truncated = session_scores(run, 5, session_of, corpus=20)
    assert not truncated


def test_run_reports_the_table(lme_file, tmp_path, capsys):
    from memini_bench.cli import main

    with pytest.raises(SystemExit) as done:
        main(["-suite", "longmemeval", "-granularity", "turn", "-data", str(lme_file), "-embedder", "hash", "-k",
              "1,3", "-out", str(tmp_path)])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "LongMemEval's retrieval metrics" in out
    doc = json.loads(next(tmp_path.glob("longmemeval-turns*.json")).read_text())
    rows = doc["longmemeval_turns"]["rows"]
    assert {r["k"] for r in rows} == {1, 3} and doc["longmemeval_turns"]["ks"] == [1, 3]
    assert doc["config"]["identity"]["load"]["granularity"] == "turn"
    with pytest.raises(SystemExit) as done:
        main(["-suite", "locomo", "-granularity", "turn", "-data", str(lme_file), "-no-write"])
    assert done.value.code == 2 and "-granularity: not used by -suite locomo" in capsys.readouterr().err


def test_identity_records_new_load_settings_only_when_set():
    from cli_opts import cli_options

    from memini_bench.results.identity import identity

    plain = identity(cli_options().settings("", ["memini-hybrid"]), systems=["memini-hybrid"])
    assert "granularity" not in plain["load"] and "unit" not in plain["load"]
    assert set(plain["load"]) == {"session_doc", "abstention", "shared_haystack"}
    assert identity(cli_options(unit="observation").settings("", []), systems=[])["load"]["unit"] == "observation"


def test_table_is_empty_for_session_runs():
    q = Question(id="q", query="?", gold=("a",), group="g")
    from memini_bench.core.dataset import Dataset, Item

    ds = Dataset(name="x", items=(Item(id="a", content="a", group="g"),), questions=(q,))
    result = RunResult("s", "x", 1, 0.0, 1, (_run(["a"], ["a"]),))
    assert table(ds, [result], [1]) == ("", {})
