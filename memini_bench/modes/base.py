"""A mode is a class with four steps over one plan: ``plan(opts) -> Plan`` (the inputs, the systems, the results
identity and the paths it claims, and every refusal that needs no system call), ``run(plan) -> Outcome`` (the
work), ``render(outcome)`` (the tables on stdout) and ``write(outcome)`` (the results files). ``execute`` runs them
in that order, or, under ``--plan``, prints the plan (``Plan.describe``) and stops: no system is called and nothing
is written.

A mode's flags, name and summary are its spec (``modes.specs.ModeSpec``: its own options dataclass and what else it
honours), found by its ``verb``; ``modes.VERBS`` names each mode class by its verb.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import ModeSpec, spec_for
from memini_bench.results.identity import identity_hash

if TYPE_CHECKING:
    from memini_bench.core.dataset import Dataset
    from memini_bench.core.runs import RunResult
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.results.schema import Score
    from memini_bench.systems.context import SystemContext


@dataclass
class PlanState:
    """What a plan built for its run (never printed), typed: the fields any mode may fill (the loaded data set
    ``ds``, the systems' context ``ctx``, the ``encoder`` a mode built itself, the results path ``out`` it
    claimed), and each mode's own fields in its own subclass (``modes.run_systems.RunState`` ...)."""

    ds: Dataset | None = None
    ctx: SystemContext | None = None
    encoder: TextEncoder | None = None
    out: Path | None = None


@dataclass
class Plan:
    """What a mode will do, decided before any system call (see the module docstring). ``state`` carries what the
    plan built for the run (the loaded data set, the systems, the context: the mode's ``PlanState``); it is not
    printed."""

    verb: str
    opts: RunOptions
    systems: list[str] = field(default_factory=list)
    items: int | None = None
    questions: int | None = None
    texts: int | None = None      # distinct texts the run embeds (documents and queries), when it embeds
    cached: int | None = None     # of those, already in the embedding cache
    identity: dict | None = None
    writes: list[Path] = field(default_factory=list)
    claims: dict[Path, dict] = field(default_factory=dict)   # each results path claimed -> the identity it records
    ks: tuple[int, ...] = ()      # the K the mode scores at, when not the -k list (a study's own default)
    notes: list[str] = field(default_factory=list)   # what else a reader of the plan needs (a sweep's cells)
    reads_data: bool = True       # False: a mode that reads no data set (compare reads per-question files)
    state: PlanState = field(default_factory=PlanState)

    def claim(self, path: Path, identity: dict, *, suffix: str = ".json", read=None) -> Path:
        """Claim ``path`` for a results file (or folder) of ``identity`` before any work
        (``results.identity.claim``: ``path``, or its hashed name when it holds a run of another identity; ``read``
        finds a folder's identity); the plan then writes it and carries its identity (the first claim's is the
        plan's ``identity``). Returns the path claimed."""
        from memini_bench.results.identity import claim, results_identity

        out = claim(path, identity, suffix=suffix, read=read or results_identity)
        self.claims[out] = identity
        self.writes.append(out)
        if self.identity is None:
            self.identity = identity
        return out

    def describe(self) -> str:
        """The plan as a person reads it (``--plan``)."""
        o = self.opts
        lines = [f"plan: memini-bench {self.verb}"]
        if self.reads_data:
            lines.append(f"  suite {o.suite}" + (f", data {o.data}" if o.data else ""))
        if self.questions is not None:
            lines.append(f"  data set: {self.items} items, {self.questions} questions scored, "
                         f"K {_ks(self.ks or o.k)}")
        if self.systems:
            lines.append(f"  systems ({len(self.systems)}): {', '.join(self.systems)}")
        if self.texts is not None:
            cached = "" if self.cached is None else f", {self.cached} of them cached"
            lines.append(f"  texts to embed: {self.texts}{cached}")
        lines += [f"  {note}" for note in self.notes]
        if self.identity is not None:
            lines.append(f"  results identity: {identity_hash(self.identity)[:12]}")
        lines += [f"  writes: {p}" for p in self.writes] or ["  writes: nothing"]
        return "\n".join(lines) + "\n"


def _ks(ks: Sequence[int]) -> str:
    return ",".join(map(str, ks))


@dataclass
class ScoredRuns:
    """What a mode that scores runs produced (``run``, ``score``, the corrections suite, the time-ordered protocol):
    each system's run, its ``Score`` rows, the results file's ``config`` and its other top-level parts (``extra``:
    the paired tests under ``significance``, a data set's own tables)."""

    results: list[RunResult]
    scores: list[Score]
    config: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """What ``run`` produced: the plan it ran, the exit code, the tables it prints (``markdown``) and the mode's
    own typed result (``result``: ``ScoredRuns`` for the modes that score runs, the mode's own dataclass otherwise;
    None when it printed all it had)."""

    plan: Plan
    code: int = 0
    markdown: str = ""
    result: Any = None


class Mode:
    """One verb's mode (see the module docstring). Subclasses set ``verb``; the rest of what the CLI knows of the
    mode is its spec (``modes.specs.SPECS``)."""

    verb: ClassVar[str] = ""
    #: Whether the mode recalls as deep as its largest ``-k`` (a ``-metrics`` cut-off deeper than that is refused
    #: before any work); ``score`` reads rankings made elsewhere, as deep as their files go.
    recalls_to_k: ClassVar[bool] = True

    @property
    def spec(self) -> ModeSpec:
        """The mode's spec: its flags, name, summary, and the flag values its verb stands for (``implied``)."""
        return spec_for(self.verb)

    def check(self, opts: RunOptions) -> None:
        """Refusals of the options that the flag check (``modes.check_given``) cannot word (flags that need one
        another); run before it. Default: none."""

    def plan(self, opts: RunOptions) -> Plan:
        raise NotImplementedError

    def preview(self, plan: Plan) -> None:
        """Under ``--plan`` only: the texts the run embeds (its data set's documents and queries) and how many the
        cache holds, when the plan built an encoder (``state``: ``encoder``, or a context ``ctx`` whose encoder a
        system built; a keyword-only run embeds nothing)."""
        ds, ctx, encoder = plan.state.ds, plan.state.ctx, plan.state.encoder
        if encoder is None and ctx is not None and ctx.encoder_built:
            encoder = ctx.encoder
        if ds is None or encoder is None:
            return
        docs = encoder.cached_count([it.content for it in ds.items])
        queries = encoder.cached_count([q.query for q in ds.questions], queries=True)
        plan.texts = docs[0] + queries[0]
        plan.cached = None if encoder.cache is None else docs[1] + queries[1]

    def run(self, plan: Plan) -> Outcome:
        raise NotImplementedError

    def render(self, outcome: Outcome) -> None:
        """Print the outcome's tables (default: the ``markdown`` it holds)."""
        text = outcome.markdown
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()

    def write(self, outcome: Outcome) -> None:
        """Write the outcome's files (default: none)."""

    def execute(self, opts: RunOptions, *, plan_only: bool = False) -> int:
        """plan, then run, render and write; under ``plan_only`` print the plan and stop."""
        plan = self.plan(opts)
        if plan_only:
            self.preview(plan)
            sys.stdout.write(plan.describe())
            return 0
        outcome = self.run(plan)
        self.render(outcome)
        self.write(outcome)
        return outcome.code
