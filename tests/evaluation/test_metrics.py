"""Metrics against ir-measures (trec_eval) on hand-made runs, and memini's percentile and token rules."""

from __future__ import annotations

import ir_measures
import pytest
from ir_measures import RR, Qrel, R, ScoredDoc, Success, nDCG

from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult, estimate_tokens, first_gold_rank
from memini_bench.evaluation.metrics import ndcg, percentile, recall_all, recall_any, reciprocal_rank, score

# (gold ids, ranked ids) per question; some gold ids are never retrieved, one question has no hit at all.
CASES = {
    "q1": (["a", "b"], ["x", "a", "y", "b", "z"]),
    "q2": (["c"], ["c", "x", "y"]),
    "q3": (["d", "e", "f"], ["x", "y", "f", "z", "d", "e", "w"]),
    "q4": (["g"], ["x", "y", "z"]),
    "q5": (["h", "i"], ["i", "h"]),
    "q6": (["j", "k", "l", "m"], ["m", "x", "j"]),
}


def _runs() -> list[QuestionRun]:
    return [QuestionRun(Question(id=qid, query="", gold=tuple(gold)), tuple((d,) for d in ranked),
                        tuple(float(len(ranked) - r) for r in range(len(ranked))), tuple(1 for _ in ranked), 1.0)
            for qid, (gold, ranked) in CASES.items()]


def _ir(measure) -> dict[str, float]:
    qrels = [Qrel(qid, doc, 1) for qid, (gold, _) in CASES.items() for doc in gold]
    # Distinct, descending scores: trec_eval's tie order never matters.
    run = [ScoredDoc(qid, doc, float(100 - r)) for qid, (_, ranked) in CASES.items() for r, doc in enumerate(ranked)]
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_against_ir_measures(k):
    runs = _runs()
    success, recall, dcg = _ir(Success @ k), _ir(R @ k), _ir(nDCG @ k)
    for run in runs:
        qid = run.question.id
        assert recall_any(run, k) == pytest.approx(success[qid])
        assert recall_all(run, k) == (1.0 if recall[qid] == pytest.approx(1.0) else 0.0)
        assert ndcg(run, k) == pytest.approx(dcg[qid], abs=1e-4)  # trec_eval prints 4 decimals


def test_mrr_against_ir_measures():
    rr = _ir(RR @ 10)
    for run in _runs():
        assert reciprocal_rank(run) == pytest.approx(rr.get(run.question.id, 0.0))
    assert [first_gold_rank(r) for r in _runs()] == [1, 0, 2, -1, 0, 0]


def test_ndcg_formula_by_hand():
    run = _runs()[0]  # gold a, b at ranks 1 and 3
    import math

    assert ndcg(run, 5) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))


def test_percentile_is_memini_floor_index():
    xs = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 7.0, 6.0, 9.0, 8.0]
    assert percentile(xs, 50) == 5.0  # floor(50 * 9 / 100) = 4 -> sorted[4]
    assert percentile(xs, 95) == 9.0  # floor(95 * 9 / 100) = 8
    assert percentile([], 50) == 0.0


def test_token_estimate_counts_utf8_bytes_without_encoding(monkeypatch):
    """The compiled byte count (and the ASCII shortcut) gives ``len(text.encode())`` on every code point's width;
    a lone surrogate is still refused as the encoding refuses it."""
    import sys

    from memini_bench.core import runs

    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    texts = ["", "abcd", "é", "\u07ff\u0800", "\uffff\U00010000", "x😀", every, every[:200], every[-5000:]]
    for compiled in (runs._UTF8_LENGTH, None):
        monkeypatch.setattr(runs, "_UTF8_LENGTH", compiled)
        assert [estimate_tokens(t) for t in texts] == [(len(t.encode("utf-8")) + 3) // 4 for t in texts]
        for bad in ("a\ud800", "\udfff😀"):
            with pytest.raises(UnicodeEncodeError):
                estimate_tokens(bad)


def test_tokens_and_score_row():
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert estimate_tokens("é") == 1  # 2 bytes
    runs = tuple(_runs())
    result = RunResult("sys", "toy", 10, 12.5, 100, runs)
    s = score(result, 3)
    assert s.questions == 6 and s["recall_any@{k}"] == pytest.approx(5 / 6) and s["mrr"] == pytest.approx(
        (1 / 2 + 1 + 1 / 3 + 0 + 1 + 1) / 6)
    assert s["tokens_injected@{k}"] == pytest.approx((3 + 3 + 3 + 3 + 2 + 3) / 6)
    assert s["token_efficiency@{k}"] == pytest.approx(s["tokens_injected@{k}"] / 100)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_score_means_match_ir_measures(k):
    """``score`` (one pass per question for every metric) against trec_eval's per-query values, averaged."""
    result = RunResult("sys", "toy", 10, 0.0, 1, tuple(_runs()))
    success, recall, dcg, rr = _ir(Success @ k), _ir(R @ k), _ir(nDCG @ k), _ir(RR @ 10)
    s = score(result, k)
    n = len(CASES)
    assert s["recall_any@{k}"] == pytest.approx(sum(success.get(q, 0.0) for q in CASES) / n)
    assert s["recall_all@{k}"] == pytest.approx(sum(recall.get(q, 0.0) == pytest.approx(1.0) for q in CASES) / n)
    assert s["ndcg@{k}"] == pytest.approx(sum(dcg.get(q, 0.0) for q in CASES) / n, abs=1e-4)
    assert s["mrr"] == pytest.approx(sum(rr.get(q, 0.0) for q in CASES) / n)
