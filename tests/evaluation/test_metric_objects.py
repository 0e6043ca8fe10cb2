"""Every registered metric against an independent oracle on random runs: ir_measures (pytrec_eval, trec_eval's
arithmetic) where it has the measure, else the published arithmetic written out here.

Oracles: recall_any / hit / success = ``Success``; recall_frac = ``R``; precision = ``P``; mrr = ``RR``; ndcg =
``nDCG`` (graded gains, and ``judged_only``); r_precision = ``Rprec``. ir_measures has none for recall_all (here:
``R@K == 1``, i.e. trec_eval's recall at 1), ndcg_lme (LongMemEval's ``eval_utils.py`` ``dcg`` with numpy, as that
script computes it), latency_pP (numpy's ``percentile(method="lower")``, which is memini's floor-index
percentile), tokens_injected and token_efficiency (the sums by hand). Each hit is one id and ids are distinct in a
ranking (ir_measures reads a run as a dict of documents, so neither a repeat nor a multi-id hit exists there).
"""

from __future__ import annotations

import dataclasses

import ir_measures
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_measures import RR, P, Qrel, R, Rprec, ScoredDoc, Success, nDCG

from memini_bench.core import metrics as m
from memini_bench.core.dataset import Question
from memini_bench.core.registry import METRICS
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.errors import BenchError

DOCS = [f"d{i}" for i in range(12)]


@st.composite
def runs(draw) -> list[QuestionRun]:
    """1..6 questions: gold ids with grades 1..3 (sometimes listed, else the default 1), some judged-not-relevant
    ids (grade 0), a ranking of distinct ids, latencies and token counts."""
    out = []
    for q in range(draw(st.integers(1, 6))):
        gold = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
        graded = draw(st.booleans())
        grades = tuple((g, draw(st.integers(1, 3))) for g in gold) if graded else ()
        rest = [d for d in DOCS if d not in gold]
        judged_off = draw(st.lists(st.sampled_from(rest), max_size=3, unique=True)) if rest else []
        grades += tuple((d, 0) for d in judged_off)
        ranking = draw(st.lists(st.sampled_from(DOCS), min_size=0, max_size=10, unique=True))
        tokens = tuple(draw(st.integers(0, 50)) for _ in ranking)
        latency = draw(st.floats(0.01, 100.0, allow_nan=False))
        question = Question(id=f"q{q}", query="", gold=tuple(gold), grades=grades)
        out.append(QuestionRun(question, tuple((d,) for d in ranking), tuple(float(100 - r) for r in
                                                                               range(len(ranking))), tokens, latency))
    return out


def _ir(measure, questions: list[QuestionRun]) -> dict[str, float]:
    qrels = [Qrel(r.question.id, d, g) for r in questions
             for d, g in {**{d: 1 for d in r.question.gold}, **dict(r.question.grades)}.items()]
    run = [ScoredDoc(r.question.id, ids[0], score) for r in questions for ids, score in zip(r.ranked_ids, r.scores,
                                                                                            strict=True)]
    return {x.query_id: x.value for x in ir_measures.iter_calc([measure], qrels, run)}


def _check(ours: m.Metric, theirs, questions: list[QuestionRun]) -> None:
    want = _ir(theirs, questions)
    for r in questions:
        relevant = ours.relevant(r)
        got = ours.per_question(r)
        if r.question.id in want:
            assert got == pytest.approx(want[r.question.id], abs=1e-4), (ours.name, r)  # trec_eval: 4 decimals
        else:  # ir_measures leaves out a query it cannot score; ours counts it as a miss
            assert got == 0.0 and (not r.ranked_ids or not relevant), (ours.name, r)


def _lme_ndcg(relevances: list[float], golds: int, k: int) -> float:
    """LongMemEval's ``ndcg`` as ``src/retrieval/eval_utils.py`` writes it (numpy), the ideal being G ones."""
    def dcg(rel, k):
        rel = np.asarray(rel, dtype=float)[:k]
        return rel[0] + np.sum(rel[1:] / np.log2(np.arange(2, rel.size + 1))) if rel.size else 0.0

    ideal = dcg([1.0] * golds, k)
    return float(dcg(relevances, k) / ideal) if ideal else 0.0


@settings(max_examples=150, deadline=None)
@given(questions=runs(), k=st.integers(1, 12), rel=st.integers(1, 3))
def test_every_metric_against_its_oracle(questions, k, rel):
    pairs = [
        (m.RecallAnyAtK(k=k, rel=rel), Success(rel=rel) @ k), (m.Hit(k=k, rel=rel), Success(rel=rel) @ k),
        (m.Success(k=k, rel=rel), Success(rel=rel) @ k), (m.RecallFrac(k=k, rel=rel), R(rel=rel) @ k),
        (m.Precision(k=k, rel=rel), P(rel=rel) @ k), (m.MRR(k=k, rel=rel), RR(rel=rel) @ k),
        (m.MRR(rel=rel), RR(rel=rel)), (m.NDCG(k=k), nDCG @ k), (m.NDCG(), nDCG),
        (m.NDCG(k=k, judged_only=True), nDCG(judged_only=True) @ k), (m.RPrecision(rel=rel), Rprec(rel=rel)),
        (m.RPrecision(judged_only=True), Rprec(judged_only=True)),
        (m.RecallAnyAtK(k=k, judged_only=True), Success(judged_only=True) @ k),
        (m.RecallFrac(k=k, judged_only=True), R(judged_only=True) @ k),
        (m.Precision(k=k, rel=rel, judged_only=True), P(rel=rel, judged_only=True) @ k),
    ]
    covered = set()
    for ours, theirs in pairs:
        _check(ours, theirs, questions)
        covered.add(ours.family)
    frac = _ir(R(rel=rel) @ k, questions)
    for r in questions:
        gold = [d for d in r.question.gold if dict(r.question.grades).get(d, 1) >= rel]
        assert m.RecallAllAtK(k=k, rel=rel).per_question(r) == (1.0 if gold and frac.get(r.question.id) == 1.0
                                                             else 0.0)
        binary = [1.0 if ids[0] in r.question.gold else 0.0 for ids in r.ranked_ids]
        assert m.NDCGLongMemEval(k=k).per_question(r) == pytest.approx(
            _lme_ndcg(binary, len(r.question.gold), k))
        assert m.TokensInjected(k=k).per_question(r) == sum(r.tokens[:k])
    result = RunResult("s", "d", 10, 0.0, 500, tuple(questions))
    lat = [r.latency_ms for r in questions]
    for p in (50, 95, 99):
        assert m.Latency(p=p).value(result) == np.percentile(lat, p, method="lower")
    injected = np.mean([sum(r.tokens[:k]) for r in questions])
    assert m.TokenEfficiency(k=k).value(result) == pytest.approx(injected / 500)
    assert m.TokenEfficiency(k=k).value(dataclasses.replace(result, corpus_tokens=0)) == 0.0
    covered |= {"recall_all", "ndcg_lme", "tokens_injected", "latency", "token_efficiency"}
    assert covered == {e.name for e in METRICS.entries()}  # no registered metric escapes an oracle


def test_a_run_value_is_the_mean_over_every_question():
    q = [QuestionRun(Question(id="a", query="", gold=("x",)), (("x",),), (1.0,), (3,), 1.0),
         QuestionRun(Question(id="b", query="", gold=()), (("y",),), (1.0,), (3,), 1.0)]
    assert m.RecallAnyAtK(k=1).value(RunResult("s", "d", 1, 0.0, 10, tuple(q))) == 0.5  # no gold: a miss that counts


@pytest.mark.parametrize("text, name", [
    ("recall_any@5", "recall_any@5"), ("R@5", "recall_any@5"), ("Recall@10", "recall_any@10"),
    ("RA@5", "recall_all@5"), ("RecallAll@10", "recall_all@10"), ("MRR", "mrr"), ("mrr@10", "mrr@10"),
    ("nDCG@10", "ndcg@10"), ("precision(rel=2)@5", "precision(rel=2)@5"), ("p95_ms", "latency_p95"),
    ("ndcg( judged_only=yes )@10", "ndcg(judged_only=true)@10"), ("Rprec", "r_precision"), ("hit@5", "hit@5"),
])
def test_one_spelling_and_its_aliases(text, name):
    assert m.parse(text).name == name and m.parse(name).name == name


def test_a_row_field_takes_the_row_k():
    assert m.parse("recall_at_k", 10).name == "recall_any@10" and m.parse("ndcg_at_k", 5).name == "ndcg@5"
    assert m.parse("mrr", 5).name == "mrr"  # memini's MRR: at the recalled depth, whatever K


@pytest.mark.parametrize("text, message", [
    ("recal_any@5", "unknown metric; did you mean recall_any@5?"),
    ("recall_fract@10", "did you mean recall_frac@10?"),
    ("ndgc@10", "did you mean ndcg@10?"),
    ("recall_any", "recall_any needs a cut-off; write recall_any@K"),
    ("r_precision@5", "r_precision takes no cut-off"),
    ("latency_p50@5", "a latency percentile takes no cut-off"),
    ("ndcg(rel=2)@5", "ndcg takes no parameter 'rel'"),
    ("mrr(judged_only=true)@5", "mrr takes no parameter 'judged_only'"),
    ("precision(rel=high)@5", "rel is a relevance grade"),
    ("recall_any@0", "the cut-off is a whole number >= 1"),
])
def test_bad_names_are_one_line_with_the_fix(text, message):
    with pytest.raises(BenchError, match=message) as exc:
        m.parse(text, flag="-metrics")
    assert "\n" not in str(exc.value) and str(exc.value).startswith(f"-metrics {text!r}: ")


def test_a_list_keeps_parameters_and_leaves_open_cutoffs_to_the_run():
    got = m.parse_list("recall_frac@5, precision(rel=2,judged_only=false)@3,recall_frac,mrr")
    assert [x.name for x in got] == ["recall_frac@5", "precision(rel=2)@3", "recall_frac", "mrr"]
    assert got[2].k is None and got[2].at(10).name == "recall_frac@10"


def test_the_listing_names_every_metric_with_its_formula():
    rows = m.listing()
    assert {r["name"].split("@")[0].split("[")[0] for r in rows} >= {"recall_any", "recall_frac", "ndcg_lme",
                                                                     "r_precision", "latency_pP"}
    assert all(r["formula"] and r["better"] in ("higher", "lower") for r in rows)
    text = m.listing_text()
    assert len(text.splitlines()) == len(rows) + 1 and "recall_frac@K" in text
