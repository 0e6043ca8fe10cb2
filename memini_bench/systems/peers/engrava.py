"""``engrava``: Engrava (sovantica/engrava, MIT), its hybrid recall (SQLite FTS5 BM25 + vector similarity +
recency + priority, weighted), one store per group, over the run's shared vectors.

Engrava publishes no retrieval figure of its own (its LongMemEval harness reports end-to-end QA), so this is a
library adapter, not a claim check.

- Store: ``SqliteEngravaCore`` on an ``aiosqlite`` connection to ``<temp folder>/group-<n>.db``, one per group,
  ``ensure_schema()``; every item is ``remember(text, metadata={"row": i})`` (a NOTE thought, priority P3,
  essence = its first 200 characters) and ``store_embedding(thought_id, vector)`` with the run's document vector,
  all of a group inside one ``suspend_auto_commit()`` window (its bulk-write form: one commit per group instead of
  one per call, about 15x faster here, same rows).
- Recall: ``search_hybrid(query, query_vector=<the run's query vector>, top_k=k)``, which is what ``recall()`` runs
  with the store's default ``SearchConfig`` (``recall`` takes no vector; with one given the store embeds nothing):
  FTS5 BM25 min-max normalised over its candidates (``fts_top_k`` 50) weight 0.30, cosine (``vector_top_k`` 50,
  its built-in NumPy backend: exact) 0.55, priority 0.05 (every item P3), recency 0.10 and graph 0.00 (no cycle
  and no ``recency_now`` are given, so recency is off and its weight redistributed, as Engrava documents). A query
  FTS5 cannot parse falls back to Engrava's sanitised bare-word query (its own retry).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import aiosqlite
import numpy as np
from engrava import SqliteEngravaCore
from engrava.config import SearchConfig

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import AsyncPeerSystem, library_version, require_encoder

CONFIG = SearchConfig()  # the store's defaults (a store built without one ranks with the same), for describe()


class EngravaSystem(AsyncPeerSystem):
    """Engrava's SQLite store per group, recalled by its weighted hybrid search."""

    def __init__(self, name: str, encoder: TextEncoder) -> None:
        super().__init__(name, encoder)
        self.stores: dict[str, tuple[aiosqlite.Connection, SqliteEngravaCore]] = {}
        self.row_of: dict[str, int] = {}

    def ingest(self, items: Sequence[Item]) -> None:
        self.keep_items(items)
        assert self.encoder is not None
        vectors = np.asarray(self.encoder.documents([it.content for it in self.items]), dtype=np.float32)
        with self.store_writes():
            for n, (group, members) in enumerate(self.groups.members.items()):
                self.stores[group] = self._run(self._fill(str(self.workdir() / f"group-{n}.db"), members, vectors))

    async def _fill(self, path: str, members: np.ndarray, vectors: np.ndarray):
        conn = await aiosqlite.connect(path)
        conn.row_factory = aiosqlite.Row
        store = SqliteEngravaCore(conn)
        await store.ensure_schema()
        model = str(getattr(self.encoder.embedder, "identity", "run-encoder"))
        async with store.suspend_auto_commit():
            for i in members:
                thought = await store.remember(self.items[int(i)].content, metadata={"row": int(i)})
                await store.store_embedding(thought.thought_id, vectors[int(i)].tolist(), model_name=model)
                self.row_of[thought.thought_id] = int(i)
        return conn, store

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        entry = self.stores.get(group)
        if k <= 0 or entry is None:
            return []
        assert self.encoder is not None
        vector = np.asarray(self.encoder.query(query), dtype=np.float32).tolist()
        found = self._run(entry[1].search_hybrid(query, query_vector=vector, top_k=k)).results
        return self.hits(group, [self.row_of[t] for t, _ in found], [float(s) for _, s in found], k)

    def describe(self) -> dict:
        return {"library": "engrava", "version": library_version("engrava"),
                "store": "SqliteEngravaCore, one SQLite file per group in the run's temp folder",
                "recall": "search_hybrid(query, query_vector, top_k=k) with the default SearchConfig (= recall())",
                "weights": {"fts": CONFIG.default_fts_weight, "vector": CONFIG.default_vector_weight,
                            "priority": CONFIG.default_priority_weight, "graph": CONFIG.default_graph_weight,
                            "recency": f"{CONFIG.default_recency_weight}, off (no cycle or recency_now given; "
                                       "redistributed)"},
                "fts_top_k": 50, "vector_top_k": 50, "vector_backend": "built-in NumPy cosine (exact)",
                "thought": "remember(): NOTE, priority P3", "dropped_other_group": self.dropped_other_group}

    def close(self) -> None:
        for conn, store in self.stores.values():
            self._run(store.close())  # flushes its buffers; the connection is ours, so close it too
            self._run(conn.close())
        self.stores = {}
        super().close()


def make(ctx: SystemContext) -> EngravaSystem:
    """``engrava``: Engrava's hybrid recall (FTS5 + vector, weighted) on the run's vectors, one store per group."""
    return EngravaSystem("engrava", require_encoder(ctx, "engrava"))
