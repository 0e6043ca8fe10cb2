"""``agentmemory`` and ``agentmemory-bm25``: agentmemory's published LongMemEval recipe on our items and vectors.

agentmemory (rohitg00/agentmemory) reports LongMemEval-S R@5 95.2 (BM25 + vector) and 86.2 (BM25 only) with
all-MiniLM-L6-v2 from its own harness. Followed, file by file:

- ``benchmark/longmemeval-bench.ts`` (fork nowwcastle-sudo/agentmemory @ f66df07641621b9901eea66d05f3c20433203379,
  with ``benchmark/LONGMEMEVAL.md``, the published table): a fresh index per question (here: per group); one
  observation per session whose ``title`` is the text's first 80 characters, ``narrative`` the text and ``type``
  "conversation", so the keyword side indexes ``title + "  " + text + " conversation"``; the first 512 characters
  of the text embedded; ``HybridSearch(bm25, vector, ..., 0.4, 0.6, 0.0, false)`` (graph weight 0, no re-rank)
  asked for 20 results (``search(question, 20)``); BM25 mode takes the keyword stream's top 20.
- ``src/state/hybrid-search.ts`` (rohitg00/agentmemory @ 038b573ef3801ec8a59c44a1c4d9b28fd0fad993, the same fusion
  as the fork's): each stream fetched ``2 x limit`` deep; with 1-based ranks r_s and weights w (BM25 0.4, vector
  0.6) over the streams that returned anything (``active``)::

      rrf(d)      = sum_s w_s / (60 + r_s(d))  /  (sum_{s active} w_s / 61)
      combined(d) = rrf(d) * (1 + 0.05 * (streams that found d - 1))

  sorted by combined descending, then the best single rank, then the id; then at most 3 per session (each
  observation is its own session in the benchmark, so this changes nothing) and the first ``limit``.
- ``src/state/vector-index.ts``: cosine similarity over the index (here the group's items).
- ``src/state/search-index.ts`` and ``src/state/stemmer.ts``: the BM25 stream (``agentmemory_text``).

Here: ``limit = max(k, 20)`` (its benchmark asks for 20, so the streams are 40 deep) and the first k are returned;
vectors come from the run's encoder (the first 512 characters of each item, as its benchmark embeds them; Python
slices code points where JS slices UTF-16 units); cosine ties keep item order. Departures: no synonym expansion
(see ``agentmemory_text``), and the item text is the suite's (LoCoMo's ``[date] speaker: text``, LongMemEval's
``role: content`` lines), where its benchmark joins a session's turns as ``role: content`` lines too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.retrieval.keyword import top_k
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.agentmemory_text import AgentMemoryBM25
from memini_bench.systems.peers.common import PeerSystem, require_encoder

RRF_K = 60.0
BM25_WEIGHT = 0.4
VECTOR_WEIGHT = 0.6
AGREEMENT_BONUS = 0.05
BENCH_LIMIT = 20  # longmemeval-bench.ts: hybridSearch.search(question, 20)
TITLE_CHARS = 80
EMBED_CHARS = 512


def observation_text(text: str) -> str:
    """What agentmemory's BM25 indexes for one benchmark observation: title, empty subtitle, narrative, type."""
    return " ".join([text[:TITLE_CHARS], "", text, "conversation"])


def fuse(bm25: Sequence[int], vector: Sequence[int], ids: Sequence[str]) -> list[tuple[int, float]]:
    """agentmemory's weighted RRF of two ranked lists of item numbers (``ids`` breaks the last ties)."""
    ranks: dict[int, list[float]] = {}
    for stream, ranked in enumerate((bm25, vector)):
        for rank, d in enumerate(ranked, start=1):
            ranks.setdefault(d, [float("inf"), float("inf")])[stream] = rank
    active = (BM25_WEIGHT if bm25 else 0.0) + (VECTOR_WEIGHT if vector else 0.0)
    best = active / (RRF_K + 1.0)
    scored = []
    for d, (rank_b, rank_v) in ranks.items():
        found = [(w, r) for w, r in ((BM25_WEIGHT, rank_b), (VECTOR_WEIGHT, rank_v)) if r != float("inf")]
        rrf = sum(w / (RRF_K + r) for w, r in found) / best
        scored.append((-rrf * (1.0 + AGREEMENT_BONUS * (len(found) - 1)), min(rank_b, rank_v), ids[d], d))
    scored.sort()
    return [(d, -neg) for neg, _, _, d in scored]


class AgentMemorySystem(PeerSystem):
    """agentmemory's BM25 + vector fusion (or its BM25 stream alone) per group (see the module docstring)."""

    def __init__(self, encoder: TextEncoder | None, name: str = "agentmemory", *, vector: bool = True) -> None:
        super().__init__(name, encoder)
        self.use_vector = vector
        self._bm25: dict[str, AgentMemoryBM25] = {}
        self._vectors: dict[str, np.ndarray] = {}

    def ingest(self, items: Sequence[Item]) -> None:
        self.keep_items(items)
        for group, members in self.groups.members.items():
            self._bm25[group] = AgentMemoryBM25([observation_text(self.items[i].content) for i in members.tolist()])
        if self.use_vector:
            assert self.encoder is not None
            vectors = np.asarray(self.encoder.documents([it.content[:EMBED_CHARS] for it in self.items]),
                                 dtype=np.float32)
            for group, members in self.groups.members.items():
                self._vectors[group] = vectors[members]

    def _cosine_top(self, group: str, query: str, depth: int) -> list[int]:
        assert self.encoder is not None
        mat = self._vectors[group]
        q = np.asarray(self.encoder.query(query), dtype=np.float32)
        denom = np.linalg.norm(mat, axis=1) * float(np.linalg.norm(q))
        cosine = np.divide(mat @ q, denom, out=np.zeros(len(mat), dtype=np.float32), where=denom > 0)
        local, _ = top_k(np.arange(len(mat)), cosine.astype(np.float64), depth)
        return local.tolist()

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        if group not in self._bm25 or k <= 0:
            return []
        members = self.groups.of(group)
        limit = max(k, BENCH_LIMIT)
        if not self.use_vector:
            ranked = self._bm25[group].search(query, limit)
        else:
            bm25 = [d for d, _ in self._bm25[group].search(query, 2 * limit)]
            vector = self._cosine_top(group, query, 2 * limit)
            ranked = fuse(bm25, vector, [self.items[i].id for i in members.tolist()])[:limit]
        return self.hits(group, [int(members[d]) for d, _ in ranked], [s for _, s in ranked], k)

    def describe(self) -> dict:
        info: dict[str, object] = {
            "recipe": "agentmemory benchmark/longmemeval-bench.ts + src/state/{hybrid-search,search-index,stemmer}.ts",
            "bm25": "agentmemory SearchIndex (k1 1.2, b 0.75, idf ln(1+(N-df+.5)/(df+.5)), prefix terms at 0.5 idf, "
                    "its stemmer, no synonyms), one index per group",
            "document": "title (first 80 chars) + text + 'conversation'", "limit": f"max(k, {BENCH_LIMIT})",
            "dropped_other_group": self.dropped_other_group}
        if self.use_vector:
            info.update(vector="cosine over the group, first 512 characters embedded", rrf_k=RRF_K,
                        weights={"bm25": BM25_WEIGHT, "vector": VECTOR_WEIGHT}, stream_depth="2 x limit",
                        agreement_bonus=AGREEMENT_BONUS)
        return info


def make(ctx: SystemContext) -> AgentMemorySystem:
    """``agentmemory``: BM25 + vector, weighted RRF."""
    return AgentMemorySystem(require_encoder(ctx, "agentmemory"), "agentmemory")


def make_bm25(ctx: SystemContext) -> AgentMemorySystem:
    """``agentmemory-bm25``: its BM25 stream alone (no embedder needed)."""
    return AgentMemorySystem(None, "agentmemory-bm25", vector=False)
