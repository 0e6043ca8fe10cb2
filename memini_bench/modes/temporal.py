"""``memini-bench run`` when memory is written over time (docs/temporal.md): ``-suite corrections`` (fact histories
replayed, then current, forgotten and as-of questions) and ``-protocol time-ordered`` (LoCoMo, LongMemEval: items
written in time order, each question asked at its own time, reported beside the usual protocol).

``RunMode`` hands these runs here (``wanted``); the plan, the results identity, the claimed path and the write are
the normal run's (``modes.common``); the work is ``evaluation.timeline.replay``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field

from memini_bench.core.contract import System
from memini_bench.core.dataset import Dataset, Question
from memini_bench.errors import BenchError
from memini_bench.evaluation import corrections as scoring
from memini_bench.evaluation.timeline import Ask, check_incremental, embed_ahead, run_guarded
from memini_bench.loaders.corrections import timeline
from memini_bench.modes.base import Outcome, Plan, ScoredRuns
from memini_bench.modes.common import (
    build_config,
    check_outputs,
    load_prepared,
    plan_results,
    reference_of,
    results_path,
    write_results,
)
from memini_bench.modes.options import RunOptions
from memini_bench.modes.run_state import RunState
from memini_bench.modes.specs import SignificanceOptions, SystemsRunOptions
from memini_bench.results.write import results_document, write_per_question
from memini_bench.systems.context import SystemContext

TIME_ORDERED = "time-ordered"


@dataclass
class OverTimeState(RunState):
    """A run over time's plan state: its ``kind`` (``corrections`` or ``time-ordered``) and, for the time-ordered
    protocol (``modes.time_ordered.plan_state``), the usual protocol's own systems on the same encoder, its
    context, the timeline's ``steps`` and the questions ``asked`` in it."""

    kind: str = ""
    usual_systems: list[System] = field(default_factory=list)
    usual_ctx: SystemContext | None = None
    steps: list = field(default_factory=list)
    asked: list[Question] = field(default_factory=list)


def wanted(opts: RunOptions) -> bool:
    """Whether the run writes over time: the corrections suite, or ``-protocol time-ordered``."""
    return opts.suite == "corrections" or opts.mode(SystemsRunOptions).protocol == TIME_ORDERED


def _refuse_run_flags(opts: RunOptions) -> None:
    own = opts.mode(SystemsRunOptions)
    if own.poison:
        raise BenchError("-poison: not used by a run that writes over time (-suite corrections, -protocol "
                         "time-ordered); drop it")
    if own.categories:
        raise BenchError("-categories: not used by a run that writes over time; its tables are per kind; drop it")
    if opts.output.trec or opts.output.plot or opts.output.metrics:
        raise BenchError("-trec / -plot / -metrics: not used by a run that writes over time; drop them")


def plan(mode, opts: RunOptions) -> Plan:
    """The plan of a run over time (module docstring): systems, data set, identity and path, before any work."""
    check_outputs(opts)
    _refuse_run_flags(opts)
    if opts.suite == "corrections" and opts.mode(SystemsRunOptions).protocol == TIME_ORDERED:
        raise BenchError("-protocol time-ordered: -suite corrections is written over time already; drop it")
    if opts.suite != "corrections":
        from memini_bench.modes.time_ordered import check_suite

        check_suite(opts.suite)
    ctx = opts.context()
    systems = mode.make_systems(opts, ctx)
    what = "-suite corrections" if opts.suite == "corrections" else "-protocol time-ordered"
    check_incremental(systems, what)
    names = [s.name for s in systems]
    reference = reference_of(opts.mode(SignificanceOptions).reference, names) if len(names) > 1 else names[0]
    ds = load_prepared(opts)
    kind = "corrections" if opts.suite == "corrections" else TIME_ORDERED
    ident, out = plan_results(opts, ds, ctx, systems, mode=kind, mode_settings={"writes": "over time"})
    state = OverTimeState(ds=ds, ctx=ctx, out=out, systems=systems, reference=reference, kind=kind,
                          file_name=out.name if out is not None else "")
    if kind == TIME_ORDERED:
        from memini_bench.modes.time_ordered import plan_state

        plan_state(mode, opts, state)
    writes = [out] if out is not None else []
    if out is not None and opts.output.per_question:
        from pathlib import Path

        writes.append(Path(opts.output.per_question))
    return Plan(mode.verb, opts, systems=names, items=len(ds.items), questions=len(ds.questions), identity=ident,
                writes=writes, state=state)


def forgotten_depth(ds: Dataset, depth: int):
    """A question's recall depth: ``depth`` (the largest K), a forgotten question's the whole group ("any K")."""
    sizes = Counter(item.group for item in ds.items)

    def of(q: Question) -> int:
        return max(depth, sizes[q.group]) if q.category == "forgotten" else depth

    return of


def run(plan: Plan) -> Outcome:
    st = plan.state
    if st.kind == TIME_ORDERED:
        from memini_bench.modes.time_ordered import run as run_time_ordered

        return run_time_ordered(plan)
    opts, ds = plan.opts, st.ds
    embed_ahead(st.ctx, ds)
    steps = [*timeline(ds), Ask(ds.questions, forgotten_depth(ds, opts.depth))]
    replayed = run_guarded(st.systems, ds, steps, opts.guard, label="corrections")
    own = opts.mode(SystemsRunOptions)
    text, tables = "", {}
    by_k = {}
    for k in opts.k:
        t, by_system = scoring.table(replayed, k, own.resamples, own.seed)
        text += scoring.table_markdown(t.with_best()) + "\n"
        by_k[k] = by_system
        tables[str(k)] = {name: [scoring.as_dict(s) for s in rows] for name, rows in by_system.items()}
    sig = []
    if len(replayed) > 1:
        k = max(opts.k)
        rows = scoring.significance(by_k[k], st.reference, own.resamples, own.seed)
        text += "\n" + scoring.significance_markdown(rows, st.reference)
        sig = [dataclasses.asdict(r) for r in rows]
    leaks = {r.system: r.leaked for r in replayed if r.leaked}
    if leaks:
        text += "\nleaked hits dropped (-leaks count): " + ", ".join(f"{n} {c}" for n, c in leaks.items()) + "\n"
    counts = {r.system: {"updates_native": r.updates_native, "updates_fallback": r.updates_fallback,
                         "forgets_honoured": r.forgets_honoured, "forgets_unhonoured": r.forgets_unhonoured,
                         "write_ms": r.write_ms, "written": r.written, "leaked": r.leaked} for r in replayed}
    config = build_config(opts, ds, st.ctx, st.systems, mode="corrections", identity=plan.identity)
    extra = {"corrections": {"scores": tables, "writes": counts, "reference": st.reference,
                             "significance": sig}}
    results = [r.result(ds, opts.depth) for r in replayed]
    return Outcome(plan, 0, text, ScoredRuns(results, [], config, extra))


def write(outcome: Outcome) -> None:
    opts, out = outcome.plan.opts, outcome.plan.state.out
    if out is None:
        return
    data = outcome.result
    write_results(out, results_document(data.config, (), **data.extra))
    if opts.output.per_question:
        from pathlib import Path

        write_per_question(Path(opts.output.per_question), data.results)


__all__ = ["plan", "results_path", "run", "wanted", "write"]
