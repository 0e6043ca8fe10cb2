"""MiniLM embedding throughput and recall on a GPU (``make gpu``, ``cmd/gpu_embed.py``; ``results/bench/gpu.json``).

For each precision and batch size (default fp32, bf16, fp16 at 128, 256, 512 and 1024) the harness's embedder
(MiniLM at 512 tokens, ``-device`` as given, no cache) embeds every item of the data set (LoCoMo turns by default)
and, when ``--lme`` is given, up to ``--long-texts`` LongMemEval sessions (long texts). texts/s is the fastest of
``--rounds`` timed passes after one warm-up batch, with the device synchronised before and after each. fp32 and
bf16 are the harness's ``-precision``; fp16 is the same model after ``model.half()``, which the harness does not
offer (measured here only). Then, per precision, the data set runs through memini-vector on those vectors (the
harness's ingest, recall and metrics; ``-k 5,10``): R@5, R@10, MRR; and each setting's largest ``1 - cos`` against
fp32 at the same batch size. The device's name and the torch version are recorded with the figures.

Without the device (``--device cuda`` where torch sees no CUDA) it stops with one line and exit code 2, before any
work; ``--device cpu`` runs the same measurement on the CPU (what the tests do, at a tiny size).
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memini_bench.core.console import run_command
from memini_bench.core.settings import Int, command, setting
from memini_bench.core.table import fmt_pct
from memini_bench.errors import BenchError
from memini_bench.results.provenance import bench_start, check_bench_out

PRECISIONS = ("fp32", "bf16", "fp16")


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def device_problem(device: str) -> str:
    """Why ``device`` cannot run here ("" when it can)."""
    if device not in ("cuda", "cpu"):
        return f"--device {device!r}: use cuda or cpu"
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            build = "a CPU build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
            return (f"--device cuda: torch {torch.__version__} ({build}) sees no CUDA device here; run on a GPU "
                    "machine with a CUDA torch (make install TORCH_SPEC=...), or pass --device cpu")
    return ""


def hardware(device: str) -> str:
    import platform

    if device == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    return platform.processor() or platform.machine()


def embedder_for(device: str, precision: str):
    """The harness's MiniLM embedder at ``precision`` (fp16: fp32 weights halved after loading)."""
    from memini_bench.embed.local import minilm

    embedder = minilm(device=device, precision="fp32" if precision == "fp16" else precision)
    if precision == "fp16":
        embedder.model.half()
    return embedder


def throughput(embedder, texts: list[str], batch: int, device: str, rounds: int) -> tuple[float, np.ndarray]:
    """The fastest of ``rounds`` passes over ``texts`` at ``batch`` (texts/s) and the vectors of the last."""
    embedder.batch_size = batch
    embedder.encode(texts[:batch])  # warm-up: kernels, allocator
    best, vectors = math.inf, np.zeros((0, 0), np.float32)
    for _ in range(rounds):
        _sync(device)
        started = time.perf_counter()
        vectors = embedder.encode(texts)
        _sync(device)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best, vectors


def recall(embedder, ds) -> dict[str, float]:
    """memini-vector on ``ds`` with ``embedder``'s vectors (no cache): R@5, R@10, MRR."""
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.evaluation.metrics import score
    from memini_bench.evaluation.runner import run_system
    from memini_bench.systems.memini import MeminiBackend, VectorSystem

    backend = MeminiBackend(TextEncoder(embedder))
    result = run_system(VectorSystem(backend), ds, 10)
    r5, r10 = score(result, 5), score(result, 10)
    return {"r5": r5["recall_any@{k}"], "r10": r10["recall_any@{k}"], "mrr": r10["mrr"]}


def measure(args: GpuOptions) -> dict:
    from devbench.speed import max_1_minus_cos
    from memini_bench.loaders import load

    ds = load(args.suite, args.data)
    sets = {"short": [item.content for item in ds.items]}
    if args.lme and args.long_texts > 0:
        from devbench.speed import long_texts

        sets["long"] = long_texts(args.lme, args.long_texts)
    batches = [int(b) for b in args.batches.split(",")]
    precisions = args.precisions.split(",")
    rows, recalls, reference = [], {}, {}
    for precision in precisions:
        embedder = embedder_for(args.device, precision)
        for batch in batches:
            for name, texts in sets.items():
                if not texts:
                    continue
                per_s, vectors = throughput(embedder, texts, batch, args.device, args.rounds)
                reference.setdefault((name, batch), vectors)  # the first precision's (fp32 by default)
                rows.append({"precision": precision, "batch": batch, "set": name, "texts": len(texts),
                             "texts_per_s": per_s, "max_1_minus_cos": max_1_minus_cos(reference[name, batch], vectors)})
                print(f"{precision} batch {batch}, {name} texts ({len(texts)}): {per_s:.1f} texts/s, max(1 - cos) vs "
                      f"{precisions[0]} {rows[-1]['max_1_minus_cos']:.1e}", flush=True)
        embedder.batch_size = batches[0]
        recalls[precision] = recall(embedder, ds)
        r = recalls[precision]
        print(f"{precision}: memini-vector R@5 {fmt_pct(r['r5'], 2)}, R@10 {fmt_pct(r['r10'], 2)}, "
              f"MRR {fmt_pct(r['mrr'], 2)}", flush=True)
    return {"rows": rows, "recall": recalls}


@dataclass(frozen=True)
class GpuOptions:
    """The flags of ``gpu`` (each ``-name`` and ``--name``)."""

    device: str = setting("device", "cuda", "cuda (the point) or cpu")
    suite: str = setting("suite", "locomo", "the data set's suite (its items are the short texts)")
    data: str = setting("data", "../shared/data/locomo/locomo10.json", "the data set file of --suite")
    lme: str = setting("lme", "../shared/data/longmemeval/longmemeval_oracle_sample97.json",
                       "LongMemEval file whose sessions are the long texts ('' = none)")
    long_texts: int = setting("long-texts", 512, "long texts to time (0 = none)", type=Int())
    precisions: str = setting("precisions", ",".join(PRECISIONS), "comma list of fp32, bf16, fp16")
    batches: str = setting("batches", "128,256,512,1024", "comma list of batch sizes")
    rounds: int = setting("rounds", 3, "timed passes per setting (the fastest counts)", type=Int())
    out: str = setting("out", "runs/bench/gpu.json", "the results file (docs/performance.md)")


@command(GpuOptions, name="gpu")
def main_command(args: GpuOptions) -> int | None:
    problems = [device_problem(args.device)]
    problems += [f"--precisions {p!r}: use {', '.join(PRECISIONS)}" for p in args.precisions.split(",")
                 if p not in PRECISIONS]
    if not all(b.strip().isdigit() and int(b) > 0 for b in args.batches.split(",")):
        problems.append(f"--batches {args.batches!r}: positive integers, comma-separated")
    if args.rounds < 1:
        problems.append(f"--rounds {args.rounds}: at least 1")
    if not os.path.exists(args.data):
        problems.append(f"{args.data}: no such file; pass --data PATH")
    for problem in filter(None, problems):
        raise BenchError(problem)
    check_bench_out(args.out)
    start = bench_start()
    started = time.perf_counter()
    figures = measure(args)
    write_results(args, figures, start, time.perf_counter() - started)


def write_results(args: GpuOptions, figures: dict, start: dict, seconds: float) -> None:
    import torch

    from memini_bench.results.provenance import bench_config
    from memini_bench.results.schema import bench_document
    from memini_bench.results.write import write_results_file

    config = bench_config("gpu", {"device": args.device, "hardware": hardware(args.device), "torch": torch.__version__,
                                  "suite": args.suite, "data": args.data, "lme": args.lme,
                                  "long_texts": args.long_texts, "rounds": args.rounds, "model": "all-MiniLM-L6-v2",
                                  "max_tokens": 512}, start, seconds)
    write_results_file(Path(args.out), bench_document({"config": config, **figures}))
    print(f"wrote {args.out}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int | None:
    """The entry point: ``main_command`` with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
