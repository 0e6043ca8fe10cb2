"""VetoBench's memory conditions: each turns a scenario into the context block the agent sees.

- ``none``: nothing. ``conventions``: every recorded decision (superseded ones too: the file nobody cleaned up),
  no rejected options. ``flatfile``: every decision with its rejected options, dumped flat, no retrieval.
- a system of the run (``veto-composite``, ``memini-hybrid/hash``, a ``-system`` plugin, ...) ranks the corpus:
  its top 5 for the task, through its own ``build_context`` hook when it has one, else each hit naming corpus
  decisions rendered with their rejected options as warnings and any other hit by its own content
  (``context.decisions_context``).
- ``extract-e2e``: the decision transcripts through our extraction prompt (``extract``); the extracted corpus is
  ranked by ``veto-composite`` (files known) and rendered as above.
- any other registered system (``mem0``, or ``module:attr``) is a *third-party* condition under VetoBench's
  fairness contract: it ingests the decisions as session-transcript prose (``transcripts``), never the structured
  ``rejected[]``, and the agent sees only what it returns: its ``build_context`` or its hits' content.

All retrieval asks the same question: the task, k = 5, the suite's ``as_of`` and the files in scope. Lifecycle
suites render each decision with its date, so every condition has the recency a human reader would.

A system's ``ingest``, ``recall``, ``build_context`` and ``close`` run under ``core.hooks.call`` (one line naming the
system and the hook for whatever they raise); the hits are not checked as the veto-recall run checks them
(``evaluation.hits``), since a condition may recall the system's own memory ids.

Conditions that ingest through their own pipeline (third-party systems, ``extract-e2e``) are made anew for every
live run, so each run re-rolls their extraction; they archive what it produced (``ingest_record()``): the
per-decision extraction records, and the memories held after ingestion when the system lists them
(``MemoryListing.memories(group)``, VetoBench's optional hook). The others are made once per suite.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memini_bench.core import hooks
from memini_bench.core.contract import Closable, Hit, System, describe
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.loaders.vetobench import Scenario, VetoSuite, suite_items, suite_questions
from memini_bench.systems.context import SystemContext
from memini_bench.vetobench.composite import FILES_KNOWN, VetoCompositeSystem
from memini_bench.vetobench.context import (
    RETRIEVAL_K,
    decisions_context,
    memories_context,
    recall_context,
    render_decision,
)
from memini_bench.vetobench.defaults import EXTRACT_E2E
from memini_bench.vetobench.evaluate import names_system
from memini_bench.vetobench.extract import EXTRACTION_PROMPT, Complete, extract_suite
from memini_bench.vetobench.transcripts import transcript_items

BUILTIN_CONDITIONS = ("none", "conventions", "flatfile")
BUILTIN, CORPUS, EXTRACTION, THIRD_PARTY = "built-in", "corpus", "extraction", "third-party"
PER_RUN = (EXTRACTION, THIRD_PARTY)


class Condition(Protocol):
    name: str
    description: str

    def context(self, scenario: Scenario) -> str: ...


@runtime_checkable
class MemoryListing(Protocol):
    """Optional: every memory the system holds for ``group`` (ids = the items each came from, content = its text)."""

    def memories(self, group: str) -> Sequence[Hit]: ...


def _memories(hits: Sequence[Hit]) -> list[dict]:
    return [{"ids": list(h.ids), "content": h.content} for h in hits]


@dataclass(frozen=True)
class StaticCondition:
    """The same context for every scenario."""

    name: str
    description: str
    text: str

    def context(self, scenario: Scenario) -> str:
        return self.text


class RetrievalCondition:
    """A system ranking the corpus: its top 5 for the task, its own context or the decisions with their vetoes."""

    def __init__(self, system: System, suite: VetoSuite, *, name: str = "", description: str = "") -> None:
        self.system = system
        self.suite = suite
        self.name = name or system.name
        self.description = description or (f"Top-{RETRIEVAL_K} active decisions recalled by {system.name}, "
                                           "rejected options as warnings.")
        self._by_id = {d.id: d for d in suite.active}
        self._questions = {q.id: q for q in suite_questions(suite)}
        hooks.call(str(system.name), "ingest", system.ingest, suite_items(suite))

    def context(self, scenario: Scenario) -> str:
        _, text = recall_context(self.system, self._questions[scenario.id],
                                 lambda hits: decisions_context(hits, self._by_id, dates=self.suite.lifecycle))
        return text


class TranscriptCondition:
    """A third-party system fed the decision transcripts; the agent sees what it returns, nothing else."""

    def __init__(self, name: str, system: System, suite: VetoSuite) -> None:
        self.name = name
        self.system = system
        self.suite = suite
        self.description = (f"{system.name} ingests the decisions as session transcripts (decision, rationale, "
                            f"rejected options in prose); its own top-{RETRIEVAL_K} as context.")
        self._questions = {q.id: q for q in suite_questions(suite)}
        self._items = transcript_items(suite)
        hooks.call(str(system.name), "ingest", system.ingest, self._items)

    def context(self, scenario: Scenario) -> str:
        _, text = recall_context(self.system, self._questions[scenario.id], memories_context)
        return text

    def ingest_record(self) -> dict:
        """The system's description, the transcripts it ingested and, when it lists them, the memories it holds."""
        record: dict = {"kind": THIRD_PARTY, "system": describe(self.system), "transcripts": len(self._items)}
        if isinstance(self.system, MemoryListing):
            record["memories"] = _memories(self.system.memories(self.suite.name))
        return record

    def close(self) -> None:
        if isinstance(self.system, Closable):
            hooks.call(str(self.system.name), "close", self.system.close)


class ExtractionCondition:
    """``extract-e2e``: the transcripts through our extraction prompt, then ``veto-composite`` on what came back."""

    def __init__(self, suite: VetoSuite, complete: Complete, *, model: str = "",
                 encoder: TextEncoder | None = None, echo: Callable[[str], None] = lambda m: None) -> None:
        self.name = EXTRACT_E2E
        self.description = (f"Our extraction prompt over the same transcripts (rejected[] asked for), then the "
                            f"top-{RETRIEVAL_K} by veto-composite over the extracted decisions.")
        self.model = model
        self.extraction = extract_suite(suite, complete, echo=echo)
        echo(f"{EXTRACT_E2E} extraction, {suite.name}: {self.extraction.summary_line()}")
        extracted = self.extraction.suite
        self._inner = (RetrievalCondition(VetoCompositeSystem(encoder, name=FILES_KNOWN), extracted)
                       if extracted.active else None)

    def context(self, scenario: Scenario) -> str:
        return self._inner.context(scenario) if self._inner is not None else ""

    def ingest_record(self) -> dict:
        """The prompt and model, the totals, one record per decision, and the extracted active decisions."""
        suite = self.extraction.suite
        return {"kind": EXTRACTION, "model": self.model, "prompt": EXTRACTION_PROMPT,
                "totals": self.extraction.totals(), "decisions": [r.as_json() for r in self.extraction.records],
                "memories": [{"ids": [d.id], "content": render_decision(d, vetoes=True, dates=suite.lifecycle)}
                             for d in suite.active]}


def builtin_conditions(suite: VetoSuite) -> list[Condition]:
    dates = suite.lifecycle
    conventions = "\n".join(render_decision(d, vetoes=False, dates=dates) for d in suite.decisions)
    flat = "\n".join(render_decision(d, vetoes=True, dates=dates) for d in suite.decisions)
    return [
        StaticCondition("none", "No memory context at all.", ""),
        StaticCondition("conventions", "Every recorded choice, no rejected alternatives (a typical conventions "
                        "file).", f"Project conventions and prior decisions:\n{conventions}"),
        StaticCondition("flatfile", "Every decision with its rejected alternatives, flat, no retrieval.",
                        f"Project decision log:\n{flat}"),
    ]


def registered(name: str) -> bool:
    """Whether ``name`` is a registered system (or ``module:attr``); its factory is loaded now, so a missing
    optional package is an error before anything ingests."""
    from memini_bench.core.registry import SYSTEMS

    if not SYSTEMS.known(name):
        return False
    SYSTEMS.get(name)
    return True


def condition_kind(name: str, system_names: Sequence[str]) -> str:
    """built-in, extraction (``extract-e2e``), corpus (a system of the run) or third-party (any other registered
    system); a short name of a run's system (``hybrid`` for ``memini-hybrid/hash``, as ``-systems`` reads it) is
    refused rather than read as a third party, and a name that is none of them is a BenchError listing what is
    known."""
    if name in BUILTIN_CONDITIONS:
        return BUILTIN
    if name == EXTRACT_E2E:
        return EXTRACTION
    if name in system_names:
        return CORPUS
    variants = [n for n in system_names if names_system(name, n)]
    if variants:
        raise BenchError(f"-veto-conditions {name}: names this run's {', '.join(variants)}; give the full name "
                         "(a corpus condition)")
    if registered(name):
        return THIRD_PARTY
    raise BenchError(f"-veto-conditions {name}: unknown; use {', '.join([*BUILTIN_CONDITIONS, EXTRACT_E2E])}, a "
                     f"system of this run ({', '.join(system_names) or 'none'}), or any registered system (fed "
                     "the decisions as transcripts; see -list)")


def condition_names(system_names: Sequence[str], wanted: Sequence[str] = ()) -> list[str]:
    """The conditions to run: the built-in ones and one per system of the run, in that order, or those in
    ``wanted`` (checked before any system ingests anything; ``extract-e2e`` and third-party systems only when
    named)."""
    for name in wanted:
        condition_kind(name, system_names)
    return list(dict.fromkeys(wanted)) or [*BUILTIN_CONDITIONS, *system_names]


def registry_system(name: str, ctx: SystemContext | None = None) -> System:
    """A fresh system from the registry on ``ctx`` (default: default options), exactly one: a condition is one
    system."""
    from memini_bench.systems.lineup import build_systems, context_for

    systems = build_systems([name], ctx or context_for())
    if len(systems) != 1:
        raise BenchError(f"-veto-conditions {name}: its factory made {len(systems)} systems; a condition is one")
    return systems[0]


@dataclass(frozen=True)
class Makers:
    """What the conditions that ingest on their own need: a fresh third-party system by name, and the chat call,
    model and composite encoder of ``extract-e2e``."""

    third_party: Callable[[str], System] = registry_system
    extract: Complete | None = None
    extract_model: str = ""
    composite_encoder: TextEncoder | None = None
    echo: Callable[[str], None] = lambda m: None


def build_condition(name: str, suite: VetoSuite, systems: Sequence[System], makers: Makers = Makers()) -> Condition:
    """The condition ``name`` on ``suite`` (its systems ingest now)."""
    by_system = {s.name: s for s in systems}
    kind = condition_kind(name, list(by_system))
    if kind == BUILTIN:
        return next(c for c in builtin_conditions(suite) if c.name == name)
    if kind == CORPUS:
        return RetrievalCondition(by_system[name], suite)
    if kind == EXTRACTION:
        if makers.extract is None:
            raise BenchError(f"-veto-conditions {EXTRACT_E2E}: needs the chat endpoint of -live")
        return ExtractionCondition(suite, makers.extract, model=makers.extract_model,
                                   encoder=makers.composite_encoder, echo=makers.echo)
    return TranscriptCondition(name, makers.third_party(name), suite)


class SuiteConditions:
    """One suite's conditions across live runs: built-in and corpus conditions made once, the ones that ingest on
    their own (third-party, extraction) made anew by every ``for_run`` and closed by ``close``."""

    def __init__(self, suite: VetoSuite, systems: Sequence[System], wanted: Sequence[str] = (),
                 makers: Makers = Makers()) -> None:
        self.suite = suite
        self.systems = list(systems)
        self.makers = makers
        system_names = [s.name for s in systems]
        self.names = condition_names(system_names, wanted)
        self._per_run = {n for n in self.names if condition_kind(n, system_names) in PER_RUN}
        self._fixed = {n: build_condition(n, suite, systems, makers) for n in self.names if n not in self._per_run}

    def for_run(self) -> list[Condition]:
        built: list[Condition] = []
        try:
            for n in self.names:
                built.append(self._fixed[n] if n in self._fixed else build_condition(n, self.suite, self.systems,
                                                                                      self.makers))
        except BaseException:
            self.close(built)
            raise
        return built

    def close(self, conditions: Sequence[Condition]) -> None:
        for c in conditions:
            if c.name in self._per_run and isinstance(c, Closable):
                c.close()
