"""``cmd/ray_estimate.py``: measure ``-executor ray`` here, then estimate a LongMemEval-M run on a GPU cluster.

Measured on this machine, in one process (so the ratios share its load), MiniLM fp32, no disk cache:

1. texts/s of the same texts embedded by a fresh ``TextEncoder`` locally and through ``-executor ray`` with 1 and
   2 CPU workers: ``--long`` LongMemEval-M-shaped session texts (``synth`` at the M shape, read back by the
   longmemeval loader, so they are the texts a run embeds) and ``--short`` LoCoMo turns. Every Ray vector is
   compared with the local one (``bitwise_equal``). ``startup_s``: the first call of a pool (actors start and load
   the model), excluded from texts/s.
2. Ray's per-call overhead: a no-op actor call, one at a time and pipelined (``ray_executor.ordered_map``).
3. The LongMemEval-M shape: distinct session texts (the encoder embeds each once; the loader's text of a session
   is a function of its id) counted from the generator's ids at ``synth.SHAPES["m"]``, the questions, and the
   MiniLM token length (capped at the model's 512) of the long texts of step 1.

Extrapolated (every figure under ``extrapolated``), for G GPUs, with ``gpu_texts_per_s`` (an input, not measured
here: no GPU). The driver hands out pieces of P = 64 texts (``ray_executor.piece_size`` at MiniLM's batch 64 with 4
or more workers) one call at a time, so it can feed at most P / o texts/s, o = the pipelined call overhead of step
2; the short texts run s = local short texts/s / local long texts/s faster than the long ones (step 1)::

    cluster_texts_per_s = min(G x gpu_texts_per_s, P / o)
    embed_docs_s        = distinct_session_texts / cluster_texts_per_s
    embed_queries_s     = questions / min(G x gpu_texts_per_s x s, P / o)
    total_s             = startup_s (step 1, 2 workers) + embed_docs_s + embed_queries_s

The 2-worker vs 1-worker ratio of step 1 is recorded (``cpu_scale_out_2_vs_1``) but not used: here the two
workers share two CPU cores with the driver, which says nothing of GPUs that each worker has to itself. Moving the
texts to remote nodes (about 0.5 MB per piece of M-shaped texts) is not measured here (one machine).
Loading, indexing and recall are not in the estimate (``make scale`` measures them at the M shape).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memini_bench.core.console import run_command
from memini_bench.core.settings import Int, Real, command, setting
from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_pct, markdown
from memini_bench.errors import BenchError

GPU_TEXTS_PER_S = 1000.0
GPU_SOURCE = ("assumption, not a measurement: about 25 GFLOP per 512-token MiniLM-L6 text (2 x 22.7M parameters x "
              "512 tokens, plus attention) at about 25 TFLOP/s sustained fp32/TF32 on an A100-class GPU; replace it "
              "with a figure measured on the target GPU (this script's local texts/s, run on a GPU node)")
GPUS = (1, 8, 32)


def long_texts(data_dir: str, count: int) -> list[str]:
    """``count`` distinct LongMemEval-M-shaped session texts, as the longmemeval loader makes them."""
    from devbench import synth
    from memini_bench.loaders import load

    shape = dataclasses.replace(synth.SHAPES["m"], records=max(1, -(-count // synth.SHAPES["m"].sessions)))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lme-m-slice.json"
        synth.write(path, synth.load_source(data_dir), shape)
        ds = load("longmemeval", str(path))
    return list(dict.fromkeys(item.content for item in ds.items))[:count]


def short_texts(data_dir: str, count: int) -> list[str]:
    """``count`` distinct LoCoMo turns, evenly spread over the data set."""
    from memini_bench.loaders import load

    turns = list(dict.fromkeys(item.content for item in load("locomo", str(Path(data_dir) / "locomo/locomo10.json"))
                               .items))
    step = max(1, len(turns) // count)
    return turns[::step][:count]


def m_shape(data_dir: str) -> dict[str, int]:
    """Distinct session texts and questions of the generator's M shape (ids only: session texts shrunk to
    nothing, which changes no id)."""
    from devbench import synth

    shape = dataclasses.replace(synth.SHAPES["m"], session_chars=1, turns=2)
    ids: set[str] = set()
    slots = questions = 0
    for record in synth.records(synth.load_source(data_dir), shape):
        ids.update(record["haystack_session_ids"])
        slots += len(record["haystack_session_ids"])
        questions += 1
    return {"records": shape.records, "session_slots": slots, "distinct_session_texts": len(ids),
            "questions": questions}


def _timed_documents(encoder, texts: list[str]) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    vectors = encoder.documents(texts)
    return time.perf_counter() - t0, vectors


def embedding(long: list[str], short: list[str]) -> dict[str, object]:
    """Step 1 of the module docstring."""
    from memini_bench.embed.factory import EmbedSettings, build_encoder
    from memini_bench.executors import executor_for, run_encoder
    from memini_bench.modes.options import RunOptions

    local = build_encoder(EmbedSettings(embedder="minilm", no_cache=True))
    local.embedder.encode(["warm-up"])  # the model load is not throughput
    out: dict[str, dict] = {}
    reference = {}
    for name, texts in (("long", long), ("short", short)):
        fresh = build_encoder(EmbedSettings(embedder="minilm", no_cache=True))
        fresh.embedder._model = local.embedder.model
        seconds, reference[name] = _timed_documents(fresh, texts)
        out.setdefault("local", {})[f"{name}_texts_per_s"] = len(texts) / seconds
    equal = True
    for workers in (1, 2):
        opts = RunOptions.build({"embedder": "minilm", "no_cache": True, "executor": "ray", "ray_workers": workers})
        t0 = time.perf_counter()
        run_encoder(opts.embed, opts.executor).documents(["warm-up: the actors start and load the model"])
        row: dict[str, float] = {"startup_s": time.perf_counter() - t0}
        for name, texts in (("long", long), ("short", short)):
            seconds, vectors = _timed_documents(run_encoder(opts.embed, opts.executor), texts)
            row[f"{name}_texts_per_s"] = len(texts) / seconds
            equal = equal and bool(np.array_equal(vectors, reference[name]))
        executor_for(opts.executor).close()
        out[f"ray_{workers}"] = row
    out["bitwise_equal"] = equal
    out["model"] = local.embedder.identity
    return out


def call_overhead(calls: int = 200) -> dict[str, float]:
    """Step 2: milliseconds per no-op actor call, one at a time and pipelined over two actors."""
    import ray

    from memini_bench.executors.ray import Worker, ordered_map

    actors = [Worker.options(num_cpus=1).remote(_none, None, _echo) for _ in range(2)]
    ray.get([a.info.remote() for a in actors])
    t0 = time.perf_counter()
    for i in range(calls):
        ray.get(actors[0].run.remote(i))
    sequential = (time.perf_counter() - t0) / calls
    t0 = time.perf_counter()
    assert list(ordered_map(actors, list(range(calls)))) == list(range(calls))
    pipelined = (time.perf_counter() - t0) / calls
    for a in actors:
        ray.kill(a)
    return {"sequential_ms": sequential * 1e3, "pipelined_ms": pipelined * 1e3}


def _none(_: object) -> None:
    return None


def _echo(_: object, item: object) -> object:
    return item


def token_lengths(texts: list[str], cap: int = 512) -> dict[str, float]:
    from memini_bench.embed.local import minilm

    tokenizer = minilm().model.tokenizer
    lengths = [min(len(tokenizer(t, add_special_tokens=True)["input_ids"]), cap) for t in texts]
    return {"sample": len(texts), "mean_tokens": float(np.mean(lengths)), "share_at_cap": float(np.mean(
        [n == cap for n in lengths])), "cap": cap}


PIECE_TEXTS = 64


def extrapolate(measured: dict, gpu_texts_per_s: float, gpus: tuple[int, ...]) -> dict[str, object]:
    """The formulas of the module docstring, for each GPU count."""
    emb, shape = measured["embedding"], measured["lme_m_shape"]
    short_speedup = emb["local"]["short_texts_per_s"] / emb["local"]["long_texts_per_s"]
    dispatch = PIECE_TEXTS / (measured["ray_call_overhead"]["pipelined_ms"] / 1e3)
    startup = emb["ray_2"]["startup_s"]
    rows = []
    for g in gpus:
        cluster = min(g * gpu_texts_per_s, dispatch)
        docs = shape["distinct_session_texts"] / cluster
        queries = shape["questions"] / min(g * gpu_texts_per_s * short_speedup, dispatch)
        rows.append({"gpus": g, "cluster_texts_per_s": cluster, "embed_docs_s": docs, "embed_queries_s": queries,
                     "startup_s": startup, "total_s": startup + docs + queries})
    return {"piece_texts": PIECE_TEXTS, "dispatch_limit_texts_per_s": dispatch, "short_over_long_speed":
            short_speedup, "cpu_scale_out_2_vs_1": emb["ray_2"]["long_texts_per_s"] / emb["ray_1"]["long_texts_per_s"],
            "per_gpus": rows, "not_included": "loading, indexing and recall (make scale measures them at the M "
            "shape) and moving texts to remote nodes"}


@dataclass(frozen=True)
class RayEstimateOptions:
    """The flags of ``ray-estimate`` (each ``-name`` and ``--name``)."""

    data: str = setting("data", "../shared/data", "the shared data folder (locomo/, longmemeval/)")
    long: int = setting("long", 64, "LongMemEval-M-shaped session texts to embed", type=Int())
    short: int = setting("short", 400, "LoCoMo turns to embed", type=Int())
    gpu_texts_per_s: float = setting("gpu-texts-per-s", GPU_TEXTS_PER_S,
                                     f"MiniLM texts/s of one GPU on 512-token texts (default {GPU_TEXTS_PER_S:g}: an "
                                     f"assumption, see the JSON's inputs)", type=Real())
    out: str = setting("out", "runs/bench/ray-estimate.json", "the results file (docs/performance.md)")


@command(RayEstimateOptions, name="ray-estimate")
def main_command(args: RayEstimateOptions) -> int | None:
    if args.gpu_texts_per_s <= 0 or args.long < 1 or args.short < 1:
        raise BenchError("--gpu-texts-per-s, --long and --short must be positive")
    from memini_bench.results.provenance import bench_config, bench_start, check_bench_out

    check_bench_out(args.out)  # before minutes of measuring
    start = bench_start()
    t0 = time.perf_counter()
    long, short = long_texts(args.data, args.long), short_texts(args.data, args.short)
    measured = {"embedding": embedding(long, short), "ray_call_overhead": call_overhead(),
                "lme_m_shape": m_shape(args.data) | {"tokens": token_lengths(long)}}
    from memini_bench.results.schema import bench_document
    from memini_bench.results.write import write_results_file

    source = "user-supplied" if args.gpu_texts_per_s != GPU_TEXTS_PER_S else GPU_SOURCE
    doc = {"config": bench_config("ray-estimate", {"gpus": 0, "long_texts": len(long), "short_texts": len(short)},
                                  start, time.perf_counter() - t0),
           "measured": measured,
           "inputs": {"gpu_texts_per_s": {"value": args.gpu_texts_per_s, "source": source}},
           "extrapolated": extrapolate(measured, args.gpu_texts_per_s, GPUS)}
    write_results_file(Path(args.out), bench_document(doc))
    print(f"wrote {args.out} in {doc['config']['seconds']:.0f} s", file=sys.stderr)
    return 0


def measured_table(emb: dict) -> Table:
    """Texts per second measured here, per executor."""
    cols = (Column("executor", "executor", "left"), Column("long", "long texts/s (M-shaped, 512 tokens)"),
            Column("short", "short texts/s (LoCoMo turns)"), Column("start", "pool start (s)"))
    body = tuple((Cell(name, f"{name} (measured)"), Cell(emb[key]["long_texts_per_s"],
                                                         fmt_num(emb[key]["long_texts_per_s"], 1)),
                  Cell(emb[key]["short_texts_per_s"], fmt_num(emb[key]["short_texts_per_s"], 1)),
                  Cell(emb[key].get("startup_s"), fmt_num(emb[key].get("startup_s"), 1)))
                 for key, name in (("local", "local"), ("ray_1", "ray, 1 worker"), ("ray_2", "ray, 2 workers")))
    return Table(cols, body, notes=("N: one timed pass per executor over the same texts. No marks.",))


def extrapolated_table(per_gpus: list[dict]) -> Table:
    """LongMemEval-M's embedding wall time per GPU count, extrapolated (the pool start measured here)."""
    cols = (Column("gpus", "GPUs"), Column("docs", "documents (s)"), Column("queries", "questions (s)"),
            Column("start", "pool start (s, measured here)"), Column("total", "total (s)", better="lower"))
    body = tuple((Cell(r["gpus"], f"{r['gpus']} (extrapolated)"),
                  Cell(r["embed_docs_s"], fmt_num(r["embed_docs_s"], 0)),
                  Cell(r["embed_queries_s"], fmt_num(r["embed_queries_s"], 1)),
                  Cell(r["startup_s"], fmt_num(r["startup_s"], 1)), Cell(r["total_s"], fmt_num(r["total_s"], 0)))
                 for r in per_gpus)
    return Table(cols, body, notes=("Extrapolated, not measured: the texts over the cluster's texts/s, plus the "
                                    "pool start measured here. No marks.",))


def readme_block(results_dir: Path) -> str:
    """The ``ray-estimate`` block (docs/performance.md) from ``results/bench/ray-estimate.json``: the measured
    texts/s here and the extrapolated LongMemEval-M embedding time per GPU count, each row saying which it is."""
    from memini_bench.results.read import load
    from memini_bench.results.schema import ResultsFile

    path = Path(results_dir) / "bench" / "ray-estimate.json"
    if not path.exists():
        return "_(`results/bench/ray-estimate.json` is not committed yet: `python cmd/ray_estimate.py` writes it)_\n"
    doc = load(path)
    raw = doc.raw if isinstance(doc, ResultsFile) else {}
    emb, shape = raw["measured"]["embedding"], raw["measured"]["lme_m_shape"]
    gpu = raw["inputs"]["gpu_texts_per_s"]
    out = [f"Measured here ({raw['config']['cpus']} CPUs, no GPU; {emb['model']}, texts/s; Ray vectors "
           f"{'bit-identical to' if emb['bitwise_equal'] else 'DIFFERENT from'} local ones):", "",
           markdown(measured_table(emb)).rstrip("\n")]
    ext = raw["extrapolated"]
    overhead = raw["measured"]["ray_call_overhead"]
    out += ["", f"LongMemEval-M shape (measured from the generator): {shape['distinct_session_texts']:,} distinct "
            f"session texts in {shape['session_slots']:,} slots, {shape['questions']} questions, mean "
            f"{shape['tokens']['mean_tokens']:.0f} tokens ({fmt_pct(shape['tokens']['share_at_cap'], 0)} at the "
            f"{shape['tokens']['cap']} cap). Ray call overhead (measured): {overhead['sequential_ms']:.2f} ms one at a "
            f"time, {overhead['pipelined_ms']:.2f} ms pipelined, so one driver feeds at most "
            f"{ext['dispatch_limit_texts_per_s']:,.0f} texts/s in pieces of {ext['piece_texts']} (extrapolated). "
            f"2 workers vs 1 on our 2-core measuring machine, cores shared (measured): "
            f"{ext['cpu_scale_out_2_vs_1']:.2f}x.", "",
            f"Extrapolated embedding wall time of LongMemEval-M on a GPU cluster, at {gpu['value']:g} texts/s per "
            f"GPU ({'an assumption, not measured' if gpu['source'] != 'user-supplied' else 'user-supplied'}):", "",
            markdown(extrapolated_table(ext["per_gpus"])).rstrip("\n"), "",
            f"Not included: {ext['not_included']}.", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int | None:
    """The entry point: ``main_command`` with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
