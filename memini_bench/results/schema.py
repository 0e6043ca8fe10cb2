"""The results schema: the typed rows every results file is made of, written and read through the same classes.

- ``Score``: one (system, K) row of a run: every metric as a fraction in 0..1, latencies in ms (``evaluation.metrics``
  computes it; the normal run, the sweep cells and the peers' runs write it).
- ``RankRow``: one (strategy, category) row of a whole-list ranking (``-rerank`` and the re-rank tier).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Score:
    """One (system, K) row: every metric, as fractions in 0..1 (latencies in ms)."""

    system: str
    dataset: str
    k: int
    questions: int
    recall_at_k: float
    recall_all_at_k: float
    mrr: float
    ndcg_at_k: float
    p50_ms: float
    p95_ms: float
    ingest_ms: float
    tokens_injected_mean: float
    token_efficiency: float
    per_category: dict[str, float] = field(default_factory=dict)
    per_category_questions: dict[str, int] = field(default_factory=dict)
    per_category_all: dict[str, float] = field(default_factory=dict)
    #: hits of another group dropped before scoring (``-leaks count``), over every question of the run
    leaked: int = 0
    #: ``ingest_ms`` apart: loading the embedding model, embedding, and the store's own share (the rest)
    model_load_ms: float = 0.0
    embed_ms: float = 0.0
    store_ingest_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class RankRow:
    system: str
    category: str
    questions: int
    recall_at_1: float
    recall_at_k: float
    mrr: float
