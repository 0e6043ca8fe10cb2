"""The normal run: load and prepare the data set, run memini's three systems, print tables, write results."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from memini_bench.dataset import Dataset, prepare
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import build_encoder, resolve_name
from memini_bench.errors import BenchError
from memini_bench.loaders import load
from memini_bench.loaders.file import SAMPLE_PATH
from memini_bench.metrics import score_all
from memini_bench.options import RunOptions
from memini_bench.provenance import file_sha256, harness
from memini_bench.report import (
    check_destinations,
    markdown,
    per_question_rows,
    results_document,
    write_json,
    write_jsonl,
    write_trec,
)
from memini_bench.runner import run_all
from memini_bench.systems import System, memini_systems

FLAGS: list = []


def selected(opts: RunOptions) -> bool:
    """The default mode: always selected when no other mode is."""
    return True


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_prepared(opts: RunOptions) -> Dataset:
    """Load the suite, report what the loader dropped, apply holdout and limit, and say what will be scored."""
    ds = load(opts.suite, opts.data, session_doc_mode=opts.session_doc, abstention=opts.abstention,
              shared_haystack=opts.shared_haystack)
    log(f'dataset "{ds.name}": {len(ds.items)} items, {len(ds.questions)} questions')
    for note in ds.notes:
        log(f"  note: {note}")
    prepared = prepare(ds, holdout=opts.holdout, limit=opts.limit)
    if prepared is not ds:
        log(f'prepared "{prepared.name}": {len(prepared.items)} items, scoring {len(prepared.questions)} of '
            f"{len(ds.questions)} questions (holdout {opts.holdout}, limit {opts.limit or 'none'})")
    return prepared


def build_config(opts: RunOptions, ds: Dataset, encoder: TextEncoder | None, **extra: object) -> dict:
    data_path = opts.data or ("data/sample.json" if opts.suite == "sample" else "")
    config: dict[str, object] = {
        "suite": opts.suite, "dataset": ds.name, "data": data_path,
        "data_sha256": file_sha256(opts.data or SAMPLE_PATH),
        "ks": list(opts.k), "holdout": opts.holdout, "limit": opts.limit,
        "session_doc": opts.session_doc if opts.suite == "longmemeval" else "",
        "abstention": opts.abstention if opts.suite == "longmemeval" else "",
        "shared_haystack": opts.shared_haystack, "items": len(ds.items), "questions": len(ds.questions),
        **hybrid_settings(opts),
        "embedder": resolve_name(opts.embedder) if encoder is not None else "",
    }
    if encoder is not None:
        config.update(encoder.describe())
    if ds.category_labels:
        config["category_labels"] = ds.category_labels
    config["notes"] = list(ds.notes)
    config.update(extra)
    config.update(harness())
    return config


def systems_for(opts: RunOptions, encoder: TextEncoder | None) -> list[System]:
    """memini's three systems (hybrid, vector, keyword) over one fresh backend, with every hybrid setting of the
    run (fusion, pool factor and floor, durable reserve, temporal boost and extractor, reinforcement, keyword
    backend): the one place a mode turns RunOptions into memini systems."""
    return memini_systems(encoder, keyword_backend=opts.keyword_backend, alpha=opts.fusion, reinforce=opts.reinforce,
                          pool_factor=opts.pool_factor, pool_floor=opts.pool_floor,
                          semantic_reserve=opts.semantic_reserve, temporal_boost=opts.temporal_boost,
                          temporal_extractor=opts.temporal_extractor)


def hybrid_settings(opts: RunOptions) -> dict[str, object]:
    """The hybrid settings ``systems_for`` applies, as a results config records them."""
    return {"fusion_alpha": opts.fusion, "pool_factor": opts.pool_factor, "pool_floor": opts.pool_floor,
            "semantic_reserve": opts.semantic_reserve, "temporal_boost": opts.temporal_boost,
            "temporal_extractor": opts.temporal_extractor, "keyword_backend": opts.keyword_backend,
            "reinforce": opts.reinforce}


def _matches(wanted: str, name: str) -> bool:
    """``wanted`` names system ``name`` exactly, without the ``memini-`` prefix, or names the system of which
    ``name`` is a ``<system>/<embedder>`` variant (``hybrid`` and ``memini-hybrid`` match ``memini-hybrid/hash``)."""
    return any(wanted in (n, n.removeprefix("memini-")) for n in (name, name.split("/", 1)[0]))


def select_systems(systems: list[System], wanted: Sequence[str], where: str = "this suite") -> list[System]:
    """The systems ``-systems`` names, in the order named (a name matching several variants brings them all, in
    ``systems`` order; each system once); every system when none is named. A name that matches nothing is a
    BenchError listing the names that run on ``where``."""
    if not wanted:
        return systems
    unknown = [w for w in wanted if not any(_matches(w, s.name) for s in systems)]
    if unknown:
        raise BenchError(f"-systems {','.join(unknown)}: none of them runs on {where}; use "
                         f"{', '.join(s.name for s in systems)}")
    chosen = {id(s): s for w in wanted for s in systems if _matches(w, s.name)}
    return list(chosen.values())


def run(opts: RunOptions) -> int:
    if not opts.no_write:
        check_destinations(folders=[("-out", opts.out), ("-trec", opts.trec)],
                           files=[("-per-question", opts.per_question)])
    keyword_only = bool(opts.systems) and all(n.removeprefix("memini-") == "keyword" for n in opts.systems)
    encoder = None if keyword_only else build_encoder(opts.embed_settings)  # checks the flags; loads no model
    ds = load_prepared(opts)
    systems = select_systems(systems_for(opts, encoder), opts.systems, ds.name)
    results = run_all(systems, ds, opts.depth)
    scores = score_all(results, opts.k)
    sys.stdout.write(markdown(scores, ds.name, ds.category_labels))
    sys.stdout.flush()
    if opts.no_write:
        return 0
    backend_timings = getattr(getattr(systems[0], "backend", None), "timings_ms", {})
    config = build_config(opts, ds, encoder, timings_ms=backend_timings)
    out = Path(opts.out) / f"{ds.name}.json"
    write_json(out, results_document(config, scores))
    log(f"wrote {out}")
    if opts.per_question:
        write_jsonl(Path(opts.per_question), per_question_rows(results))
        log(f"wrote {opts.per_question}")
    if opts.trec:
        for path in write_trec(Path(opts.trec), ds.name, results):
            log(f"wrote {path}")
    return 0
