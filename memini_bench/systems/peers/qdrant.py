"""``qdrant``, ``qdrant-bm25`` and ``qdrant-hybrid``: Qdrant's local mode (qdrant-client, in process, in memory)
over the run's shared vectors.

Local mode is qdrant-client's own Python implementation of the server's API (``QdrantClient(":memory:")``:
nothing is written to disk, no server, no network). It has no HNSW graph: a dense query computes every point's
score, so search is exact.

**One collection per group.** Local mode keeps no payload indexes, so a payload filter (``group == g``, Qdrant's
usual multi-tenancy) is evaluated point by point in Python: measured at LoCoMo size (5,882 points, 384 dims)
about 270 ms a dense query and 430 ms a text query, against about 2 and 20 ms on a group's own collection. A
collection per tenant is the other layout Qdrant documents; here it also makes isolation hold by construction.
Collections are named ``g<n>`` (the n-th group), so any group name is safe.

- ``qdrant``: dense search, ``Distance.COSINE`` (Qdrant normalizes stored vectors; the score is the cosine).
- ``qdrant-bm25``: Qdrant's BM25 text query (``TextQuery``) over a full-text payload index with ``scoring``
  BM25 on the item text, the only text index local mode can rank with: the ``word`` tokenizer (split on
  non-alphanumerics), lower case, **no stemming and no stop words** (local mode refuses other tokenizations).
  Scores with Qdrant's defaults k1 1.2, b 0.75::

      idf(t)   = ln(1 + (N - df_t + 0.5) / (df_t + 0.5))      N = the collection's points holding any token
      score(d) = sum_t idf(t) * tf_td * (k1 + 1) / (tf_td + k1 * (1 - b + b * |d| / avgdl))

  with the statistics of the group's collection (a query term counts once).
- ``qdrant-hybrid``: the Query API's hybrid: two prefetches (dense, BM25), each ``limit = k`` (the least the
  docs allow for a main query of limit k), fused by ``FusionQuery(Fusion.RRF)`` with Qdrant's default constant
  (k 2: ``score = sum 1 / (rank0 + 2)``, rank0 the 0-based position in a leg).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np
from qdrant_client import QdrantClient, models
from qdrant_client.hybrid.fusion import DEFAULT_RANKING_CONSTANT_K
from qdrant_client.local.bm25 import DEFAULT_B, DEFAULT_K1

from memini_bench.core.contract import Hit, superseded
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, library_version, require_encoder

MODES = ("dense", "bm25", "hybrid")
DENSE = "dense"  # the named dense vector
TEXT = "text"  # the payload field holding the item text (and its BM25 index)
UPSERT_BATCH = 256
TEXT_INDEX = models.TextIndexParams(type=models.TextIndexType.TEXT, tokenizer=models.TokenizerType.WORD,
                                    lowercase=True,
                                    scoring=models.TextScoringParams(type=models.TextScoringType.BM25))


class QdrantSystem(PeerSystem):
    """Qdrant local mode, one in-memory collection per group: dense, BM25 text query, or RRF of both (``mode``).
    Writes over time: each ingest upserts, ``forget`` deletes the point, ``update`` deletes and upserts."""

    incremental_ingest = True

    def __init__(self, name: str, mode: str, encoder: TextEncoder | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: use one of {MODES}")
        super().__init__(name, encoder if mode != "bm25" else None)
        self.mode = mode
        self.client: QdrantClient | None = None
        self.collections: dict[str, str] = {}  # group -> collection name

    def ingest(self, items: Sequence[Item]) -> None:
        """Upsert the items not written before (each call adds: writes over time), a collection per new group."""
        rows = self.add_items(items)
        if not rows:
            return
        if self.client is None:
            self.client = QdrantClient(location=":memory:")
        vectors = None
        if self.encoder is not None:
            vectors = np.asarray(self.encoder.documents([self.items[i].content for i in rows]), dtype=np.float32)
        by_group: dict[str, list[int]] = {}
        for n, i in enumerate(rows):
            by_group.setdefault(self.items[i].group, []).append(n)
        for group, positions in by_group.items():
            collection = self.collections.get(group)
            if collection is None:
                collection = self.collections[group] = f"g{len(self.collections)}"
                dense = {DENSE: models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE)} \
                    if vectors is not None else {}
                self.client.create_collection(collection, vectors_config=dense)
                if self.mode != "dense":
                    self.client.create_payload_index(collection, TEXT, TEXT_INDEX)
            points = [models.PointStruct(id=rows[n], payload={TEXT: self.items[rows[n]].content},
                                         vector={DENSE: vectors[n].tolist()} if vectors is not None else {})
                      for n in positions]
            for start in range(0, len(points), UPSERT_BATCH):
                self.client.upsert(collection, points[start:start + UPSERT_BATCH], wait=True)

    def forget(self, item_id: str) -> None:
        """``delete`` of the item's point (none: a no-op)."""
        for i, it in enumerate(self.items):
            if it.id == item_id and self.client is not None and it.group in self.collections:
                self.client.delete(self.collections[it.group], points_selector=models.PointIdsList(points=[i]),
                                   wait=True)

    def update(self, item: Item) -> None:
        """The correction's point in place of the superseded items' points (delete, then upsert)."""
        for old in superseded(item):
            self.forget(old)
        self.ingest((item,))

    def _dense(self, query: str) -> list[float]:
        assert self.encoder is not None
        return np.asarray(self.encoder.query(query), dtype=np.float32).tolist()

    def _points(self, collection: str, query: str, k: int) -> list[models.ScoredPoint]:
        assert self.client is not None, "ingest first"
        if self.mode == "dense":
            found = self.client.query_points(collection, query=self._dense(query), using=DENSE, limit=k)
        elif self.mode == "bm25":
            found = self.client.query_points(collection, query=models.TextQuery(text=query), using=TEXT, limit=k)
        else:
            legs = [models.Prefetch(query=self._dense(query), using=DENSE, limit=k),
                    models.Prefetch(query=models.TextQuery(text=query), using=TEXT, limit=k)]
            found = self.client.query_points(collection, prefetch=legs,
                                             query=models.FusionQuery(fusion=models.Fusion.RRF), limit=k)
        return found.points

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        collection = self.collections.get(group)
        if collection is None or k <= 0:
            return []
        points = self._points(collection, query, k)
        return self.hits(group, [int(p.id) for p in points], [float(p.score) for p in points], k)

    def describe(self) -> dict:
        out: dict[str, object] = {"library": "qdrant-client", "version": library_version("qdrant-client"),
                                  "mode": self.mode, "store": "local mode, in memory (exact search)",
                                  "groups": "one collection per group"}
        if self.mode != "bm25":
            out["dense"] = "Distance.COSINE"
        if self.mode != "dense":
            out["text_index"] = {"tokenizer": "word", "lowercase": True, "stemmer": None, "stopwords": None,
                                 "scoring": "bm25", "k1": DEFAULT_K1, "b": DEFAULT_B}
        if self.mode == "hybrid":
            out["fusion"] = f"FusionQuery(RRF), k {DEFAULT_RANKING_CONSTANT_K}, each prefetch limit k"
        out["dropped_other_group"] = self.dropped_other_group
        return out

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        super().close()


def make(ctx: SystemContext) -> QdrantSystem:
    """``qdrant``: dense cosine search in the group's local-mode collection (exact)."""
    return QdrantSystem("qdrant", "dense", require_encoder(ctx, "qdrant"))


def make_bm25(ctx: SystemContext) -> QdrantSystem:
    """``qdrant-bm25``: Qdrant's BM25 text query (word tokenizer, lower case, no stemming, no stop words)."""
    return QdrantSystem("qdrant-bm25", "bm25")


def make_hybrid(ctx: SystemContext) -> QdrantSystem:
    """``qdrant-hybrid``: dense and BM25 prefetches fused by Qdrant's RRF."""
    return QdrantSystem("qdrant-hybrid", "hybrid", require_encoder(ctx, "qdrant-hybrid"))
