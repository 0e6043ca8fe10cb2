"""``chroma``: Chroma (chromadb, embedded ``PersistentClient`` on the system's temporary folder) as a vector
memory over the run's shared vectors.

Each group gets its own collection (``group-<n>``, the n-th group: Chroma restricts collection names), created
with ``embedding_function=None`` and filled with the run's document vectors (``embeddings=``): Chroma's default
embedding function downloads an ONNX model on first use, and the comparison needs the run's vectors anyway.

Exactness. Chroma has no flat index: every collection is an HNSW graph, approximate by design. Two ways were
measured on LoCoMo turn level (MiniLM, 1,982 questions, top 10 against memini-vector's exact lists):

- one collection, the group as ``where={"grp": group}``: Chroma's defaults (``ef_search`` 100,
  ``ef_construction`` 100, ``max_neighbors`` 16) changed 28 lists in one run; ``ef_search`` 689 (the largest
  group) or even 2,000 still changed 0 to 4 lists a run: a filtered HNSW search stops once the next candidate is
  farther than the worst allowed point found, whatever ``ef_search`` is;
- **a collection per group** (used here) with ``ef_search = max(100, the group's size)``: 0 lists changed in
  every run (with the default 100: 16 to 23). An unfiltered HNSW search stops only when its result list holds
  ``ef_search`` points and no closer candidate is left; a list that can hold the whole group never fills early,
  so the search walks the group's whole graph and returns the exact top k.

The graph is built on several threads, so an approximate setting's losses vary run to run. The space is ``l2``
(Chroma's default: the squared distance d²); the hit's score is ``1 / (1 + d)``, memini-vector's scale.
Telemetry is off (``Settings(anonymized_telemetry=False)``); the client is closed and its folder removed in
``close()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import chromadb
import numpy as np
from chromadb.config import Settings

from memini_bench.core.contract import Hit, superseded
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, library_version, require_encoder

DEFAULT_EF_SEARCH = 100  # Chroma's default, the floor of ours
SPACE = "l2"


class ChromaSystem(PeerSystem):
    """Chroma, one collection per group, each with ``ef_search`` >= its size (exact, see the module docstring).
    Writes over time: each ingest adds, ``forget`` deletes, ``update`` deletes and adds."""

    incremental_ingest = True

    def __init__(self, name: str, encoder: TextEncoder) -> None:
        super().__init__(name, encoder)
        self.client: chromadb.ClientAPI | None = None
        self.collections: dict[str, chromadb.Collection] = {}
        self.ef_search: dict[str, int] = {}

    @staticmethod
    def exact_ef_search(size: int) -> int:
        """``max(DEFAULT_EF_SEARCH, size)``: a result list that can hold the whole group."""
        return max(DEFAULT_EF_SEARCH, size)

    def ingest(self, items: Sequence[Item]) -> None:
        """Add the items not written before (each call adds: writes over time), a collection per new group; a
        group that grows past its ``ef_search`` gets a larger one (``modify``), so search stays exact."""
        rows = self.add_items(items)
        if not rows:
            return
        assert self.encoder is not None
        vectors = np.asarray(self.encoder.documents([self.items[i].content for i in rows]), dtype=np.float32)
        by_group: dict[str, list[int]] = {}
        for n, i in enumerate(rows):
            by_group.setdefault(self.items[i].group, []).append(n)
        with self.store_writes():
            if self.client is None:
                self.client = chromadb.PersistentClient(path=str(self.workdir() / "chroma"),
                                                        settings=Settings(anonymized_telemetry=False))
            batch = self.client.get_max_batch_size()
            for group, positions in by_group.items():
                ef = self.exact_ef_search(len(self.groups.of(group)))
                collection = self.collections.get(group)
                if collection is None:
                    collection = self.collections[group] = self.client.create_collection(
                        f"group-{len(self.collections)}", embedding_function=None,
                        configuration={"hnsw": {"space": SPACE, "ef_search": ef}})
                elif ef > self.ef_search[group]:
                    collection.modify(configuration={"hnsw": {"ef_search": ef}})
                self.ef_search[group] = ef
                for start in range(0, len(positions), batch):
                    chunk = positions[start:start + batch]
                    collection.add(ids=[str(rows[n]) for n in chunk], embeddings=vectors[chunk])

    def forget(self, item_id: str) -> None:
        """``collection.delete`` of the item (none: a no-op)."""
        for i, it in enumerate(self.items):
            if it.id == item_id and it.group in self.collections:
                with self.store_writes():
                    self.collections[it.group].delete(ids=[str(i)])

    def update(self, item: Item) -> None:
        """The correction in place of the superseded items (delete, then add)."""
        for old in superseded(item):
            self.forget(old)
        self.ingest((item,))

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        collection = self.collections.get(group)
        if collection is None or k <= 0:
            return []
        assert self.encoder is not None
        vector = np.asarray(self.encoder.query(query), dtype=np.float32)[None, :]
        found = collection.query(query_embeddings=vector, n_results=min(k, collection.count()),
                                 include=["distances"])
        rows = [int(i) for i in found["ids"][0]]
        distances = np.maximum(np.asarray(found["distances"][0], dtype=np.float64), 0.0)
        return self.hits(group, rows, 1.0 / (1.0 + np.sqrt(distances)), k)

    def describe(self) -> dict:
        return {"library": "chromadb", "version": library_version("chromadb"),
                "client": "PersistentClient (temporary folder), anonymized_telemetry off",
                "embedding_function": None, "groups": "one collection per group", "space": SPACE,
                "ef_search": f"max({DEFAULT_EF_SEARCH}, group size)",
                "ef_search_max": max(self.ef_search.values(), default=DEFAULT_EF_SEARCH),
                "ef_construction": "default (100)", "max_neighbors": "default (16)", "score": "1/(1+L2)",
                "dropped_other_group": self.dropped_other_group}

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
            self.collections = {}
        super().close()


def make(ctx: SystemContext) -> ChromaSystem:
    """``chroma``: Chroma HNSW, one collection per group with ``ef_search`` >= its size (exact), L2."""
    return ChromaSystem("chroma", require_encoder(ctx, "chroma"))
