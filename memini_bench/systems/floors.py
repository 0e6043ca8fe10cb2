"""Floors: systems every memory system should beat, each with its own row.

- ``recent-k``: the last k items of the question's group by time, ignoring the query (an agent that keeps the
  most recent turns in its window). Items are ordered by ``Item.time`` (an item with no time takes the time of the
  item before it in the data set, so undated items keep file order), ties by data set order; when the question
  has a date (``now``), items after it are left out. The most recent comes first, score ``1 / (rank + 1)``.
- ``random``: k items of the group drawn uniformly without replacement, ignoring the query, from a generator
  seeded by SHA-256 of ``seed``, the group and the query, so a rerun ranks exactly the same (the seed is in
  ``describe()``, hence in the results identity). Score ``1 / (rank + 1)``.

Neither reads the query, so their scores say how far a system is above chance and above "keep the latest".
Written over time (docs/temporal.md) each ingest call adds; neither has ``update`` or ``forget`` (a correction is
kept beside the value it corrects, a forget is not honoured): they are the floor of a store that never deletes.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from datetime import datetime

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.systems.context import SystemContext

#: The ``random`` floor's seed (recorded in its ``describe()``).
SEED = 0


def _by_group(items: Sequence[Item]) -> dict[str, list[Item]]:
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.group, []).append(item)
    return groups


def time_ordered(items: Sequence[Item]) -> dict[str, list[tuple[datetime | None, Item]]]:
    """Each group's items oldest first, with the time each is ordered by: an item with no time takes the time of
    the item before it in the data set (undated items at the start come first), ties by data set order."""
    out: dict[str, list[tuple[datetime | None, Item]]] = {}
    for group, members in _by_group(items).items():
        dated: list[tuple[datetime | None, Item]] = []
        last: datetime | None = None
        for item in members:
            last = item.time if item.time is not None else last
            dated.append((last, item))
        order = sorted(range(len(dated)), key=lambda i: (dated[i][0] is not None, dated[i][0] or datetime.min, i))
        out[group] = [dated[i] for i in order]
    return out


def not_after(t: datetime | None, now: datetime | None) -> bool:
    """Whether time ``t`` is not after ``now`` (true when either is unknown; a naive time takes ``now``'s zone)."""
    if t is None or now is None:
        return True
    if (t.tzinfo is None) != (now.tzinfo is None):
        t = t.replace(tzinfo=now.tzinfo)
    return t <= now


class RecentK:
    """The last k items of the group by time (see the module docstring)."""

    name = "recent-k"
    incremental_ingest = True

    def __init__(self) -> None:
        self._groups: dict[str, list[tuple[datetime | None, Item]]] = {}
        self._items: list[Item] = []

    def ingest(self, items: Sequence[Item]) -> None:
        self._items += items
        self._groups = time_ordered(self._items)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        members = [item for t, item in self._groups.get(group, []) if not_after(t, now)]
        latest = members[::-1][:k]
        return [Hit(ids=(item.id,), score=1.0 / (r + 1), content=item.content) for r, item in enumerate(latest)]

    def describe(self) -> dict:
        return {"order": "item time, then data set order; items after the question's date left out"}


class RandomK:
    """k items of the group drawn at random, seeded per question (see the module docstring)."""

    name = "random"
    incremental_ingest = True

    def __init__(self, seed: int = SEED) -> None:
        self.seed = seed
        self._groups: dict[str, list[Item]] = {}

    def ingest(self, items: Sequence[Item]) -> None:
        for group, members in _by_group(items).items():
            self._groups.setdefault(group, []).extend(members)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        members = self._groups.get(group, [])
        key = hashlib.sha256(f"{self.seed}\0{group}\0{query}".encode()).digest()
        drawn = random.Random(int.from_bytes(key[:8], "big")).sample(members, min(k, len(members)))
        return [Hit(ids=(item.id,), score=1.0 / (r + 1), content=item.content) for r, item in enumerate(drawn)]

    def describe(self) -> dict:
        return {"seed": self.seed, "draw": "uniform without replacement, per question: sha256(seed, group, query)"}


def make_recent(ctx: SystemContext) -> RecentK:
    return RecentK()


def make_random(ctx: SystemContext) -> RandomK:
    return RandomK()
