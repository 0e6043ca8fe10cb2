"""``-sweep GRID``: one system over a grid of its settings, each cell against the baseline, with tune/held discipline.

The system is memini's hybrid, or the one ``-systems`` names among ``sweep_targets.TARGETS`` (``reference``).

Every cell (``memini_bench.modes.sweep_grid``) runs that system on the same prepared questions; embeddings and the
keyword index are built once per (embedder, keyword backend, loader settings, split) and shared by every cell (access
counts reset between cells). Each cell is compared with the *baseline* (the run's options without the grid) on the
same questions: exact McNemar on recall_any@K and a paired bootstrap interval on MRR and nDCG@K
(``significance.compare_pairs``), Holm-adjusted across the whole grid.

With ``-select METRIC`` (needs ``-holdout tune``) the best cell on the tune split (ties: the earlier cell) and
the baseline are then run on the held split; the report states how many cells were tried, since the held number
is the only honest one. Writes ``<out>/<stem>-sweep-<axes>/`` (claimed before any cell runs: its hashed name when
that folder holds another sweep, ``results.identity.claim``): one results file per cell (``<cell>.json``,
``baseline.json``, and ``held-*.json`` for a selection), ``summary.json`` and ``sweep.png`` (the selected metric,
or R@<smallest K>, over the grid with bootstrap intervals; needs matplotlib). Progress goes to stderr.

With ``-executor ray`` the driver first loads every data set and embeds every text once (``CellRunner.prepare``),
then the baseline and the cells run on Ray workers, each building its backends once from the shipped data sets
and vectors; results come back in grid order, so every ranking and score is the local run's (per-question
latencies are the workers'; the results config records the executor).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import time
from dataclasses import dataclass, field
from pathlib import Path

from memini_bench.core.dataset import Dataset
from memini_bench.core.runs import RunResult
from memini_bench.core.table import Cell as TableCell
from memini_bench.core.table import Column, Table, fmt_interval, fmt_points, render
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.settings import EmbedSettings
from memini_bench.embed.shipped import ShippedVectors
from memini_bench.errors import BenchError
from memini_bench.evaluation.metrics import score_all
from memini_bench.evaluation.runner import run_system
from memini_bench.executors import LocalExecutor, executor_for, run_encoder
from memini_bench.executors import describe as describe_executor
from memini_bench.loaders import LoadOptions, suite
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState
from memini_bench.modes.common import (
    build_config,
    check_outputs,
    load_prepared,
    log,
    mode_identity,
    results_path,
    run_identity,
    write_results,
)
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import SweepOptions, SystemsRunOptions
from memini_bench.modes.sweep_grid import (
    Axis,
    Cell,
    Metric,
    cells,
    check_size,
    check_suite_uses,
    file_stem,
    label,
    parse_grid,
    parse_metric,
)
from memini_bench.modes.sweep_targets import TARGETS, target_for
from memini_bench.progress import Task
from memini_bench.results.identity import results_identity
from memini_bench.results.provenance import cell_command, command_line, harness
from memini_bench.results.schema import SweepSummary
from memini_bench.results.write import results_document, write_results_file

ATTRS = {LoadOptions: "load", EmbedSettings: "embed", **{t.settings: t.attr for t in TARGETS.values()}}


def apply(opts: RunOptions, cell: Cell, axes: list[Axis], holdout: str | None = None) -> RunOptions:
    """``opts`` with a cell's settings (and another holdout split) applied."""
    owners = {a.field: a.owner for a in axes}
    changes: dict[str, dict] = {}
    for name, value in cell:
        changes.setdefault(ATTRS[owners[name]], {})[name] = value
    core = opts.core if holdout is None else dataclasses.replace(opts.core, holdout=holdout)
    return dataclasses.replace(opts, core=core, **{attr: dataclasses.replace(getattr(opts, attr), **values)
                                                   for attr, values in changes.items()})


@dataclass(frozen=True)
class PreparedCells:
    """What a cell worker needs (``-executor ray``): the prepared data sets and the driver's vectors."""

    datasets: dict[tuple, Dataset]
    vectors: dict[EmbedSettings, ShippedVectors]


class CellRunner:
    """Runs the swept system (``sweep_targets``) for one cell's options, sharing data sets, encoders and stores
    across cells."""

    def __init__(self, prepared: PreparedCells | None = None) -> None:
        self._datasets: dict[tuple, Dataset] = dict(prepared.datasets) if prepared else {}
        self._encoders: dict[EmbedSettings, TextEncoder] = ({s: v.encoder() for s, v in prepared.vectors.items()}
                                                            if prepared else {})
        self._backends: dict[tuple, object] = {}

    def dataset(self, opts: RunOptions) -> Dataset:
        key = (opts.load, opts.core.holdout)
        if key not in self._datasets:
            self._datasets[key] = load_prepared(opts)
        return self._datasets[key]

    def encoder(self, opts: RunOptions) -> TextEncoder:
        if opts.embed not in self._encoders:
            self._encoders[opts.embed] = run_encoder(opts.embed, opts.executor)
        return self._encoders[opts.embed]

    def run(self, opts: RunOptions) -> tuple[RunResult, Dataset]:
        ds = self.dataset(opts)
        target = target_for(opts)
        key = (target.system, target.key(opts), opts.embed, opts.load, opts.core.holdout)
        store = self._backends.get(key)
        if store is None:
            store = self._backends[key] = target.store(self.encoder(opts), opts, ds)
        return run_system(target.make(store, opts), ds, opts.depth), ds

    def prepare(self, jobs: list[RunOptions]) -> PreparedCells:
        """Load every job's data set and embed its documents, then its questions, in job order (the calls, and
        so the chunks and vectors, of running the jobs here), each text once; the cache writes stay here."""
        for job in jobs:
            ds = self.dataset(job)
            encoder = self.encoder(job)
            encoder.documents([item.content for item in ds.items])
            encoder.queries([q.query for q in ds.questions])
        return PreparedCells(dict(self._datasets), {s: ShippedVectors.of(e) for s, e in self._encoders.items()})

    def run_many(self, jobs: list[RunOptions], labels: list[str], split: str) -> list[RunResult]:
        """The baseline (``jobs[0]``) and each cell, in order: one after another here, or on the executor's workers
        (``-executor ray``), each building its backends once from ``prepare``'s data sets and vectors."""
        executor = executor_for(jobs[0].executor)
        if isinstance(executor, LocalExecutor):
            t0 = time.perf_counter()
            out = [self.run(jobs[0])[0]]
            baseline_s = time.perf_counter() - t0
            if labels:
                log(f"sweep ({split}): the baseline took {baseline_s:.1f} s (embedding and indexing included); "
                    f"{len(labels)} cells to go")
            t1 = time.perf_counter()
            with Task(f"sweep ({split}) cells", len(labels), "cells") as cells:
                for i, (job, name) in enumerate(zip(jobs[1:], labels, strict=True), 1):
                    if i > 1:
                        eta = (time.perf_counter() - t1) / (i - 1) * (len(labels) - i + 1)
                        log(f"sweep ({split}): cell {i}/{len(labels)}: {name} (ETA {eta:.0f} s)")
                    else:
                        log(f"sweep ({split}): cell {i}/{len(labels)}: {name}")
                    out.append(self.run(job)[0])
                    cells.tick()
            return out
        prepared = self.prepare(jobs)
        log(f"sweep ({split}): the baseline and {len(labels)} cells on -executor {executor.name}")
        return executor.map_stateful(CellRunner, prepared, _run_cell, jobs)


def _run_cell(runner: CellRunner, job: RunOptions) -> RunResult:
    """One job on a worker's runner (``map_stateful``'s work)."""
    return runner.run(job)[0]


@dataclass(frozen=True)
class Phase:
    """One split's cells: their results, scores and the paired tests against the baseline."""

    split: str
    labels: list[str]
    results: list[RunResult]
    scores: list[list]
    baseline: RunResult
    baseline_scores: list
    significance: object


def run_phase(runner: CellRunner, opts: RunOptions, axes: list[Axis], grid: list[Cell], split: str) -> Phase:
    from memini_bench.evaluation.significance import compare_pairs

    c = opts.mode(SystemsRunOptions)
    labels = [label(axes, cell) for cell in grid]
    jobs = [apply(opts, cell, axes, split) for cell in [(), *grid]]
    base, *cell_results = runner.run_many(jobs, labels, split)
    results = [dataclasses.replace(r, system=name) for r, name in zip(cell_results, labels, strict=True)]
    baseline = dataclasses.replace(base, system="baseline")
    select = opts.mode(SweepOptions).select
    extra = (parse_metric(select, opts.k).measure,) if select else ()  # a selection beyond the defaults is scored
    sig = compare_pairs([(r, baseline) for r in results], opts.k, resamples=c.resamples, seed=c.seed)
    return Phase(split, labels, results, [score_all([r], opts.k, extra) for r in results], baseline,
                 score_all([baseline], opts.k, extra), sig)


def table(phase: Phase, ks: tuple[int, ...], title: str) -> Table:
    """The phase's cells against its baseline: scores, and each cell's paired tests against the baseline (bold:
    significant after Holm); the footnote states N and the marks."""
    k0, k1 = ks[0], ks[-1]
    rows = {(r.system_a, r.metric): r for r in phase.significance.rows}
    figures = (f"recall_any@{k0}", f"recall_any@{k1}", "mrr", f"ndcg@{k1}")
    columns = (Column("cell", "cell", "left"), *(Column(name, name, better="higher") for name in figures),
               Column("delta_r", f"Δ recall_any@{k0} (pp)"), Column("p_r", "p McNemar (Holm)"),
               Column("delta_mrr", "Δ mrr (pp) [95% CI]"), Column("p_mrr", "p (Holm)"))

    def line(name: str, scores: list, sig_name: str | None) -> tuple[TableCell, ...]:
        s0, s1 = scores[0], scores[-1]
        cells_ = [TableCell(name, name), *(TableCell(v, fmt_points(v)) for v in (
            s0["recall_any@{k}"], s1["recall_any@{k}"], s0["mrr"], s1["ndcg@{k}"]))]
        if sig_name is None:
            return (*cells_, *(TableCell(None, "") for _ in range(4)))
        r, m = rows[(sig_name, f"recall_any@{k0}")], rows[(sig_name, "mrr")]
        return (*cells_, TableCell(r.delta, fmt_points(r.delta, signed=True), strong=r.significant),
                TableCell((r.p, r.p_adjusted), f"{r.p:.3g} ({r.p_adjusted:.3g})"),
                TableCell((m.delta, m.ci_low, m.ci_high), f"{fmt_points(m.delta, signed=True)} "
                          f"{fmt_interval(m.ci_low, m.ci_high)}", strong=m.significant),
                TableCell((m.p, m.p_adjusted), f"{m.p:.3g} ({m.p_adjusted:.3g})"))

    body = (line("baseline (the run's settings)", phase.baseline_scores, None),
            *(line(lbl, sc, lbl) for lbl, sc in zip(phase.labels, phase.scores, strict=True)))
    notes = (f"N: {len(phase.baseline.questions)} questions of the {phase.split} split, every cell and the baseline "
             "on the same ones; scores in percent, Δ in points against the baseline.",
             "Bold: significant at 0.05 after Holm across the grid (McNemar for recall_any@K, paired bootstrap for "
             "mrr); not bold: tested, not significant.")
    return Table(columns, body, title=f"## {title}", notes=notes, notes_in_markdown=True)


def markdown(phase: Phase, ks: tuple[int, ...], title: str) -> str:
    return render(table(phase, ks, title), "md") + "\n"


def _checked_grid(opts: RunOptions) -> tuple[list[Axis], list[Cell], object]:
    """The axes, the cells and the -select metric (None without it), every refusal of them before any work."""
    s = opts.mode(SweepOptions)
    axes = parse_grid(s.sweep, target_for(opts).settings)
    check_suite_uses(axes, opts.suite, suite(opts.suite).uses)
    grid = cells(axes)
    check_size(len(grid), s.sweep_max_cells)
    metric = parse_metric(s.select, opts.k) if s.select else None
    if metric is not None and opts.core.holdout != "tune":
        raise BenchError("-select: picks on the tune split and reports on held; add -holdout tune")
    return axes, grid, metric


@dataclass
class SweepState(PlanState):
    """A sweep's plan state: the grid's axes and cells, the selection metric (None without -select) and the runner
    its cells share."""

    axes: list[Axis] = field(default_factory=list)
    grid: list[Cell] = field(default_factory=list)
    metric: Metric | None = None
    runner: CellRunner | None = None


@dataclass
class SweepRun:
    """A sweep's result: the tune (or only) split's phase, the held phase of the selected cell and its index
    (None without -select)."""

    tune: Phase
    held: Phase | None = None
    winner: int | None = None


class SweepMode(Mode):
    """``memini-bench sweep`` (see the module docstring): ``plan`` parses and checks the grid and claims the sweep's
    folder (loading the data and building the encoder for the baseline's identity); ``run`` runs every cell on the
    split, then, with -select, the winner on held; ``render`` prints the tables; ``write`` the folder's files."""

    verb = "sweep"

    def plan(self, opts: RunOptions) -> Plan:
        axes, grid, metric = _checked_grid(opts)
        check_outputs(opts)
        executor_for(opts.executor)  # a missing extra or an unreachable cluster: one line before any work
        log(f"sweep: {len(grid)} cells over {', '.join(a.flag for a in axes)}, each against the baseline")
        runner = CellRunner()
        plan = Plan(self.verb, opts, notes=[f"{len(grid)} cells over {', '.join(a.flag for a in axes)}, each against "
                                            "the baseline" + (f"; the best by {metric.name} on tune is run on held"
                                                              if metric else "")],
                    state=SweepState(axes=axes, grid=grid, metric=metric, runner=runner))
        if not opts.output.no_write:
            folder, ident = sweep_folder(opts, runner, axes, grid, metric)
            plan.claim(folder, ident, suffix="", read=lambda f: results_identity(f / "summary.json"))
        return plan

    def run(self, plan: Plan) -> Outcome:
        opts, st = plan.opts, plan.state
        axes, grid, metric, runner = st.axes, st.grid, st.metric, st.runner
        tune = run_phase(runner, opts, axes, grid, opts.core.holdout)
        title = (f"sweep over {', '.join(a.flag for a in axes)}: {len(grid)} cells, split {opts.core.holdout}, "
                 f"{len(tune.baseline.questions)} questions")
        text = markdown(tune, opts.k, title)
        held, winner = None, None
        if metric is not None:
            values = [metric.of(sc) for sc in tune.scores]
            winner = max(range(len(grid)), key=lambda i: (values[i], -i))
            text += (f"selected on tune by {metric.name}: {tune.labels[winner]} ({fmt_points(values[winner])}; "
                     f"baseline {fmt_points(metric.of(tune.baseline_scores))}) out of {len(grid)} cells tried. "
                     "The tune figures are optimistic (the winner was picked on them); the held figures below "
                     "are the honest ones.\n\n")
            held = run_phase(runner, opts, axes, [grid[winner]], "held")
            text += markdown(held, opts.k, f"selected cell vs baseline on held ({len(held.baseline.questions)} "
                                           "questions)")
        return Outcome(plan, 0, text, SweepRun(tune, held, winner))

    def write(self, outcome: Outcome) -> None:
        st, data = outcome.plan.state, outcome.result
        for folder, ident in outcome.plan.claims.items():
            write_sweep(outcome.plan.opts, st.runner, st.axes, st.grid, data.tune, data.held, data.winner, st.metric,
                        folder, ident)


def sweep_folder(opts: RunOptions, runner: CellRunner, axes: list[Axis], grid: list[Cell],
                 metric) -> tuple[Path, dict]:
    """Before any cell runs: the sweep's folder, ``<out>/<stem>-sweep-<axes>`` (the plan claims it: its hashed name
    when that folder's ``summary.json`` records another sweep), and its identity (``sweep_identity``), whose
    baseline's run identity (data sha256, K list, embedder, every setting) needs the data set and the encoder."""
    base_opts = apply(opts, (), axes, opts.core.holdout)
    ds = runner.dataset(base_opts)
    ctx = opts.fixed_context(runner.encoder(opts))
    baseline = run_identity(base_opts, ds, ctx, None, mode="sweep-cell", mode_settings={"cell": {}})
    stem = results_path(opts, ds, ctx, None).stem
    return (Path(opts.output.out) / f"{stem}-sweep-{'-'.join(a.flag for a in axes)}",
            sweep_identity(opts, axes, grid, metric, baseline))


def sweep_identity(opts: RunOptions, axes: list[Axis], grid: list[Cell], metric, baseline: dict) -> dict:
    """The sweep's identity (``modes.common.mode_identity``): the grid, the selection, the paired tests' settings
    and the baseline's run identity."""
    return mode_identity(opts, "sweep", {"sweep": opts.mode(SweepOptions).sweep, "axes": [a.flag for a in axes],
                                         "cells": len(grid), "select": metric.name if metric else ""},
                         shared=("significance",), measured={"baseline": baseline})


def write_sweep(opts, runner, axes, grid, tune, held, winner, metric, folder: Path, ident: dict) -> None:
    encoder = runner.encoder(opts)
    for phase, phase_grid in ((tune, grid), (held, [grid[winner]] if winner is not None else [])):
        if phase is None:
            continue
        prefix = "held-" if phase is held else ""
        for cell, scores in [((), phase.baseline_scores), *zip(phase_grid, phase.scores, strict=True)]:
            cell_opts = apply(opts, cell, axes, phase.split)
            ctx = cell_opts.fixed_context(encoder)
            config = build_config(cell_opts, runner.dataset(cell_opts), ctx, None, mode="sweep-cell",
                                  mode_settings={"cell": dict(cell)}, cell=label(axes, cell) if cell else "baseline")
            name = f"{prefix}{file_stem(axes, cell) if cell else 'baseline'}.json"
            write_results(folder / name, results_document(config, scores))
    summary = {"config": {"sweep": opts.mode(SweepOptions).sweep, "axes": [dataclasses.asdict(a) | {"owner": a.owner
               .__name__} for a in axes], "select": metric.name if metric else "", "holdout": opts.core.holdout,
               "cells": len(grid), "ks": list(opts.k), "executor": describe_executor(opts.executor),
               "identity": ident, **harness()},
               "tune": _phase_doc(tune, target_for(opts).system),
               "held": _phase_doc(held, target_for(opts).system) if held else None,
               "selected": tune.labels[winner] if winner is not None else None}
    write_results_file(folder / "summary.json", SweepSummary(config=summary.pop("config"), extra=summary))
    log(f"wrote {folder / 'summary.json'}")
    if importlib.util.find_spec("matplotlib") is None:
        log("no sweep.png: matplotlib is not installed (pip install 'memini-bench[plot]')")
        return
    _plot(folder / "sweep.png", axes, grid, tune, winner, metric, opts)


def _phase_doc(phase: Phase, system: str) -> dict:
    """One split's part of ``summary.json``: the baseline's and every cell's scores, each with the plain run that
    reproduces it (``provenance.cell_command``; the cell files are not needed to rerun a cell), and the tests."""
    sweep_command = command_line()
    return {"split": phase.split, "baseline": [dataclasses.asdict(s) for s in phase.baseline_scores],
            "baseline_command": cell_command(sweep_command, "baseline", phase.split, system),
            "cells": [{"cell": lbl, "command": cell_command(sweep_command, lbl, phase.split, system),
                       "scores": [dataclasses.asdict(s) for s in sc]}
                      for lbl, sc in zip(phase.labels, phase.scores, strict=True)],
            "significance": [dataclasses.asdict(r) for r in phase.significance.rows]}


def _plot(path: Path, axes, grid, tune: Phase, winner, metric, opts: RunOptions) -> None:
    from memini_bench.core.metrics import RecallAnyAtK
    from memini_bench.evaluation.stats import bootstrap_mean
    from memini_bench.results.plots import SweepCell, SweepFigure, sweep_plot

    metric = metric or Metric(RecallAnyAtK(k=opts.k[0]).name, RecallAnyAtK(k=opts.k[0]), opts.k[0])
    c = opts.mode(SystemsRunOptions)

    def cell_of(settings, result, scores) -> SweepCell:
        """The cell's value and, for recall_any (a 0/1 per question), its bootstrap interval."""
        value = metric.of(scores)
        if type(metric.measure) is RecallAnyAtK:
            ci = bootstrap_mean([metric.measure.per_question(q) for q in result.questions], resamples=c.resamples,
                                seed=c.seed)
            return SweepCell(settings, value, ci.low, ci.high)
        return SweepCell(settings, value, value, value)

    figure_cells = tuple(cell_of(tuple((a.flag, v) for a, (_, v) in zip(axes, cell, strict=True)), r, sc)
                         for cell, r, sc in zip(grid, tune.results, tune.scores, strict=True))
    selected = figure_cells[winner].settings if winner is not None else None
    baseline = cell_of((), tune.baseline, tune.baseline_scores)
    sweep_plot(SweepFigure(metric.name, tuple(a.flag for a in axes), figure_cells, selected, baseline,
                           f"{target_for(opts).system} sweep ({tune.split})"), path)
    log(f"wrote {path}")
