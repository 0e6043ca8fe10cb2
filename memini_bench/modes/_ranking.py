"""Scoring ranked candidate lists per strategy and category (memini ``bench/recency.go``: ``score``, ``finalize``,
``RerankMarkdown``), shared by ``-rerank`` and the rerank tier.

For one question, ``rank`` = the 0-based position of the first gold id in the strategy's whole ranked list
(-1 if absent). Per (strategy, category), over its questions:

    R@1 = mean(rank == 0)      R@K = mean(0 <= rank < K)      MRR = mean(1 / (rank + 1)), 0 on a miss

MRR is over the entire list (memini does not cut it at K). Every question also counts in the category
``all``; a question without a category counts only there. Rows: categories sorted, strategies in run order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memini_bench.metrics import gold_rank

ALL = "all"


@dataclass(frozen=True, slots=True)
class RankRow:
    system: str
    category: str
    questions: int
    recall_at_1: float
    recall_at_k: float
    mrr: float


class RankTally:
    """Accumulates ranks per (system, category) and turns them into RankRows."""

    def __init__(self, k: int) -> None:
        self.k = k
        self._ranks: dict[str, dict[str, list[int]]] = {}

    def add(self, system: str, category: str, ranked_ids: Iterable[str], gold: Iterable[str]) -> int:
        rank = gold_rank([(i,) for i in ranked_ids], gold)
        by_cat = self._ranks.setdefault(system, {})
        for cat in {category, ALL} - {""}:
            by_cat.setdefault(cat, []).append(rank)
        return rank

    def rows(self) -> list[RankRow]:
        categories = sorted({c for by_cat in self._ranks.values() for c in by_cat})
        out = []
        for cat in categories:
            for system, by_cat in self._ranks.items():
                ranks = by_cat.get(cat, [])
                n = len(ranks)
                out.append(RankRow(system, cat, n,
                                   sum(r == 0 for r in ranks) / n if n else 0.0,
                                   sum(0 <= r < self.k for r in ranks) / n if n else 0.0,
                                   sum(1.0 / (r + 1) for r in ranks if r >= 0) / n if n else 0.0))
        return out


def markdown(rows: Sequence[RankRow], k: int, title: str, labels: dict[str, str] | None = None) -> str:
    """memini's RerankMarkdown table (``title`` replaces its heading's subject)."""
    labels = labels or {}
    out = [f"## {title} (recall@1 / recall@{k} / MRR)", "", "| Category | System | Q | R@1 | R@K | MRR |",
           "|---|---|--:|--:|--:|--:|"]
    for r in rows:
        cat = f"{r.category} ({labels[r.category]})" if r.category in labels else r.category
        out.append(f"| {cat} | {r.system} | {r.questions} | {r.recall_at_1 * 100:.1f}% | "
                   f"{r.recall_at_k * 100:.1f}% | {r.mrr * 100:.1f}% |")
    return "\n".join(out) + "\n"


def as_dicts(rows: Sequence[RankRow]) -> list[dict]:
    return [dataclasses.asdict(r) for r in rows]
