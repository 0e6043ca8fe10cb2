"""Items, questions and data sets; the preparation steps (holdout split, even subsample, naming).

An *item* is one memory; a *question* asks for the items in ``gold``. Every ``group`` is an isolated namespace
(memini maps group ``""`` to namespace ``"bench"``); a system recalls only from the question's group.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memini_bench.errors import BenchError

HOLDOUT_MODES = ("all", "tune", "held")


@dataclass(frozen=True, slots=True)
class Item:
    """One memory. ``time`` is when it happened (LongMemEval session date, LoCoMo session date), or None.

    ``tier``/``importance``/``confidence`` describe memini's memory quality (semantic tier, importance 0 and no
    confidence unless a suite says otherwise); ``meta`` carries a suite's extra fields (VetoBench: the whole
    decision, rejected options included, in ``meta["decision"]``).
    """

    id: str
    content: str
    group: str = ""
    time: datetime | None = None
    session: str = ""
    source: str = ""
    tier: str = "semantic"
    importance: float = 0.0
    confidence: float | None = None
    meta: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True, slots=True)
class Question:
    """One question: ``gold`` are item ids (any of them is a hit for recall_any; all for recall_all).

    ``context`` is what the suite lets a system see besides the query (``recall(..., context=...)``: VetoBench's
    files in scope); ``meta`` is the suite's own bookkeeping, never shown to a system (it may hold the answer).
    """

    id: str
    query: str
    gold: tuple[str, ...]
    group: str = ""
    answer: str = ""
    category: str = ""
    now: datetime | None = None
    meta: tuple[tuple[str, object], ...] = ()
    context: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True, slots=True)
class Dataset:
    """A named set of items and questions, with the loader's notes on what it dropped and why."""

    name: str
    items: tuple[Item, ...]
    questions: tuple[Question, ...]
    notes: tuple[str, ...] = ()
    category_labels: dict[str, str] = field(default_factory=dict)

    def with_(self, **changes) -> Dataset:
        return dataclasses.replace(self, **changes)

    @property
    def groups(self) -> list[str]:
        """Distinct groups in item order."""
        return list(dict.fromkeys(item.group for item in self.items))


def check_not_empty(ds: Dataset, source: str) -> Dataset:
    """memini refuses a data set with no items or no questions; so do we, naming the source."""
    if not ds.items:
        raise BenchError(f"{source}: no items loaded; the data set needs at least one memory")
    if not ds.questions:
        raise BenchError(f"{source}: no questions loaded; the data set needs at least one question")
    return ds


def _prune_items(ds: Dataset, questions: Sequence[Question]) -> tuple[Item, ...]:
    groups = {q.group for q in questions}
    return tuple(item for item in ds.items if item.group in groups)


def split_holdout(ds: Dataset, mode: str) -> Dataset:
    """memini's SplitHoldout: ``held`` keeps the questions whose 0-based index i has ``i % 10 == 9``, ``tune`` the
    others, ``all`` everything. Items are pruned to the kept questions' groups and the name gets ``-<mode>``."""
    if mode in ("", "all"):
        return ds
    if mode not in HOLDOUT_MODES:
        raise BenchError(f"-holdout {mode!r}: unknown split; use one of all, tune, held")
    held = mode == "held"
    kept = tuple(q for i, q in enumerate(ds.questions) if (i % 10 == 9) == held)
    return ds.with_(name=f"{ds.name}-{mode}", questions=kept, items=_prune_items(ds, kept))


def subsample(ds: Dataset, limit: int) -> Dataset:
    """memini's even subsample: with n questions and limit N < n, keep ``Q[int(i * n / N)]`` for i < N, prune
    items to their groups. Unlike memini the name gets ``-limit<N>`` so a limited run never overwrites a full one."""
    n = len(ds.questions)
    if limit <= 0 or limit >= n:
        return ds
    step = n / limit
    kept = tuple(ds.questions[int(i * step)] for i in range(limit))
    return ds.with_(name=f"{ds.name}-limit{limit}", questions=kept, items=_prune_items(ds, kept))


def prepare(ds: Dataset, *, holdout: str = "all", limit: int = 0) -> Dataset:
    """memini's preparation order after loading: holdout split, then the even subsample."""
    return subsample(split_holdout(ds, holdout), limit)
