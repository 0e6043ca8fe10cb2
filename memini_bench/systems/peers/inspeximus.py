"""``inspeximus``: the inspeximus memory store (PyPI ``inspeximus``, DanceNitra/inspeximus), a claimant of corrections:
"correct a fact once and the retired value stops coming back, by key, with no LLM in the loop" (its README; the
claim is in ``memini_bench/report/claims.json``).

One in-memory ``Inspeximus(None, embed=..., embed_query=...)`` store on the run's encoder (documents for writes,
queries for recall), every group its ``user_id``:

- ``ingest``: ``remember(text, key=<item id>, valid_from=<item time>, user_id=<group>)`` per item (each call adds;
  every memory gets its own supersession key, so a later correction can name it);
- ``update(item)``: ``remember(item text, key=<the key of the first superseded memory>, valid_from=<its time>)``,
  inspeximus's own correction (the keyed write retires the value, "with no similarity threshold"), and
  ``retire(key)`` of every other superseded memory's key;
- ``forget(id)``: ``forget(ids=[memory id])``;
- ``recall``: ``recall(query, k, user_id=<group>, as_of=<now>)``: inspeximus's bi-temporal read at the question's
  time (``now``; none: the current values); its scores as returned.

Library defaults otherwise (its decay, value ranking, echo guard); nothing is written to disk or home.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np
from inspeximus import Inspeximus

from memini_bench.core.contract import Hit, superseded
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, library_version, require_encoder


class InspeximusSystem(PeerSystem):
    """inspeximus over the items (see the module docstring)."""

    incremental_ingest = True

    def __init__(self, name: str, encoder: TextEncoder) -> None:
        super().__init__(name, encoder)
        self.store: Inspeximus | None = None
        self.memory_of: dict[str, str] = {}  # item id -> memory id
        self.item_of: dict[str, str] = {}    # memory id -> item id
        self.key_of: dict[str, str] = {}     # item id -> supersession key

    def _store(self) -> Inspeximus:
        if self.store is None:
            encoder = self.encoder
            assert encoder is not None
            self.store = Inspeximus(None, embed=lambda text: np.asarray(encoder.documents([text])[0]).tolist(),
                                    embed_query=lambda text: np.asarray(encoder.query(text)).tolist())
        return self.store

    def _remember(self, item: Item, key: str) -> None:
        store = self._store()
        memory = store.remember(item.content, key=key, user_id=item.group,
                                valid_from=item.time.timestamp() if item.time is not None else None)
        self.memory_of[item.id], self.item_of[memory], self.key_of[item.id] = memory, item.id, key

    def ingest(self, items: Sequence[Item]) -> None:
        rows = self.add_items(items)
        if not rows:
            return
        assert self.encoder is not None
        self.encoder.documents([self.items[i].content for i in rows])  # one batch; inspeximus then reads the cache
        for i in rows:
            self._remember(self.items[i], f"item:{self.items[i].id}")

    def update(self, item: Item) -> None:
        old = [i for i in superseded(item) if i in self.key_of]
        if not old or item.id in self.key_of:
            self.ingest((item,))
            return
        self.add_items((item,))
        self._remember(item, self.key_of[old[0]])
        for other in old[1:]:
            if self.key_of[other] != self.key_of[old[0]]:
                self._store().retire(self.key_of[other], reason="superseded")

    def forget(self, item_id: str) -> None:
        memory = self.memory_of.pop(item_id, None)
        if memory is not None:
            self._store().forget(ids=[memory])

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        if k <= 0 or self.store is None or group not in self.groups.members or not query.strip():
            return []
        found = self.store.recall(query, k=k, user_id=group, as_of=now.timestamp() if now is not None else None)
        out: list[Hit] = []
        for memory in found:
            item_id = self.item_of.get(str(memory.get("id")))
            if item_id is None or self.items[self.index(item_id)].group != group:
                self.dropped_other_group += 1
                continue
            out.append(Hit((item_id,), float(memory.get("score") or 0.0), str(memory.get("text", ""))))
        return out[:k]

    def index(self, item_id: str) -> int:
        if len(getattr(self, "_index", {})) != len(self.items):
            self._index = {it.id: i for i, it in enumerate(self.items)}
        return self._index[item_id]

    def describe(self) -> dict:
        return {"library": "inspeximus", "version": library_version("inspeximus"),
                "store": "Inspeximus(None): in memory", "embedder": "the run's encoder (documents, queries)",
                "keys": "one per item; update writes the superseded memory's key, retire() the others",
                "groups": "user_id", "recall": "recall(query, k, user_id, as_of=now)",
                "dropped_other_group": self.dropped_other_group}

    def close(self) -> None:
        self.store = None
        super().close()


def make(ctx: SystemContext) -> InspeximusSystem:
    return InspeximusSystem("inspeximus", require_encoder(ctx, "inspeximus"))
