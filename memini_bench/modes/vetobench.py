"""``-suite vetobench``: veto recall of every system on each VetoBench suite, the scale curve (``-scale``), the
behavioural layer (``-live``) and the summary of archived live runs (``-veto-summary``).

Systems: ``veto-composite`` (files known) and ``veto-composite-nofiles`` (the five-signal scorer), memini's hybrid
and vector per embedder in ``-veto-embedders`` (``memini-hybrid/hash``, ``memini-hybrid/minilm``, ...) and
``memini-keyword``; ``-systems`` picks a subset by name. The CI gate is RoBrain's: veto recall@5 of
``veto-composite`` on the first suite (``vetobench``) >= 0.80, else exit code 1.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click

from memini_bench.dataset import Dataset, prepare
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import build_encoder
from memini_bench.errors import BenchError
from memini_bench.flags import flag
from memini_bench.metrics import score
from memini_bench.options import RunOptions
from memini_bench.provenance import file_sha256, harness
from memini_bench.report import write_json

FLAGS = [
    flag("veto-files", default="both", type=click.Choice(["known", "none", "both"]),
         help="VetoBench: veto-composite with each scenario's files in scope (known), without (none), or both."),
    flag("veto-embedders", default="hash,minilm", help="VetoBench: embedders for memini's hybrid/vector systems, "
         "one set each (comma-separated; -dims applies to hash)."),
    flag("composite-embedder", default="fnv64", help="VetoBench: veto-composite's semantic embedder: fnv64 (the "
         "doc's 64-dim hashed bag of tokens) or any -embedder name."),
    flag("scale", is_flag=True, default=False, help="VetoBench: also run the scale curve (generated distractor "
         "decisions, veto recall@5 per system at each -veto-sizes)."),
    flag("veto-sizes", default="24,100,300,1000,3000", help="VetoBench -scale: corpus sizes (decisions)."),
    flag("scale-seed", default=7, type=int, help="VetoBench -scale: seed of the distractor generator."),
    flag("plot", is_flag=True, default=False, help="VetoBench -scale: also write <out>/vetobench-scale.png."),
    flag("live", is_flag=True, default=False, help="VetoBench: behavioural layer through the OpenAI-compatible "
         "chat endpoint in MEMINI_LLM_BASE_URL / _API_KEY / _MODEL (temperature 0)."),
    flag("archive", default="", help="VetoBench -live: write every context, reply and verdict to this JSON file "
         "(-run<i> added before .json when -veto-runs > 1)."),
    flag("veto-runs", default=1, type=click.IntRange(min=1), help="VetoBench -live: repeat the run N times."),
    flag("veto-conditions", default="", help="VetoBench -live: conditions (none, conventions, flatfile, any "
         "system name), comma-separated; default all."),
    flag("veto-summary", default="", help="VetoBench: summarize these -archive files (comma-separated): violation "
         "and acknowledgement rates as min-max across runs."),
]

GATE_SYSTEM = "veto-composite"
GATE_MIN = 0.80


def selected(opts: RunOptions) -> bool:
    return opts.suite == "vetobench" or bool(opts.extra.get("veto_summary"))


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _names(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(p) for p in _names(text)})
    except ValueError:
        raise BenchError(f"-veto-sizes {text!r}: use comma-separated decision counts like 24,100,300") from None
    if not sizes or sizes[0] <= 0:
        raise BenchError(f"-veto-sizes {text!r}: use positive decision counts")
    return sizes


def _encoder(opts: RunOptions, name: str) -> TextEncoder:
    """The run's embedding settings (model flags, cache) with another embedder name."""
    return build_encoder(dataclasses.replace(opts.embed_settings, name=name))


def _select(systems: list, wanted: tuple[str, ...]) -> list:
    if not wanted:
        return systems
    chosen = [s for s in systems if s.name in wanted or s.name.removeprefix("memini-") in wanted]
    if not chosen:
        raise BenchError(f"-systems {','.join(wanted)}: none of them runs on VetoBench; use "
                         f"{', '.join(s.name for s in systems)}")
    return chosen


def _archive_path(base: str, run: int, runs: int) -> Path:
    p = Path(base)
    return p if runs == 1 else p.with_name(f"{p.stem}-run{run}{p.suffix or '.json'}")


def run(opts: RunOptions) -> int:
    from memini_bench.vetobench import evaluate as ev
    from memini_bench.vetobench import live, scale
    from memini_bench.vetobench.fixtures import read_suites, suite_dataset, suite_files

    x = opts.extra
    if x.get("veto_summary"):
        sys.stdout.write(live.summarize_archives(live.read_archives(_names(x["veto_summary"]))))
        return 0
    sizes = _sizes(x.get("veto_sizes", "24,100,300,1000,3000")) if x.get("scale") else []
    client = None
    if x.get("live"):
        from memini_bench.llm import ChatClient

        client = ChatClient.from_env()
    suites = read_suites(opts.data)
    encoders = {name: _encoder(opts, name) for name in _names(x.get("veto_embedders", "hash,minilm"))}
    composite_name = x.get("composite_embedder", "fnv64")
    composite_encoder = None if composite_name == "fnv64" else _encoder(opts, composite_name)

    def systems_for(ds: Dataset) -> list:
        return _select(ev.lineup(ds, encoders, composite_encoder=composite_encoder,
                                 veto_files=x.get("veto_files", "both"), keyword_backend=opts.keyword_backend,
                                 fusion=opts.fusion), opts.systems)

    records, live_suites, gate = [], [], None
    for suite in suites:
        ds = prepare(suite_dataset(suite), holdout=opts.holdout, limit=opts.limit)
        systems = systems_for(ds)
        log(f'suite "{ds.name}": {len(ds.items)} decisions, {len(ds.questions)} scenarios'
            + "".join(f"; {n}" for n in ds.notes))
        results, scores = ev.evaluate(systems, ds)
        sys.stdout.write(ev.markdown(scores, ds))
        sys.stdout.flush()
        records.append({"suite": ds.name, "decisions": len(ds.items), "scenarios": len(ds.questions),
                        "as_of": suite.as_of.isoformat(), "veto": [ev.as_json(s) for s in scores],
                        "scores": [dataclasses.asdict(score(r, k)) for r in results for k in ev.VETO_KS]})
        if gate is None and not suite.lifecycle:
            gate = next((s.recall_at_5 for s in scores if s.system == GATE_SYSTEM), None)
        if client is not None:
            kept = {q.id for q in ds.questions}
            live_suites.append((dataclasses.replace(suite, scenarios=tuple(s for s in suite.scenarios
                                                                             if s.id in kept)), systems))
    if gate is not None:
        verdict = "PASS" if gate >= GATE_MIN else "FAIL"
        print(f"gate: {GATE_SYSTEM} veto recall@5 (files known) {gate:.2f} >= {GATE_MIN:.2f}: {verdict}\n")

    out = Path(opts.out)
    config = {"suite": "vetobench", "data": opts.data,
              "data_sha256": {str(p): file_sha256(p) for pair in suite_files(opts.data) for p in pair},
              "systems": [r["system"] for r in records[0]["veto"]] if records else [],
              "veto_files": x.get("veto_files", "both"), "composite_embedder": composite_name,
              "embedders": {name: enc.describe() for name, enc in encoders.items()},
              "keyword_backend": opts.keyword_backend, "fusion_alpha": opts.fusion, "holdout": opts.holdout,
              "limit": opts.limit, **harness()}
    if not opts.no_write:
        write_json(out / "vetobench.json", {"config": config, "suites": records})
        log(f"wrote {out / 'vetobench.json'}")

    if sizes:
        base = next((s for s in suites if not s.lifecycle), suites[0])
        points = scale.curve(base, systems_for, sizes, seed=x.get("scale_seed", scale.DEFAULT_SEED), echo=log)
        sys.stdout.write(scale.markdown(points, base.name))
        if not opts.no_write:
            write_json(out / "vetobench-scale.json", {"config": {**config, "sizes": sizes,
                                                                 "seed": x.get("scale_seed", scale.DEFAULT_SEED)},
                                                      "points": scale.as_json(points)})
            log(f"wrote {out / 'vetobench-scale.json'}")
            if x.get("plot"):
                scale.plot(points, out / "vetobench-scale.png", f"{base.name}: veto recall@5 vs decision-log size",
                           len(base.active))
                log(f"wrote {out / 'vetobench-scale.png'}")

    if client is not None:
        _live(client, live_suites, x)
    return 0 if gate is None or gate >= GATE_MIN else 1


def _live(client, live_suites: list, x: dict) -> None:
    from memini_bench.vetobench import live

    runs, docs = x.get("veto_runs", 1), []
    wanted = _names(x.get("veto_conditions", ""))
    for i in range(1, runs + 1):
        records, aborted = [], ""
        for suite, systems in live_suites:
            conditions = live.conditions_for(suite, systems, wanted)
            log(f"live run {i}/{runs}, {suite.name}: {len(conditions)} conditions x {len(suite.scenarios)} "
                f"scenarios, model {client.model}")
            result = live.run_live(suite, conditions, client.complete, echo=log)
            records.append(live.suite_record(result, suite, conditions))
            if result.aborted:
                aborted = result.aborted
                break
        doc = live.archive_document(records, model=client.model, endpoint=client.url)
        docs.append(doc)
        if x.get("archive"):
            path = _archive_path(x["archive"], i, runs)
            write_json(path, doc)
            log(f"wrote {path}")
        if aborted:
            raise BenchError(f"-live: {aborted}; check MEMINI_LLM_BASE_URL, MEMINI_LLM_MODEL and the API key")
    sys.stdout.write(live.summarize_archives(docs))
