"""The normal run (verb ``run``): load and prepare the data set, run the systems, print tables, write results.

``RunMode`` is the one code path of ``memini-bench run``, of the flat form without a mode flag, and of the Python
API (``memini_bench.evaluate``): ``plan`` builds the systems and claims the results path, ``run`` runs and scores
them and renders the tables once (``Outcome.markdown``), ``render`` prints those tables and ``write``
writes the results file and its companions (every step but the systems' own work lives in ``modes.common``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memini_bench.core.contract import System
from memini_bench.errors import BenchError
from memini_bench.evaluation.breakdowns import breakdowns
from memini_bench.evaluation.metrics import score_all
from memini_bench.evaluation.runner import run_all
from memini_bench.executors import executor_for
from memini_bench.modes.base import Mode, Outcome, Plan, ScoredRuns
from memini_bench.modes.common import (
    build_config,
    category_systems,
    check_outputs,
    load_prepared,
    log,
    plan_results,
    reference_of,
    results_path,
    significance_of,
    table_caption,
    write_results,
)
from memini_bench.modes.options import RunOptions
from memini_bench.modes.run_state import RunState
from memini_bench.modes.specs import SignificanceOptions, SystemsRunOptions
from memini_bench.results.write import (
    markdown,
    results_document,
    write_per_question,
    write_trec,
)
from memini_bench.systems.context import SystemContext
from memini_bench.systems.lineup import stage_timings, systems_for


def encoder_clock(ctx) -> tuple[float, float]:
    """The run's encoder's (model load, embedding) times so far; (0, 0) while it is not built (keyword only)."""
    return ctx.encoder.clock() if ctx.encoder_built and ctx.encoder is not None else (0.0, 0.0)


#: Builds the run's systems on its context (the CLI's: ``systems_for(opts.lineup, ctx)``; the API passes its own).
SystemsMaker = Callable[[RunOptions, SystemContext], list[System]]


def lineup_systems(opts: RunOptions, ctx: SystemContext) -> list[System]:
    return systems_for(opts.lineup, ctx)


def check_reference(opts: RunOptions, names: list[str]) -> str:
    """-reference, checked against the systems (it needs -significance); "" = the default reference."""
    reference = opts.mode(SignificanceOptions).reference
    if opts.mode(SystemsRunOptions).significance:
        if len(names) < 2:
            raise BenchError("-significance: needs at least two systems in the run (see -systems)")
        reference_of(reference, names)
    elif "reference" in opts.given:
        raise BenchError("-reference: used with -significance (or -compare); add -significance or drop it")
    return reference


def system_plan_notes(opts: RunOptions, systems: list[System], ds) -> list[str]:
    """What systems with a ``plan_notes(items, query, k)`` hook (the protocol systems: their mapped calls, a dry
    rendering, the mapping checked against the server) add to ``--plan`` (``RunMode.preview``, so only then)."""
    query = ds.questions[0].query if ds.questions else ""
    return [line for s in systems if callable(getattr(s, "plan_notes", None))
            for line in s.plan_notes(ds.items, query, max(opts.k))]


class RunMode(Mode):
    """The normal run (see the module docstring); ``make_systems`` replaces the ``-systems``/``-system`` lineup."""

    verb = "run"

    def __init__(self, make_systems: SystemsMaker = lineup_systems) -> None:
        self.make_systems = make_systems

    def plan(self, opts: RunOptions) -> Plan:
        from memini_bench.modes import temporal

        if temporal.wanted(opts):  # writes over time (-suite corrections, -protocol time-ordered): docs/temporal.md
            return temporal.plan(self, opts)
        check_outputs(opts)
        executor_for(opts.executor)  # a missing extra or an unreachable cluster: one line before any work
        ctx = opts.context()
        systems = self.make_systems(opts, ctx)
        names = [s.name for s in systems]
        tables = category_systems(opts, names)  # a wrong -reference or -categories: refused before any work
        reference = check_reference(opts, names)
        ds = load_prepared(opts)
        debris = opts.mode(SystemsRunOptions).poison
        mode_settings = {"poison": debris} if debris else None
        # the identity, the path it claims and every refusal of the outputs: before any embedding
        ident, out = plan_results(opts, ds, ctx, systems, mode="compare", mode_settings=mode_settings)
        file_name = (out or results_path(opts, ds, ctx, systems)).name
        return Plan(self.verb, opts, systems=names, items=len(ds.items), questions=len(ds.questions),
                    identity=ident, writes=planned_writes(opts, out),
                    state=RunState(ds=ds, ctx=ctx, out=out, systems=systems, tables=tables, reference=reference,
                                   mode_settings=mode_settings, file_name=file_name))

    def preview(self, plan: Plan) -> None:
        """``--plan``: the texts to embed (``Mode.preview``) and what the systems' ``plan_notes`` say."""
        super().preview(plan)
        plan.notes += system_plan_notes(plan.opts, plan.state.systems, plan.state.ds)

    def run(self, plan: Plan) -> Outcome:
        from memini_bench.modes import temporal

        if isinstance(plan.state, temporal.OverTimeState):
            return temporal.run(plan)
        opts, st = plan.opts, plan.state
        ctx, ds = st.ctx, st.ds
        results = run_all(st.systems, ds, opts.depth, guard=opts.guard, clock=lambda: encoder_clock(ctx))
        asked = opts.output.metric_list()  # -metrics: scored beside the defaults, printed in their own table
        scores = score_all(results, opts.k, asked)
        text = markdown(scores, ds.name, ds.category_labels, leaks=opts.guard.leaks == "count",
                        categories=st.tables, metrics=asked, caption=table_caption(opts, ds))
        own_tables, extra = breakdowns(ds, results, opts.k)  # the data set's own tables (LongMemEval turns, evidence)
        text += own_tables
        if opts.mode(SystemsRunOptions).significance:
            sig_text, extra["significance"] = significance_of(opts, results, st.reference)
            text += sig_text
        config = build_config(opts, ds, ctx, st.systems, timings_ms=stage_timings(st.systems),
                              mode_settings=st.mode_settings, identity=plan.identity)
        return Outcome(plan, 0, text, ScoredRuns(results, scores, config, extra))

    def write(self, outcome: Outcome) -> None:
        from memini_bench.modes import temporal

        if isinstance(outcome.plan.state, temporal.OverTimeState):
            return temporal.write(outcome)
        opts, out = outcome.plan.opts, outcome.plan.state.out
        if out is None:
            return
        data, ds = outcome.result, outcome.plan.state.ds
        write_results(out, results_document(data.config, data.scores, **data.extra))
        if opts.output.plot:
            from memini_bench.results.plots import category_bars

            png = out.with_name(f"{out.stem}-categories.png")
            category_bars(data.scores, png, title=ds.name, labels=ds.category_labels)
            log(f"wrote {png}")
        if opts.output.per_question:
            write_per_question(Path(opts.output.per_question), data.results)
            log(f"wrote {opts.output.per_question}")
        if opts.output.trec:
            for path in write_trec(Path(opts.output.trec), out.stem, data.results):
                log(f"wrote {path}")


def planned_writes(opts: RunOptions, out: Path | None) -> list[Path]:
    """The files and folders a run writes: its results file (None under -no-write: nothing), the -plot PNG, the
    -per-question file and the -trec folder."""
    if out is None:
        return []
    paths = [out]
    if opts.output.plot:
        paths.append(out.with_name(f"{out.stem}-categories.png"))
    paths += [Path(p) for p in (opts.output.per_question, opts.output.trec) if p]
    return paths
