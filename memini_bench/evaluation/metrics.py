"""Scoring a run: every metric of ``core.metrics`` (the registered metric objects) over a RunResult, per K and per
category, as the results schema's ``Score`` rows.

A run's row at K holds the metrics of ``core.metrics.row_metrics``: the defaults (recall_any@K, recall_all@K, mrr,
ndcg@K, latency_p50, latency_p95, tokens_injected@K, token_efficiency@K) and any metric asked for by ``-metrics``
(``extra``), each at its cut-off by the one depth rule (``core.metrics.resolve_cutoff``: a name without ``@K``
takes the row's K where it needs a cut-off; ``mrr`` and ``ndcg`` without one are taken at the run's largest K);
each category's row holds ``core.metrics.category_metrics``. The formulas are on the metric classes
(``core.metrics``); each value is the mean over all questions (a question with no gold is a miss and still
counts), a latency percentile is taken over the questions' latencies, token_efficiency over the corpus's tokens.

``recall_any``, ``recall_all``, ``reciprocal_rank``, ``ndcg`` and ``percentile`` are the per-question values of the
same objects (for the evidence tables and the studies).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from memini_bench.core.metrics import (
    MRR,
    NDCG,
    Metric,
    RecallAllAtK,
    RecallAnyAtK,
    category_metrics,
    defaults,
    percentile,
    row_metrics,
)
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.results.schema import Score

__all__ = ["defaults", "ndcg", "percentile", "recall_all", "recall_any", "reciprocal_rank", "score", "score_all",
           "score_by_category"]


def recall_any(run: QuestionRun, k: int) -> float:
    return RecallAnyAtK(k=k).per_question(run)


def recall_all(run: QuestionRun, k: int) -> float:
    return RecallAllAtK(k=k).per_question(run)


def reciprocal_rank(run: QuestionRun) -> float:
    """The reciprocal rank at the recalled depth (``mrr``)."""
    return MRR().per_question(run)


def ndcg(run: QuestionRun, k: int) -> float:
    return NDCG(k=k).per_question(run)


def score(result: RunResult, k: int, extra: Sequence[Metric] = (), ks: Sequence[int] = ()) -> Score:
    """Every metric of ``row_metrics(k, ks, extra)`` over ``result`` at cut-off ``k``; ``ks`` is the run's K list
    (none given: the run's recalled depth stands for its largest K)."""
    ks = tuple(ks) or (max(k, result.depth),)
    values = {m.name: m.value(result) for m in row_metrics(k, ks, extra)}
    by_cat: dict[str, list[QuestionRun]] = {}
    for r in result.questions:
        if r.question.category:
            by_cat.setdefault(r.question.category, []).append(r)
    per_cat = category_metrics(k, ks, extra)
    categories = {}
    for c, runs in sorted(by_cat.items()):
        sub = dataclasses.replace(result, questions=tuple(runs))
        categories[c] = {m.name: m.value(sub) for m in per_cat}
    return Score(
        system=result.system, dataset=result.dataset, k=k, questions=len(result.questions), scores=values,
        categories=categories, per_category_questions={c: len(v) for c, v in sorted(by_cat.items())},
        ingest_ms=result.ingest_ms, leaked=result.leaked, model_load_ms=result.model_load_ms,
        embed_ms=result.embed_ms, store_ingest_ms=result.store_ingest_ms)


def score_by_category(result: RunResult, k: int, all_label: str = "all") -> dict[str, Score]:
    """``score`` of the questions of each non-empty category alone, and of every question under ``all_label``."""
    groups: dict[str, list[QuestionRun]] = {all_label: list(result.questions)}
    for r in result.questions:
        if r.question.category and r.question.category != all_label:
            groups.setdefault(r.question.category, []).append(r)
    return {cat: score(dataclasses.replace(result, questions=tuple(runs)), k) for cat, runs in groups.items()}


def score_all(results: Sequence[RunResult], ks: Sequence[int], extra: Sequence[Metric] = ()) -> list[Score]:
    """memini's order: per system (in run order), K ascending."""
    return [score(r, k, extra, ks) for r in results for k in sorted(ks)]
