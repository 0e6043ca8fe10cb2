"""The run checks for modes that call a system's hooks themselves (``-qa``, ``-multihop``, ``-entity-bridge``).

The normal run (``evaluation.runner.run_system``) guards each hook and checks each recall itself. A mode that drives
a system its own way (a study recalling twice per question, a recall at the candidate pool's depth) wraps each
system in a ``GuardedSystem`` instead, through ``guarded_systems``, and gets the same contract:

- ``ingest``, ``prepare`` and ``close`` run under ``core.hooks.call``, ``recall`` under ``core.hooks.call_bounded``
  (``-recall-timeout``): whatever they raise is one line naming the system and the hook (``-traceback`` shows the
  trace), exit 2, nothing written. Inside ``guarded_systems`` the recalls made on the thread that opened it share
  one ``core.hooks.HookLoop`` per system, as the run's recalls do: what holds for the whole loop (the ``os._exit``
  guard, the alarm's handler, the working folder to compare with) is set up once, and each recall only arms the
  alarm, counts the threads afresh (the mode's own code runs between recalls) and checks what a call can change;
  a recall on another thread is ``call_bounded`` itself;
- every recall's return is checked by ``evaluation.hits.check_hits`` before the mode sees it, against the k asked
  for in that call (a study that recalls at ``pool_size(k)`` and then at k is held to each), with the item ids of
  what the system ingested as the data set;
- a violation names the system and the question when the recall's (group, query) is a question's; otherwise (a
  second hop: the query plus a hit's text) it names the group and the query;
- ``-leaks count`` drops every leaked hit (a hit with any id of another group) before the mode sees the list, and
  ``leaked`` counts them over all the system's recalls; ``-leaks error`` (the default) refuses the first.

The recall returns the kept ``Hit``s themselves, in the system's order, so a well-behaved system's results are the
ones an unwrapped system gives.

Writes over time (``core.contract``: ``update``, ``forget``, ``consolidate``; docs/temporal.md): each hook runs under
``core.hooks.call`` like ``ingest``; ``update`` without the hook is the documented fallback (``ingest([item])``:
the correction stored beside the value it corrects), counted in ``updates_fallback``; ``forget`` without the hook
cannot be honoured and is counted in ``forgets_unhonoured`` (never passed). After ``expect(items)`` (the data set's
every item) a recall that returns an item not yet ingested is a leak from the future, refused or dropped like a
group leak (``check_hits``' ``unwritten``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime

from memini_bench.core import hooks
from memini_bench.core.contract import (
    Closable,
    Consolidating,
    Forgettable,
    Hit,
    Preparable,
    System,
    Updatable,
)
from memini_bench.core.dataset import Item, Question
from memini_bench.evaluation.hits import RunGuardOptions, check_hits
from memini_bench.evaluation.runner import close_all

#: How ``check_hits`` names the depth a guarded recall is held to.
PER_CALL = "the k of this call"


class GuardedSystem:
    """``system`` with its hooks guarded and every recall checked (module docstring); ``questions`` name the
    recalls in the messages, ``id_less`` takes hits without ids (``-qa``)."""

    def __init__(self, system: System, guard: RunGuardOptions | None = None, *,
                 questions: Iterable[Question] = (), id_less: bool = False) -> None:
        self.inner = system
        self.name = str(system.name)
        self.guard = guard or RunGuardOptions()
        self.id_less = id_less
        self.leaked = 0
        self._loop: hooks.HookLoop | None = None  # set inside recall_loop, for the thread that opened it
        self._loop_thread = 0
        self.updates_native = self.updates_fallback = 0
        self.forgets_honoured = self.forgets_unhonoured = 0
        self._group_of: dict[str, str] = {}
        self._unwritten: dict[str, str] = {}
        self._asked: dict[tuple[str, str], str] = {}
        for q in questions:
            self._asked.setdefault((q.group, q.query), q.id)

    def expect(self, items: Iterable[Item]) -> None:
        """The data set's every item: those not ingested yet are, until they are, a leak from the future."""
        self._unwritten = {item.id: item.group for item in items if item.id not in self._group_of}

    def _written(self, items: Iterable[Item]) -> None:
        for item in items:
            self._group_of[item.id] = item.group
            self._unwritten.pop(item.id, None)

    def ingest(self, items: Sequence[Item]) -> None:
        self._written(items)
        hooks.call(self.name, "ingest", self.inner.ingest, items)

    def update(self, item: Item) -> bool:
        """``item`` in place of the ids it supersedes: the system's ``update`` (True), else the fallback, a new
        item beside them (``ingest([item])``, False)."""
        self._written((item,))
        if isinstance(self.inner, Updatable):
            hooks.call(self.name, "update", self.inner.update, item)
            self.updates_native += 1
            return True
        hooks.call(self.name, "ingest", self.inner.ingest, (item,))
        self.updates_fallback += 1
        return False

    def forget(self, item_id: str) -> bool:
        """The system's ``forget`` (True); without the hook nothing can be done, and the forget is counted as not
        honoured (False)."""
        if isinstance(self.inner, Forgettable):
            hooks.call(self.name, "forget", self.inner.forget, item_id)
            self.forgets_honoured += 1
            return True
        self.forgets_unhonoured += 1
        return False

    def consolidate(self, now: datetime | None) -> None:
        if isinstance(self.inner, Consolidating):
            hooks.call(self.name, "consolidate", self.inner.consolidate, now)

    def prepare(self, queries: Sequence[str]) -> None:
        if isinstance(self.inner, Preparable):
            hooks.call(self.name, "prepare", self.inner.prepare, queries)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        asked = self.asked(group, query)
        loop = self._loop
        if loop is not None and threading.get_ident() == self._loop_thread:
            loop.recount()
            hits = loop.call(f"recall for {asked}", self.inner.recall, group, query, k, now=now, context=context)
        else:
            hits = hooks.call_bounded(self.name, f"recall for {asked}", self.guard.recall_timeout,
                                      self.inner.recall, group, query, k, now=now, context=context)
        checked = check_hits(self.name, asked, group, hits, k, self._group_of, self.guard.leaks,
                             depth_rule=PER_CALL, id_less=self.id_less, unwritten=self._unwritten)
        self.leaked += checked.leaked
        return [hits[i] for i in checked.kept]  # type: ignore[index]  # checked: a list or tuple

    @contextmanager
    def recall_loop(self) -> Iterator[GuardedSystem]:
        """Recalls on this thread inside the block share one ``HookLoop`` (the module docstring)."""
        with hooks.HookLoop(self.name, self.guard.recall_timeout, own=hooks.is_own(self.inner)) as loop:
            self._loop, self._loop_thread = loop, threading.get_ident()
            try:
                yield self
            finally:
                self._loop = None

    def close(self) -> None:
        if isinstance(self.inner, Closable):
            hooks.call(self.name, "close", self.inner.close)

    def asked(self, group: str, query: str) -> str:
        """A recall as the messages name it: its question, else its group and (shortened) query."""
        qid = self._asked.get((group, query))
        if qid is not None:
            return f"question {qid!r}"
        shown = hooks.one_line(query)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return f"group {group!r} query {shown!r}"

    def leak_fields(self, since: int = 0) -> dict[str, int]:
        """``{"leaked": n}`` under ``-leaks count`` (for the mode's results row; n counted from the ``since``
        reading of ``leaked``), else nothing (a default run's results stay as they were)."""
        return {"leaked": self.leaked - since} if self.guard.leaks == "count" else {}


@contextmanager
def guarded_systems(systems: Sequence[System], guard: RunGuardOptions | None = None, *,
                    questions: Iterable[Question] = (), id_less: bool = False) -> Iterator[list[GuardedSystem]]:
    """Each system wrapped in a ``GuardedSystem``; every closable system is closed on the way out (``close_all``),
    quietly when the block failed (the error on its way out is the one to report)."""
    questions = tuple(questions)
    wrapped = [GuardedSystem(s, guard, questions=questions, id_less=id_less) for s in systems]
    try:
        with ExitStack() as loops:
            for system in wrapped:
                loops.enter_context(system.recall_loop())
            yield wrapped
    except BaseException:
        close_all(systems, quiet=True)
        raise
    close_all(systems)


def leaked_line(counts: Mapping[str, int]) -> str:
    """The printed note of ``-leaks count``: the hits each system returned from another group, dropped."""
    return "leaked hits dropped (-leaks count): " + ", ".join(f"{name} {n}" for name, n in counts.items())
