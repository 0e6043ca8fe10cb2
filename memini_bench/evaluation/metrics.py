"""Scoring a run: every metric of ``core.metrics`` (the registered metric objects) over a RunResult, per K and per
category, as the results schema's ``Score`` rows.

A run's row at K holds the default metrics (``defaults``: recall_any@K, recall_all@K, mrr at the recalled depth,
ndcg@K, latency_p50, latency_p95, tokens_injected@K, token_efficiency@K) and any metric asked for by ``-metrics``
(``extra``: each at its own cut-off; one written without a cut-off where it needs one takes the row's K); each
category's row holds recall_any@K and recall_all@K and the asked-for metrics. The formulas are on the metric
classes (``core.metrics``); each value is the mean over all questions (a question with no gold is a miss and still
counts), a latency percentile is taken over the questions' latencies, token_efficiency over the corpus's tokens.

``recall_any``, ``recall_all``, ``reciprocal_rank``, ``ndcg`` and ``percentile`` are the per-question values of the
same objects (for the significance tests and the studies).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from memini_bench.core.metrics import (
    MRR,
    NDCG,
    Latency,
    Metric,
    RecallAll,
    RecallAny,
    TokenEfficiency,
    TokensInjected,
    at_depth,
    percentile,
)
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.results.schema import Score

__all__ = ["category_defaults", "defaults", "ndcg", "percentile", "recall_all", "recall_any", "reciprocal_rank",
           "score", "score_all", "score_by_category"]

def defaults(k: int) -> tuple[Metric, ...]:
    """The metrics of every row at K, in the order the results file lists them (mrr at the recalled depth)."""
    return (RecallAny(k=k), RecallAll(k=k), MRR(), NDCG(k=k), Latency(p=50), Latency(p=95), TokensInjected(k=k),
            TokenEfficiency(k=k))


def category_defaults(k: int) -> tuple[Metric, ...]:
    """The metrics of every category of a row at K."""
    return (RecallAny(k=k), RecallAll(k=k))


def recall_any(run: QuestionRun, k: int) -> float:
    return RecallAny(k=k).per_question(run)


def recall_all(run: QuestionRun, k: int) -> float:
    return RecallAll(k=k).per_question(run)


def reciprocal_rank(run: QuestionRun) -> float:
    """The reciprocal rank at the recalled depth (``mrr``)."""
    return MRR().per_question(run)


def ndcg(run: QuestionRun, k: int) -> float:
    return NDCG(k=k).per_question(run)


def _at(metrics: Sequence[Metric], k: int) -> list[Metric]:
    """Each asked-for metric at the row's K where it needs a cut-off and none was written (``recall_frac``); one
    written with its own ``@K``, or one whose cut-off is optional (``mrr``, ``ndcg``: the whole depth), keeps it."""
    return [m.at(k) if m.k is None and m.cutoff == "required" else m for m in metrics]


def score(result: RunResult, k: int, extra: Sequence[Metric] = (), *, ks: Sequence[int] = ()) -> Score:
    """Every default metric of ``result`` at cut-off ``k``, plus ``extra``; ``mrr`` (and any metric whose cut-off
    is optional, written without one) is taken at the largest of the run's ``ks`` (``core.metrics.at_depth``; no
    ``ks``: the whole ranking)."""
    values = {m.name: at_depth(m, ks).value(result) for m in dict.fromkeys([*defaults(k), *_at(extra, k)])}
    by_cat: dict[str, list[QuestionRun]] = {}
    for r in result.questions:
        if r.question.category:
            by_cat.setdefault(r.question.category, []).append(r)
    per_cat = [*category_defaults(k), *_at([m for m in extra if m.unit == "fraction"], k)]
    categories = {}
    for c, runs in sorted(by_cat.items()):
        sub = dataclasses.replace(result, questions=tuple(runs))
        categories[c] = {m.name: at_depth(m, ks).value(sub) for m in dict.fromkeys(per_cat)}
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
    return [score(r, k, extra, ks=ks) for r in results for k in sorted(ks)]
