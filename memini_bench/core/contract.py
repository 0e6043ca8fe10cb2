"""The System contract: what the harness measures, and the optional hooks it looks for.

A *System* is anything with a ``name``, an ``ingest(items)`` that stores the data set's memories once, and a
``recall(group, query, k, *, now=None, context=None)`` that answers one question with at most ``k`` ranked
``Hit``s from ``group`` alone:

- ``group``: the question's isolated namespace (a LoCoMo conversation, a LongMemEval haystack); a hit from any
  other group is a bug in the system.
- ``query``: the question text; ``now``: the question's date (None when the suite has none).
- ``context``: the suite's per-question context, what a real agent would know besides the question (VetoBench:
  ``{"files_in_scope": (...)}``, the files the agent is editing). Never the gold. Empty for most suites.

A ``Hit`` names the dataset item ids it stands for (several when a system merges or extracts memories), its score
and the text it would inject (token counts are estimated from it).

Optional hooks, each its own protocol so the runner finds them by ``isinstance`` (``runtime_checkable``):

- ``Preparable.prepare(queries)``: batch work before the timed loop (embedding every query at once); recall
  latency then measures retrieval alone.
- ``Describable.describe() -> dict``: name, version and settings; recorded in the results file's config.
- ``IngestTimed.ingest_time_ms``: the ingest cost the system stands for, when the wall clock of its own
  ``ingest`` call is not it (memini's three systems share one store: each reports the parts it uses).
- ``Closable.close()``: release files, connections, temp folders; called once after the run, also on errors.
- ``ContextBuilder.build_context(question, hits) -> str``: the context block the system would put in front of an
  agent for ``question`` from the ``hits`` it recalled for it (VetoBench's behavioural layer asks for it; without
  the hook the harness renders the hits itself). ``question`` is stripped of its gold, answer and suite meta.

Writes over time (``-suite corrections``, ``-protocol time-ordered``; docs/temporal.md). There the harness writes
in the data's time order, with several calls, and asks questions in between:

- ``Incremental.incremental_ingest`` (True): every ``ingest`` call *adds* its items (ids never seen before) to
  what the earlier calls stored. A system without it is refused by those two runs with one line (a store that
  keeps only the last call's items would be scored on a history it silently dropped).
- ``Updatable.update(item)``: ``item`` replaces the memories whose ids ``superseded(item)`` names (its
  ``meta["supersedes"]``, a tuple of item ids: the value it corrects); afterwards those ids are gone and
  ``item.id`` is stored. Fallback without the hook: ``ingest([item])``, the correction is a new item with a later
  ``time`` beside the old one (which then still competes with it: the stale-above-current rate measures that).
- ``Forgettable.forget(item_id) -> None``: the memory is deleted; no later recall may return ``item_id``. Fallback
  without the hook: none exists (the harness cannot delete from a store it does not own), so the forget is *not
  honoured*: counted and printed as such, and the forgotten item's questions are scored on what the system
  returns (a resurrection whenever it comes back), never passed.
- ``Consolidating.consolidate(now)``: called between writes under ``-protocol time-ordered``, before the
  questions of time ``now`` are asked (a store that summarises, merges or re-indexes does it here; its time is
  the write cost, not the recall's).

Factories. The registry (``memini_bench.core.registry.SYSTEMS``) and ``-system module:attr`` take a *factory*:
``factory(ctx: SystemContext) -> System | Sequence[System]`` (``memini_bench.systems.context``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from memini_bench.core.dataset import Item, Question


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled memory: the dataset item ids it stands for, its score and its text."""

    ids: tuple[str, ...]
    score: float
    content: str


@runtime_checkable
class System(Protocol):
    """Anything that can be measured: ingest items once, then recall the best k for a query in a group."""

    name: str

    def ingest(self, items: Sequence[Item]) -> None: ...

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]: ...


@runtime_checkable
class Preparable(Protocol):
    def prepare(self, queries: Sequence[str]) -> None: ...


@runtime_checkable
class Describable(Protocol):
    def describe(self) -> dict: ...


@runtime_checkable
class IngestTimed(Protocol):
    ingest_time_ms: float


@runtime_checkable
class Closable(Protocol):
    def close(self) -> None: ...


@runtime_checkable
class ContextBuilder(Protocol):
    def build_context(self, question: Question, hits: Sequence[Hit]) -> str: ...


@runtime_checkable
class Incremental(Protocol):
    incremental_ingest: bool


@runtime_checkable
class Updatable(Protocol):
    def update(self, item: Item) -> None: ...


@runtime_checkable
class Forgettable(Protocol):
    def forget(self, item_id: str) -> None: ...


@runtime_checkable
class Consolidating(Protocol):
    def consolidate(self, now: datetime | None) -> None: ...


#: The key of ``Item.meta`` naming the ids a correction replaces (``update``).
SUPERSEDES = "supersedes"


def superseded(item: Item) -> tuple[str, ...]:
    """The item ids ``item`` replaces (its ``meta["supersedes"]``; empty for a plain write)."""
    for key, value in item.meta:
        if key == SUPERSEDES:
            return tuple(value)  # type: ignore[arg-type]
    return ()


def appends(system: System) -> bool:
    """Whether ``system`` declares that each ``ingest`` call adds to the earlier ones (``Incremental``)."""
    return isinstance(system, Incremental) and system.incremental_ingest is True


def describe(system: System) -> dict:
    """``system.describe()`` when it has the hook, else its name alone. The hook runs under ``hooks.call`` (a
    raise is one line naming the system); what it returns must be a JSON object (a dict that ``orjson`` writes,
    the way the results file will), else one line naming the system; the copy returned is that JSON read back."""
    import orjson

    from memini_bench.core import hooks

    name = str(system.name)
    info = hooks.call(name, "describe", system.describe) if isinstance(system, Describable) else {}
    try:
        if not isinstance(info, dict):
            raise TypeError(f"a {type(info).__name__}, not a dict")
        info = orjson.loads(orjson.dumps(info, option=orjson.OPT_SERIALIZE_NUMPY))
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise hooks.PluginError(f"system {name}: describe() returned {hooks.one_line(exc)}; it must return a "
                                "JSON object (strings, numbers, booleans, lists, objects with string keys)") from None
    return {"name": system.name, **info}
