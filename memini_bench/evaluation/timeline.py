"""Writes over time: every system is driven through one timeline of writes, corrections, forgets and questions, all
systems in lockstep (``-suite corrections``, ``-protocol time-ordered``; docs/temporal.md).

A timeline is a list of steps:

- ``Write(items)``: ``ingest(items)``, the items not written before (a system must declare
  ``incremental_ingest``: each call adds; ``core.contract``);
- ``Update(item)``: ``update(item)``, or the fallback ``ingest([item])`` (``evaluation.guarded``);
- ``Forget(ids)``: ``forget(id)`` for each; without the hook each is counted as not honoured;
- ``Ask(questions, depth)``: ``consolidate(now)`` when something was written since the last ask (the hook's time
  is write cost), then one ``recall(group, query, depth(q), now=q.now)`` per question (timed).

Lockstep: each step runs on every system before the next step, so systems sharing one store (memini's three) each
see it as it is at that step. Each system is wrapped in a ``GuardedSystem``: every hook is guarded, every recall
checked (``evaluation.hits.check_hits``), and a hit of an item the system has not been given yet is a leak from the
future, refused (or dropped and counted under ``-leaks count``) like a hit of another group.

Write cost: the wall clock of each write call (``ingest``, ``update``, ``forget``, ``consolidate``), or, for a
system that states its own ingest cost (``IngestTimed``: several systems sharing one store), the growth of its
``ingest_time_ms`` across the call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memini_bench.core import hooks
from memini_bench.core.contract import IngestTimed, System, appends
from memini_bench.core.dataset import Dataset, Item, Question
from memini_bench.core.runs import QuestionRun, RunResult, TokenMemo
from memini_bench.errors import BenchError
from memini_bench.evaluation.guarded import GuardedSystem
from memini_bench.evaluation.hits import RunGuardOptions
from memini_bench.loaders.corrections import Forget, Update, Write
from memini_bench.progress import progress


@dataclass(frozen=True)
class Ask:
    """Questions asked at this point of the timeline, each at ``depth(question)``."""

    questions: tuple[Question, ...]
    depth: Callable[[Question], int]


Step = Write | Update | Forget | Ask


@dataclass
class Replayed:
    """One system's pass over a timeline: its question runs (in ask order), what each question's group held when
    it was asked (``store_sizes``, items written), and its write costs."""

    system: str
    runs: list[QuestionRun] = field(default_factory=list)
    store_sizes: list[int] = field(default_factory=list)
    write_ms: float = 0.0
    written: int = 0
    write_calls: int = 0
    consolidate_ms: float = 0.0
    updates_native: int = 0
    updates_fallback: int = 0
    forgets_honoured: int = 0
    forgets_unhonoured: int = 0
    leaked: int = 0

    def result(self, ds: Dataset, depth: int) -> RunResult:
        """The runs as a ``RunResult`` (for the registered metrics and the paired tests)."""
        return RunResult(self.system, ds.name, depth, self.write_ms, 0, tuple(self.runs), self.leaked)

    @property
    def ms_per_write(self) -> float:
        return self.write_ms / self.written if self.written else 0.0


def check_incremental(systems: Sequence[System], what: str) -> None:
    """Refuse a system that does not declare that each ``ingest`` call adds (``core.contract.Incremental``)."""
    for s in systems:
        if not appends(s):
            raise BenchError(f"{what}: system {s.name} does not declare incremental_ingest (each ingest call adds "
                             "to the earlier ones), which writing over time needs; see docs/temporal.md")


class _Clocks:
    """The systems' write clocks over one step: each call's wall time, or, for a system that states its own ingest
    cost (``IngestTimed``), the growth of its ``ingest_time_ms`` over the whole step (a store shared by several
    systems is written by the first of them, and each reports its own share)."""

    def __init__(self, guarded: Sequence[GuardedSystem]) -> None:
        self.guarded = guarded
        self.own = [isinstance(g.inner, IngestTimed) for g in guarded]

    def _own_ms(self, i: int) -> float:
        g = self.guarded[i]
        return float(hooks.call(g.name, "ingest_time_ms", lambda: g.inner.ingest_time_ms))  # type: ignore[attr-defined]

    def step(self, call: Callable[[GuardedSystem], object]) -> list[float]:
        """``call`` on every system in turn; the write cost of each."""
        before = [self._own_ms(i) if own else 0.0 for i, own in enumerate(self.own)]
        wall = []
        for g in self.guarded:
            t0 = time.perf_counter()
            call(g)
            wall.append((time.perf_counter() - t0) * 1e3)
        return [max(0.0, self._own_ms(i) - before[i]) if own else wall[i] for i, own in enumerate(self.own)]


def replay(guarded: Sequence[GuardedSystem], ds: Dataset, steps: Sequence[Step], *, label: str = "") -> list[Replayed]:
    """Drive every system through ``steps`` in lockstep (module docstring); the systems are the caller's to close
    (``guarded_systems``)."""
    out = [Replayed(g.name) for g in guarded]
    clocks = _Clocks(guarded)
    for g in guarded:
        g.expect(ds.items)
    sizes: dict[str, int] = {}
    queries = list(dict.fromkeys(q.query for s in steps if isinstance(s, Ask) for q in s.questions))
    prepared = False
    dirty = False
    tokens_of = TokenMemo()
    total = sum(len(s.questions) for s in steps if isinstance(s, Ask)) * len(guarded)
    bar = iter(progress(range(total), total, f"{label or 'timeline'} recall", unit="recalls"))
    for step in steps:
        if isinstance(step, Ask):
            if dirty:
                now = max((q.now for q in step.questions if q.now is not None), default=None)
                for r, ms in zip(out, clocks.step(lambda g, now=now: g.consolidate(now)), strict=True):
                    r.consolidate_ms += ms
                    r.write_ms += ms
            dirty = False
            for g, r in zip(guarded, out, strict=True):
                for q in step.questions:
                    t = time.perf_counter()
                    hits = g.recall(q.group, q.query, step.depth(q), now=q.now, context=dict(q.context))
                    latency = (time.perf_counter() - t) * 1e3
                    r.runs.append(QuestionRun(q, tuple(tuple(h.ids) for h in hits),
                                              tuple(float(h.score) for h in hits),
                                              tuple(tokens_of[h.content] for h in hits), latency))
                    r.store_sizes.append(sizes.get(q.group, 0))
                    next(bar, None)
            continue
        if isinstance(step, Forget):
            costs = clocks.step(lambda g, ids=step.ids: [g.forget(i) for i in ids])
        else:
            items: tuple[Item, ...] = step.items if isinstance(step, Write) else (step.item,)
            for item in items:
                sizes[item.group] = sizes.get(item.group, 0) + 1
            if isinstance(step, Write):
                costs = clocks.step(lambda g, items=items: g.ingest(items))
            else:
                costs = clocks.step(lambda g, item=step.item: g.update(item))
            for r in out:
                r.written += len(items)
                r.write_calls += 1
        for r, ms in zip(out, costs, strict=True):
            r.write_ms += ms
        dirty = True
        if not prepared and not isinstance(step, Forget):
            for g in guarded:
                g.prepare(queries)
            prepared = True
    for g, r in zip(guarded, out, strict=True):
        r.updates_native, r.updates_fallback = g.updates_native, g.updates_fallback
        r.forgets_honoured, r.forgets_unhonoured = g.forgets_honoured, g.forgets_unhonoured
        r.leaked = g.leaked
    for _ in bar:
        pass
    return out


def run_guarded(systems: Sequence[System], ds: Dataset, steps: Sequence[Step], guard: RunGuardOptions | None, *,
                label: str = "") -> list[Replayed]:
    """``replay`` with each system guarded and closed afterwards (``guarded_systems``)."""
    from memini_bench.evaluation.guarded import guarded_systems

    with guarded_systems(systems, guard, questions=[q for s in steps if isinstance(s, Ask) for q in s.questions]) \
            as wrapped:
        return replay(wrapped, ds, steps, label=label)


def embed_ahead(ctx, ds: Dataset) -> None:
    """Embed every item's text once, in batches, before the timeline when a system of the run embeds with the run's
    encoder (the vectors are then cache reads: a write's cost is the store's, not the model's, whichever system
    writes a text first)."""
    if ctx.encoder_built and ctx.encoder is not None:
        from memini_bench.progress import stage

        with stage(f"embedding the {len(ds.items)} written texts"):
            ctx.encoder.documents([it.content for it in ds.items])
