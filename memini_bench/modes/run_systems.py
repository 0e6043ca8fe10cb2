"""The normal run: load and prepare the data set, run the systems, print tables, write results.

Shared by every mode: ``load_prepared`` (load, notes, holdout and limit), ``build_config`` (what a results file
records) and ``write_results`` (the identity-checked JSON write).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.contract import System, SystemContext, describe
from memini_bench.core.dataset import Dataset, prepare
from memini_bench.core.settings import Int, setting
from memini_bench.embed.factory import EmbedSettings
from memini_bench.errors import BenchError
from memini_bench.evaluation.breakdowns import breakdowns
from memini_bench.evaluation.metrics import score_all
from memini_bench.evaluation.runner import RunResult, run_all
from memini_bench.executors import ExecutorOptions, executor_for
from memini_bench.executors import describe as describe_executor
from memini_bench.loaders import LoadOptions, load
from memini_bench.loaders.poison import poison, poison_setting
from memini_bench.modes.options import CoreOptions, RunOptions
from memini_bench.results.identity import check_overwrite, identity, stem
from memini_bench.results.provenance import harness
from memini_bench.results.write import (
    OutputOptions,
    check_destinations,
    markdown,
    per_question_rows,
    results_document,
    write_json,
    write_jsonl,
    write_trec,
)
from memini_bench.systems.lineup import DEFAULT_SYSTEMS, context_for, systems_for
from memini_bench.systems.memini import HybridConfig


@dataclass(frozen=True)
class CompareOptions:
    significance: bool = setting("significance", False, "Also test every system against the hybrid (or the first "
                                 "system) on the same questions: exact McNemar on R@K, paired bootstrap on MRR and "
                                 "nDCG@K, Holm across the family.")
    resamples: int = setting("resamples", 10_000, "Bootstrap resamples for -significance and -sweep.",
                             type=Int(min=100, max=1_000_000))
    seed: int = setting("seed", 0, "Bootstrap seed for -significance and -sweep.", type=Int(min=0))
    poison: int = poison_setting()


NAME = "the system comparison"
USES = (CoreOptions, LoadOptions, HybridConfig, EmbedSettings, OutputOptions, ExecutorOptions)


OPTIONS = CompareOptions


def significance_of(opts: RunOptions, results: list[RunResult]) -> list[dict]:
    """Print and return the paired tests of every system against the hybrid (else the first system)."""
    from memini_bench.evaluation.significance import compare_run
    from memini_bench.evaluation.significance import markdown as sig_markdown

    names = [r.system for r in results]
    if len(names) < 2:
        raise BenchError("-significance: needs at least two systems in the run (see -systems)")
    c = opts.mode(CompareOptions)
    reference = "memini-hybrid" if "memini-hybrid" in names else names[0]
    sig = compare_run(results, opts.k, reference=reference, resamples=c.resamples, seed=c.seed)
    sys.stdout.write("\n" + sig_markdown(sig, f"{reference} against each system, paired on the same questions"))
    return [dataclasses.asdict(r) for r in sig.rows]


def selected(opts: RunOptions) -> bool:
    """The default mode: always selected when no other mode is."""
    return True


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_prepared(opts: RunOptions) -> Dataset:
    """Load the suite, report what the loader dropped, apply holdout and limit, and say what will be scored."""
    ds = load(opts.suite, opts.data, opts.load)
    log(f'dataset "{ds.name}": {len(ds.items)} items, {len(ds.questions)} questions')
    for note in ds.notes:
        log(f"  note: {note}")
    prepared = prepare(ds, holdout=opts.core.holdout, limit=opts.core.limit)
    if prepared is not ds:
        log(f'prepared "{prepared.name}": {len(prepared.items)} items, scoring {len(prepared.questions)} of '
            f"{len(ds.questions)} questions (holdout {opts.core.holdout}, limit {opts.core.limit or 'none'})")
    debris = opts.mode(CompareOptions).poison
    if debris:
        prepared = poison(prepared, debris)
        log(f'poisoned "{prepared.name}": {prepared.notes[-1].removeprefix("poisoned: ")}')
    note = opts.hybrid.floor_note(opts.k)
    if note:
        log(f"  note: {note}")
    return prepared


def embedder_name(ctx: SystemContext | None) -> str:
    """The resolved embedder of a context whose encoder was built, else "" (a keyword-only run embeds nothing)."""
    if ctx is None or not ctx.encoder_built:
        return ""
    return ctx.options.embed.resolved


def build_config(opts: RunOptions, ds: Dataset, ctx: SystemContext | None, systems: list[System] | None = None,
                 *, mode: str = "compare", mode_settings: dict | None = None, **extra: object) -> dict:
    """What a results file records: the data (path, sha256, sizes, notes), every setting (``identity``), the
    systems' ``describe()``, the encoder, the executor, the harness version."""
    data_path = opts.data or ("data/sample.json" if opts.suite == "sample" else "")
    embedder = embedder_name(ctx)
    names = [s.name for s in systems or []]
    config: dict[str, object] = {
        "mode": mode, "suite": opts.suite, "dataset": ds.name, "data": data_path,
        "data_sha256": ds.source_sha256,  # of the bytes the loader parsed: a FIFO or <(...) is never read twice
        "ks": list(opts.k), "holdout": opts.core.holdout, "limit": opts.core.limit,
        "session_doc": opts.load.session_doc if opts.suite == "longmemeval" else "",
        "abstention": opts.load.abstention if opts.suite == "longmemeval" else "",
        "shared_haystack": opts.load.shared_haystack, "items": len(ds.items), "questions": len(ds.questions),
        **hybrid_settings(opts), "embedder": embedder,
        "identity": identity(opts, systems=names, embedder=embedder, mode=mode, mode_settings=mode_settings),
        "systems": [describe(s) for s in systems or []],
    }
    if ctx is not None and ctx.encoder_built:
        config.update(ctx.encoder.describe())
    config["executor"] = describe_executor(opts)  # where the work ran; not in the identity (it changes no number)
    if ds.category_labels:
        config["category_labels"] = ds.category_labels
    config["notes"] = list(ds.notes)
    config.update(extra)
    config.update(harness())
    return config


def hybrid_settings(opts: RunOptions) -> dict[str, object]:
    """The hybrid settings as a results config records them (``fusion_alpha`` is ``-fusion``)."""
    settings = dataclasses.asdict(opts.hybrid)
    settings["fusion_alpha"] = settings.pop("fusion")
    return settings


def results_path(opts: RunOptions, ds: Dataset, ctx: SystemContext | None, systems: list[System] | None,
                 suffix: str = "", extra_tokens: tuple[str, ...] = ()) -> Path:
    """``<out>/<stem>.json`` (``identity.stem``); ``systems`` None = a mode that runs no System lineup."""
    names = None if systems is None else [s.name for s in systems]
    return Path(opts.output.out) / (stem(opts, ds.name, embedder=embedder_name(ctx), systems=names,
                                         default_systems=list(DEFAULT_SYSTEMS), suffix=suffix,
                                         extra_tokens=extra_tokens) + ".json")


def write_results(path: Path, doc: dict) -> None:
    """Write ``doc`` to ``path`` unless ``path`` holds a run with another identity (then a BenchError)."""
    check_overwrite(path, doc["config"]["identity"])
    write_json(path, doc)
    log(f"wrote {path}")


def check_outputs(opts: RunOptions) -> None:
    """Refuse unusable destinations, and ``-plot`` without matplotlib, before any work."""
    if not opts.output.no_write:
        check_destinations(folders=[("-out", opts.output.out), ("-trec", opts.output.trec)],
                           files=[("-per-question", opts.output.per_question)])
        if opts.output.plot and importlib.util.find_spec("matplotlib") is None:
            from memini_bench.results.plots import plot_needs

            raise BenchError(plot_needs("-plot"))


def run(opts: RunOptions) -> int:
    check_outputs(opts)
    executor_for(opts)  # a missing extra or an unreachable cluster: one line before any work
    ctx = context_for(opts)
    systems = systems_for(opts, ctx)
    ds = load_prepared(opts)
    results = run_all(systems, ds, opts.depth)
    scores = score_all(results, opts.k)
    sys.stdout.write(markdown(scores, ds.name, ds.category_labels))
    tables, extra = breakdowns(ds, results, opts.k)  # the data set's own tables (LongMemEval turns, evidence)
    sys.stdout.write(tables)
    if opts.mode(CompareOptions).significance:
        extra["significance"] = significance_of(opts, results)
    sys.stdout.flush()
    if opts.output.no_write:
        return 0
    backend = getattr(systems[0], "backend", None)
    debris = opts.mode(CompareOptions).poison
    config = build_config(opts, ds, ctx, systems, timings_ms=getattr(backend, "timings_ms", {}),
                          mode_settings={"poison": debris} if debris else None)
    out = results_path(opts, ds, ctx, systems)
    write_results(out, {**results_document(config, scores), **extra})
    if opts.output.plot:
        from memini_bench.results.plots import category_bars

        png = out.with_name(f"{out.stem}-categories.png")
        category_bars(scores, png, title=ds.name, labels=ds.category_labels)
        log(f"wrote {png}")
    if opts.output.per_question:
        write_jsonl(Path(opts.output.per_question), per_question_rows(results))
        log(f"wrote {opts.output.per_question}")
    if opts.output.trec:
        for path in write_trec(Path(opts.output.trec), out.stem, results):
            log(f"wrote {path}")
    return 0
