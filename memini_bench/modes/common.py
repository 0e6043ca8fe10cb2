"""What every mode shares: loading and preparing the data set (``load_prepared``), what a results file records
(``build_config``), its path (``results_path``) and identity claimed before any work (``plan_results``), the
identity-checked write (``write_results``), the checks of the destinations before any work (``check_outputs``),
and the paired tests of a run's systems (``significance_of``) under the normal run's own flags
(``modes.specs.SystemsRunOptions``: -significance, -resamples, -seed, -poison, -categories), which -sweep and
-compare read in part.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from memini_bench.core.contract import System, describe
from memini_bench.core.dataset import Dataset, prepare
from memini_bench.core.runs import RunResult
from memini_bench.errors import BenchError
from memini_bench.executors import describe as describe_executor
from memini_bench.loaders import load
from memini_bench.loaders.known_bad import status as known_bad_status
from memini_bench.loaders.poison import poison
from memini_bench.loaders.protocols import protocol_of
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import SystemsRunOptions
from memini_bench.results.identity import Companion, check_overwrite, claim, identity, stem
from memini_bench.results.provenance import harness
from memini_bench.results.schema import ResultsFile
from memini_bench.results.write import (
    check_destinations,
    write_results_file,
)
from memini_bench.systems.context import SystemContext
from memini_bench.systems.lineup import DEFAULT_SYSTEMS


def category_systems(opts: RunOptions, names: list[str]) -> list[str] | None:
    """-categories: the systems whose per-category table is printed (None = the default one); ``all`` = every one.
    A name is taken as ``-systems`` takes it: a registered alias (``hybrid``) stands for its system."""
    from memini_bench.core.registry import SYSTEMS

    wanted = opts.mode(SystemsRunOptions).categories
    if not wanted:
        return None
    if wanted == ("all",):
        return list(names)
    out = []
    for name in wanted:
        full = name if name in names else SYSTEMS.canonical(name)
        if full not in names:
            raise BenchError(f"-categories {name}: not among this run's systems ({', '.join(names)}); name one of "
                             "them, or all")
        out.append(full)
    return list(dict.fromkeys(out))


def reference_of(wanted: str, names: list[str]) -> str:
    """``wanted`` (-reference), checked against the run's systems; "" = the ``reference`` system when it runs,
    else memini-hybrid when it runs, else the first system."""
    if wanted:
        if wanted not in names:
            raise BenchError(f"-reference {wanted}: not among this run's systems ({', '.join(names)}); name one of "
                             "them")
        return wanted
    return next((n for n in ("reference", "memini-hybrid") if n in names), names[0])


def significance_of(opts: RunOptions, results: list[RunResult], reference: str = "") -> tuple[str, list[dict]]:
    """The paired tests of every system against ``reference`` (``reference_of``): their markdown table (after a
    blank line, as the run prints it) and their rows (as a results file records them)."""
    from memini_bench.evaluation.significance import compare_run
    from memini_bench.evaluation.significance import markdown as sig_markdown

    names = [r.system for r in results]
    if len(names) < 2:
        raise BenchError("-significance: needs at least two systems in the run (see -systems)")
    c = opts.mode(SystemsRunOptions)
    reference = reference_of(reference, names)
    sig = compare_run(results, opts.k, reference=reference, resamples=c.resamples, seed=c.seed)
    text = "\n" + sig_markdown(sig, f"{reference} against each system, paired on the same questions")
    return text, [dataclasses.asdict(r) for r in sig.rows]


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
    debris = opts.mode(SystemsRunOptions).poison
    if debris:
        prepared = poison(prepared, debris)
        log(f'poisoned "{prepared.name}": {prepared.notes[-1].removeprefix("poisoned: ")}')
    note = opts.hybrid.floor_note(opts.k)
    if note:
        log(f"  note: {note}")
    from memini_bench.loaders.protocols import depth_notes

    for note in depth_notes(prepared, opts.k):
        log(f"  note: {note}")
    return prepared


def table_caption(opts: RunOptions, ds: Dataset) -> str:
    """The line under a table's heading: N, the suite's protocol and its known-bad list's status (``""`` for a
    suite that declares neither)."""
    from memini_bench.loaders.protocols import caption

    listed = known_bad_status(ds, opts.suite)
    return caption(ds, opts.suite, opts.load, listed) if listed or protocol_of(opts.suite, opts.load) else ""


def embedder_name(ctx: SystemContext | None) -> str:
    """The resolved embedder of a context whose encoder was built, else "" (a keyword-only run embeds nothing)."""
    if ctx is None or not ctx.encoder_built:
        return ""
    return ctx.embed.resolved


EMBEDDING_IDENTITY = ("embed_model", "embed_dims", "query_prefix", "doc_prefix", "max_tokens")


def embedding_identity(encoder) -> dict[str, object]:
    """What of an encoder changes its vectors: the model (an endpoint's model and dimensions are in its
    identity), the dimensions, the query and document prefixes, the max tokens."""
    described = encoder.describe()
    return {k: described[k] for k in EMBEDDING_IDENTITY if k in described}


def shared_parts(opts: RunOptions, *names: str) -> dict[str, object]:
    """The parts of a results identity that every mode reads from the options the same way, keyed as the results
    files record them: ``ks`` (the K list), ``split`` (holdout and limit), ``hybrid`` (every hybrid setting, as
    ``hybrid_settings``), ``significance`` (the paired tests' settings, nested), ``bootstrap`` (the same, flat),
    ``leaks`` (the leak rule, only when it is not the default)."""
    c = opts.mode(SystemsRunOptions)
    parts = {"ks": lambda: {"ks": list(opts.k)},
             "split": lambda: {"holdout": opts.core.holdout, "limit": opts.core.limit},
             "hybrid": lambda: hybrid_settings(opts),
             "significance": lambda: {"significance": {"resamples": c.resamples, "seed": c.seed}},
             "bootstrap": lambda: {"resamples": c.resamples, "seed": c.seed},
             "leaks": lambda: {"leaks": opts.guard.leaks} if opts.guard.leaks != type(opts.guard)().leaks else {}}
    out: dict[str, object] = {}
    for name in names:
        out.update(parts[name]())
    return out


def mode_identity(opts: RunOptions, mode: str, own: Mapping[str, object], *, shared: Sequence[str] = (),
                  measured: Mapping[str, object] | None = None) -> dict:
    """The results identity of a mode whose file is not one run of a lineup (a sweep's folder, VetoBench's files,
    a comparison of files): ``mode``, the mode's ``own`` settings, the ``shared`` parts read as every mode reads
    them (``shared_parts``) and what only its plan measured (data sha256s, the embedders as built, the systems'
    ``describe()``, a baseline's ``run_identity``). A run of a lineup has ``run_identity``, on the same parts."""
    return {"mode": mode, **own, **shared_parts(opts, *shared), **(measured or {})}


def run_identity(opts: RunOptions, ds: Dataset, ctx: SystemContext | None, systems: list[System] | None, *,
                 mode: str = "compare", mode_settings: dict | None = None, settings_of_systems: bool = True) -> dict:
    """A results file's identity (``results.identity.identity``) with what only the run knows: the data file's
    sha256, the K list, the embedder as built (model, dimensions, query and document prefixes, max tokens; an
    endpoint's model and dimensions are in its identity), each system's ``describe()`` (taken before the run, when
    ``settings_of_systems``), the paired tests' settings and the leak rule (``shared_parts``)."""
    names = [s.name for s in systems or []]
    run: dict[str, object] = {"data_sha256": ds.source_sha256, **shared_parts(opts, "ks")}
    if ctx is not None and ctx.encoder_built:
        run["embedding"] = embedding_identity(ctx.encoder)
    if settings_of_systems and systems:
        run["system_settings"] = [describe(s) for s in systems]
    if opts.mode(SystemsRunOptions).significance:
        run.update(shared_parts(opts, "significance"))
    run.update(shared_parts(opts, "leaks"))
    return {**identity(opts.settings, systems=names, embedder=embedder_name(ctx), mode=mode,
                       mode_settings=mode_settings), "run": run}


def claim_outputs(opts: RunOptions, path: Path, ident: dict, names: list[str] = (), *,
                  companions: Sequence[Companion] = ()) -> Path:
    """Before any embedding: the path this run's results take (``results.identity.claim``: ``path``, or its hashed
    name when ``path`` holds a run of another identity), after refusing a ``-per-question`` path that is that
    file and two systems whose TREC run files would be one file."""
    out = claim(path, ident, companions=companions)
    if opts.output.per_question and Path(opts.output.per_question).resolve() == out.resolve():
        raise BenchError(f"-per-question {opts.output.per_question}: is this run's results file; give another path")
    if opts.output.trec:
        from memini_bench.results.write import trec_run_names

        trec_run_names(list(names))
    return out


def plan_results(opts: RunOptions, ds: Dataset, ctx: SystemContext | None, systems: list[System] | None, *,
                 mode: str, mode_settings: dict | None = None, suffix: str = "",
                 extra_tokens: tuple[str, ...] = ()) -> tuple[dict, Path | None]:
    """A mode's results identity (``run_identity``, the systems' ``describe()`` taken now) and the path it claims
    (None under ``-no-write``), both before any work."""
    ident = run_identity(opts, ds, ctx, systems, mode=mode, mode_settings=mode_settings)
    if opts.output.no_write:
        return ident, None
    path = results_path(opts, ds, ctx, systems, suffix, extra_tokens)
    return ident, claim_outputs(opts, path, ident, [s.name for s in systems or []])


def build_config(opts: RunOptions, ds: Dataset, ctx: SystemContext | None, systems: list[System] | None = None,
                 *, mode: str = "compare", mode_settings: dict | None = None, identity: dict | None = None,
                 **extra: object) -> dict:
    """What a results file records: the data (path, sha256, sizes, notes), every setting (``identity``: the one
    checked before the run when given, else ``run_identity`` now, without the systems' settings, which a run may
    change), the systems' ``describe()``, the encoder, the executor, the harness version."""
    data_path = opts.data or ("memini_bench/data/sample.json" if opts.suite == "sample" else "")
    embedder = embedder_name(ctx)
    config: dict[str, object] = {
        "mode": mode, "suite": opts.suite, "dataset": ds.name, "data": data_path,
        "data_sha256": ds.source_sha256,  # of the bytes the loader parsed: a FIFO or <(...) is never read twice
        "ks": list(opts.k), "holdout": opts.core.holdout, "limit": opts.core.limit,
        "protocol": protocol_of(opts.suite, opts.load), "known_bad": known_bad_status(ds, opts.suite),
        "session_doc": opts.load.session_doc if opts.suite == "longmemeval" else "",
        "abstention": opts.load.abstention if opts.suite == "longmemeval" else "",
        "shared_haystack": opts.load.shared_haystack, "items": len(ds.items), "questions": len(ds.questions),
        **hybrid_settings(opts), "embedder": embedder,
        "identity": identity if identity is not None else run_identity(
            opts, ds, ctx, systems, mode=mode, mode_settings=mode_settings, settings_of_systems=False),
        "systems": [describe(s) for s in systems or []],
    }
    if ctx is not None and ctx.encoder_built:
        config.update(ctx.encoder.describe())
    # Where the work ran; not in the identity (it changes no number).
    config["executor"] = describe_executor(opts.executor)
    if ds.category_labels:
        config["category_labels"] = ds.category_labels
    config["notes"] = list(ds.notes)
    config.update(extra)
    config.update(harness())
    return config


def hybrid_settings(opts: RunOptions) -> dict[str, object]:
    """The hybrid settings as a results config records them (``fusion_alpha`` is ``-fusion``)."""
    settings = opts.hybrid.as_dict()
    settings["fusion_alpha"] = settings.pop("fusion")
    return settings


def results_path(opts: RunOptions, ds: Dataset, ctx: SystemContext | None, systems: list[System] | None,
                 suffix: str = "", extra_tokens: tuple[str, ...] = ()) -> Path:
    """``<out>/<stem>.json`` (``identity.stem``); ``systems`` None = a mode that runs no System lineup."""
    names = None if systems is None else [s.name for s in systems]
    return Path(opts.output.out) / (stem(opts.settings, ds.name, embedder=embedder_name(ctx), systems=names,
                                         default_systems=list(DEFAULT_SYSTEMS), suffix=suffix,
                                         extra_tokens=extra_tokens) + ".json")


def write_results(path: Path, doc: ResultsFile) -> None:
    """Write ``doc`` to ``path`` unless ``path`` holds a run with another identity (then a BenchError)."""
    check_overwrite(path, doc.config["identity"])
    write_results_file(path, doc)
    log(f"wrote {path}")


def check_outputs(opts: RunOptions) -> None:
    """Refuse unusable destinations, and ``-plot`` without matplotlib, before any work."""
    if not opts.output.no_write:
        check_destinations(folders=[("-out", opts.output.out), ("-trec", opts.output.trec)],
                           files=[("-per-question", opts.output.per_question)])
        if opts.output.plot and importlib.util.find_spec("matplotlib") is None:
            from memini_bench.results.plots import plot_needs

            raise BenchError(plot_needs("-plot"))
