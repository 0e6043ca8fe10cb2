"""The normal run: load and prepare the data set, run the systems, print tables, write results (every step but the
systems' own work lives in ``modes.common``)."""

from __future__ import annotations

import sys
from pathlib import Path

from memini_bench.core.options import CoreOptions
from memini_bench.embed.factory import EmbedSettings
from memini_bench.errors import BenchError
from memini_bench.evaluation.breakdowns import breakdowns
from memini_bench.evaluation.hits import RunGuardOptions
from memini_bench.evaluation.metrics import score_all
from memini_bench.evaluation.runner import run_all
from memini_bench.executors import ExecutorOptions, executor_for
from memini_bench.loaders import LoadOptions
from memini_bench.modes.common import (
    CompareOptions,
    build_config,
    category_systems,
    check_outputs,
    load_prepared,
    log,
    plan_results,
    reference_of,
    significance_of,
    write_results,
)
from memini_bench.modes.compare_files import SignificanceOptions
from memini_bench.modes.options import RunOptions
from memini_bench.results.write import (
    OutputOptions,
    markdown,
    results_document,
    write_per_question,
    write_trec,
)
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.lineup import LineupOptions, systems_for
from memini_bench.systems.reference_settings import ReferenceSettings

NAME = "the system comparison"


SUMMARY = "the normal run: significance tests and poisoning"


USES = (CoreOptions, LineupOptions, LoadOptions, HybridConfig, EmbedSettings, OutputOptions, ExecutorOptions,
        ReferenceSettings, RunGuardOptions, "reference")


OPTIONS = CompareOptions


def selected(opts: RunOptions) -> bool:
    """The default mode: always selected when no other mode is."""
    return True


def encoder_clock(ctx) -> tuple[float, float]:
    """The run's encoder's (model load, embedding) times so far; (0, 0) while it is not built (keyword only)."""
    return ctx.encoder.clock() if ctx.encoder_built and ctx.encoder is not None else (0.0, 0.0)


def run(opts: RunOptions) -> int:
    check_outputs(opts)
    executor_for(opts.executor)  # a missing extra or an unreachable cluster: one line before any work
    ctx = opts.context()
    systems = systems_for(opts.lineup, ctx)
    names = [s.name for s in systems]
    tables = category_systems(opts, names)  # a wrong -reference or -categories: refused before any work
    reference = opts.mode(SignificanceOptions).reference
    if opts.mode(CompareOptions).significance:
        reference_of(reference, names)
    elif "reference" in opts.given:
        raise BenchError("-reference: used with -significance (or -compare); add -significance or drop it")
    ds = load_prepared(opts)
    debris = opts.mode(CompareOptions).poison
    mode_settings = {"poison": debris} if debris else None
    # the identity, the path it claims and every refusal of the outputs: before any embedding
    ident, out = plan_results(opts, ds, ctx, systems, mode="compare", mode_settings=mode_settings)
    results = run_all(systems, ds, opts.depth, guard=opts.guard, clock=lambda: encoder_clock(ctx))
    scores = score_all(results, opts.k)
    sys.stdout.write(markdown(scores, ds.name, ds.category_labels, leaks=opts.guard.leaks == "count",
                              categories=tables))
    own_tables, extra = breakdowns(ds, results, opts.k)  # the data set's own tables (LongMemEval turns, evidence)
    sys.stdout.write(own_tables)
    if opts.mode(CompareOptions).significance:
        extra["significance"] = significance_of(opts, results, reference)
    sys.stdout.flush()
    if opts.output.no_write:
        return 0
    backend = getattr(systems[0], "backend", None)
    config = build_config(opts, ds, ctx, systems, timings_ms=getattr(backend, "timings_ms", {}),
                          mode_settings=mode_settings, identity=ident)
    write_results(out, results_document(config, scores, **extra))
    if opts.output.plot:
        from memini_bench.results.plots import category_bars

        png = out.with_name(f"{out.stem}-categories.png")
        category_bars(scores, png, title=ds.name, labels=ds.category_labels)
        log(f"wrote {png}")
    if opts.output.per_question:
        write_per_question(Path(opts.output.per_question), results)
        log(f"wrote {opts.output.per_question}")
    if opts.output.trec:
        for path in write_trec(Path(opts.output.trec), out.stem, results):
            log(f"wrote {path}")
    return 0
