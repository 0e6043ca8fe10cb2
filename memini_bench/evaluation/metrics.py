"""Metrics: pure functions of a RunResult.

For one question with gold set G (unique ids), ranked hits h_0, h_1, ... and ``rank`` = the 0-based position of
the first hit whose ids meet G (-1 if none within the recalled depth):

- recall_any@K = 1 if 0 <= rank < K                 (memini's Recall@K; any single gold counts)
- recall_all@K = 1 if every gold id is in the top K  (beyond memini)
- MRR          = 1 / (rank + 1), 0 on a miss, at the recalled depth (max K), the same for every K
- nDCG@K       = DCG@K / IDCG@K with binary gains: DCG@K = sum_{r < K, h_r brings a new gold id} 1 / log2(r + 2),
                 IDCG@K = sum_{r < min(K, |G|)} 1 / log2(r + 2)   (0 when G is empty)
Each is averaged over all questions (a question with no gold is a miss and still counts).

- latency p50/p95: memini's floor-index percentile ``sorted(xs)[floor(p * (n - 1) / 100)]``
- tokens_injected_mean@K: mean over questions of the estimated tokens ((bytes + 3) // 4) of the top-min(K, n) hits
- token_efficiency@K: tokens_injected_mean@K / estimated tokens of the whole corpus (0 for an empty corpus)
- per_category: recall_any@K per non-empty category (and its question count); per_category_all: recall_all@K
- score_by_category: every metric on each category's questions alone (plus an all-questions row)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from memini_bench.core.runs import QuestionRun, RunResult, first_gold_rank
from memini_bench.results.schema import Score


def _hit_within(rank: int, k: int) -> float:
    return 1.0 if 0 <= rank < k else 0.0


def _reciprocal(rank: int) -> float:
    return 1.0 / (rank + 1) if rank >= 0 else 0.0


def recall_any(run: QuestionRun, k: int) -> float:
    return _hit_within(first_gold_rank(run), k)


def recall_all(run: QuestionRun, k: int) -> float:
    return _hit_within(_GoldProfile.of(run).complete, k)


def reciprocal_rank(run: QuestionRun) -> float:
    return _reciprocal(first_gold_rank(run))


def ndcg(run: QuestionRun, k: int) -> float:
    return _GoldProfile.of(run).ndcg(k)


def percentile(xs: Sequence[float], p: float) -> float:
    """memini's percentile: sort, take index ``floor(p * (n - 1) / 100)``; 0 for no values."""
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[int(p * (len(s) - 1) // 100)]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


@dataclass(frozen=True, slots=True)
class _GoldProfile:
    """Where one question's gold ids appear in its ranking, found in one pass at the recalled depth: the first
    gold rank (-1: none), the ranks that credit at least one new gold id (nDCG's gains), the rank at which every
    gold id has been seen (-1: never; recall_all@K is ``0 <= complete < K``) and the number of gold ids."""

    first: int
    credits: tuple[int, ...]
    complete: int
    golds: int

    @staticmethod
    def of(run: QuestionRun) -> _GoldProfile:
        gold = set(run.question.gold)
        credited: set[str] = set()
        credits: list[int] = []
        complete = -1
        for r, ids in enumerate(run.ranked_ids):
            new = (gold - credited).intersection(ids)
            if new:
                credited |= new
                credits.append(r)
                if len(credited) == len(gold):
                    complete = r
                    break
        return _GoldProfile(credits[0] if credits else -1, tuple(credits), complete, len(gold))

    def ndcg(self, k: int) -> float:
        """``ndcg(run, k)``, term for term in the same order."""
        if not self.golds:
            return 0.0
        dcg = 0.0
        for r in self.credits:
            if r >= k:
                break
            dcg += 1.0 / math.log2(r + 2)
        return dcg / sum(1.0 / math.log2(r + 2) for r in range(min(k, self.golds)))


def score(result: RunResult, k: int) -> Score:
    """All metrics of ``result`` at cut-off ``k`` (MRR at the run's depth)."""
    return _score(result, k, [_GoldProfile.of(r) for r in result.questions])


def _score(result: RunResult, k: int, profiles: Sequence[_GoldProfile]) -> Score:
    """``score`` from each question's gold profile (one pass per question serves every K and every metric, with
    the same values as ``recall_any``, ``recall_all``, ``reciprocal_rank`` and ``ndcg``)."""
    runs = result.questions
    hit_any = [_hit_within(p.first, k) for p in profiles]
    hit_all = [_hit_within(p.complete, k) for p in profiles]
    latencies = [r.latency_ms for r in runs]
    injected = _mean([sum(r.tokens[:k]) for r in runs])
    by_cat: dict[str, list[float]] = {}
    by_cat_all: dict[str, list[float]] = {}
    for r, any_, all_ in zip(runs, hit_any, hit_all, strict=True):
        if r.question.category:
            by_cat.setdefault(r.question.category, []).append(any_)
            by_cat_all.setdefault(r.question.category, []).append(all_)
    return Score(
        system=result.system, dataset=result.dataset, k=k, questions=len(runs),
        recall_at_k=_mean(hit_any),
        recall_all_at_k=_mean(hit_all),
        mrr=_mean([_reciprocal(p.first) for p in profiles]),
        ndcg_at_k=_mean([p.ndcg(k) for p in profiles]),
        p50_ms=percentile(latencies, 50), p95_ms=percentile(latencies, 95), ingest_ms=result.ingest_ms,
        tokens_injected_mean=injected,
        token_efficiency=injected / result.corpus_tokens if result.corpus_tokens else 0.0,
        per_category={c: _mean(v) for c, v in sorted(by_cat.items())},
        per_category_questions={c: len(v) for c, v in sorted(by_cat.items())},
        per_category_all={c: _mean(v) for c, v in sorted(by_cat_all.items())},
        leaked=result.leaked, model_load_ms=result.model_load_ms, embed_ms=result.embed_ms,
        store_ingest_ms=result.store_ingest_ms,
    )


def score_by_category(result: RunResult, k: int, all_label: str = "all") -> dict[str, Score]:
    """``score`` of the questions of each non-empty category alone, and of every question under ``all_label``."""
    groups: dict[str, list[QuestionRun]] = {all_label: list(result.questions)}
    for r in result.questions:
        if r.question.category and r.question.category != all_label:
            groups.setdefault(r.question.category, []).append(r)
    return {cat: score(dataclasses.replace(result, questions=tuple(runs)), k) for cat, runs in groups.items()}


def score_all(results: Sequence[RunResult], ks: Sequence[int]) -> list[Score]:
    """memini's order: per system (in run order), K ascending (each question's gold profile found once)."""
    out = []
    for r in results:
        profiles = [_GoldProfile.of(q) for q in r.questions]
        out += [_score(r, k, profiles) for k in sorted(ks)]
    return out
