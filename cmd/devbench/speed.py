"""Speed benchmarks (``make speed``): each figure is a ratio against a reference run in the same process.

1. keyword leg: per-query latency of memini's BM25 backend (the C kernel where it was built, else numpy; ``path``
   says which) vs the SQLite FTS5 reference on LoCoMo turn level
   (pool 50, the hybrid's per-leg depth), interleaved query by query; the rankings must be identical. Query term
   ids are computed in ``prepare`` first, as a run does.
2. embedding: throughput of the harness's encoder (truncation, de-duplication, batching) at fp32 and at
   ``precision="bf16"``, on torch and (when installed) OpenVINO, vs calling ``model.encode`` (fp32) directly on the
   same texts with the same model object, interleaved round by round, as median per-round ratios; each one's largest
   ``1 - cos`` against the harness's fp32 vectors. Short texts (LoCoMo turns) and long ones (LongMemEval sessions
   of 512+ tokens). Then (part ``recall``) each one's LoCoMo turn-level memini-vector R@5, R@10 and MRR.
3. end to end: wall time of the full LoCoMo turn-level run (``-k 5,10``, MiniLM) with a cold cache, then warm
   (the fastest of three warm runs, each a fresh process).
4. hybrid: memini-hybrid's recall latency (and each leg's) on the fast path vs the reference path
   (``MeminiBackend(reference=True)``), LoCoMo turn level, k 10, MiniLM vectors (step 3's cache, else the default one),
   interleaved query by query; every ranking and score must be identical. Wall-clock p50 and, as a check that
   holds on a busy machine, the p50 of the recall thread's own CPU time.
5. overhead: the harness's own CPU time per recall (``run_system``: hooks, the recall bound's timer, the checks of
   what a system returns, token counts) as a share of memini-hybrid's own recall CPU time, in one process; and the
   same with the hybrid guarded as a plugin is (the process checks after every call).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memini_bench.core.console import run_command
from memini_bench.core.hooks import own_system
from memini_bench.core.settings import Int, command, setting
from memini_bench.core.table import fmt_pct
from memini_bench.loaders import load
from memini_bench.results.provenance import bench_start, check_bench_out
from memini_bench.results.schema import Score
from memini_bench.retrieval.keyword import NumpyBM25
from memini_bench.retrieval.keyword_fts5 import FTS5BM25

POOL = 50


def kernel_path() -> str:
    """How the hot path ran: through the compiled kernels (keyword leg, vector top k, fusion), or their numpy and
    Python paths."""
    from memini_bench.retrieval import kernels

    return "C kernel" if kernels.KERNELS is not None else "numpy"


def keyword_leg(path: str, rounds: int = 3) -> dict[str, object]:
    ds = load("locomo", path)
    contents, groups = [i.content for i in ds.items], [i.group for i in ds.items]
    fast, ref = NumpyBM25(contents, groups), FTS5BM25(contents, groups)
    fast.prepare([q.query for q in ds.questions])
    t_fast: list[float] = []
    t_ref: list[float] = []
    for r in range(rounds):
        for n, q in enumerate(ds.questions):
            pair = [(fast, t_fast), (ref, t_ref)]
            if (n + r) % 2:
                pair.reverse()
            results = []
            for index, sink in pair:
                t = time.perf_counter()
                results.append(index.search(q.group, q.query, POOL))
                sink.append((time.perf_counter() - t) * 1e3)
            if results[0][0].tolist() != results[1][0].tolist():
                raise SystemExit(f"keyword backends disagree on {q.id}")
    fast_p50, ref_p50 = statistics.median(t_fast), statistics.median(t_ref)
    return {"queries": len(ds.questions) * rounds, "path": kernel_path(),
            "memini_p50_ms": fast_p50, "fts5_p50_ms": ref_p50,
            "memini_mean_ms": statistics.fmean(t_fast), "fts5_mean_ms": statistics.fmean(t_ref),
            "speedup_p50": ref_p50 / fast_p50, "speedup_mean": statistics.fmean(t_ref) / statistics.fmean(t_fast)}


def openvino_installed() -> bool:
    """Whether the optional ``openvino`` package (the ``openvino`` extra) is importable here."""
    return importlib.util.find_spec("openvino") is not None


def requested_precision(kind: str) -> str:
    """The precision an embedding variant asked for: ``fp32`` of ``fp32``, ``bf16`` of ``openvino-bf16``."""
    return kind.rpartition("-")[2]


def embedding_texts(locomo: str, lme: str, n_short: int, n_long: int) -> dict[str, list[str]]:
    """The first ``n_short`` LoCoMo turns, and the ``n_long`` longest distinct LongMemEval sessions of at least
    512 MiniLM tokens (so every one is cut at the max_seq_length)."""
    short = [i.content for i in load("locomo", locomo).items][:n_short]
    return {"short": short, "long": long_texts(lme, n_long)} if n_long else {"short": short}


def long_texts(lme: str, n: int) -> list[str]:
    """The ``n`` longest distinct sessions of LongMemEval file ``lme`` of at least 512 MiniLM tokens."""
    from transformers import AutoTokenizer

    from memini_bench.embed.local import MAX_CHARS, minilm_location

    tokenizer = AutoTokenizer.from_pretrained(minilm_location())
    sessions = sorted({i.content[:MAX_CHARS] for i in load("longmemeval", lme).items}, key=len, reverse=True)
    return [t for t in sessions if len(tokenizer(t, truncation=False, verbose=False)["input_ids"]) >= 512][:n]


def embedding(texts: list[str], rounds: int = 3) -> dict[str, dict[str, float | str]]:
    """Texts/s of plain ``model.encode`` fp32 (``direct``) and, through the harness's encoder (a fresh one each
    time, so every text is really embedded), fp32 and ``-precision bf16`` on torch and, when the ``openvino``
    package is installed, on OpenVINO; interleaved, the order rotated and reversed round by round. Each one's
    ``ratio`` is the median over rounds of ``direct time / its time`` in that round (paired rounds: a busy machine
    slows both sides of one ratio alike); ``max_1_minus_cos`` is against the harness's fp32 vectors."""
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.embed.local import minilm

    variants = {"fp32": minilm(), "bf16": minilm(precision="bf16")}
    if openvino_installed():
        variants |= {"openvino-fp32": minilm(backend="openvino"),
                     "openvino-bf16": minilm(precision="bf16", backend="openvino")}
    model = variants["fp32"].model
    model.encode(texts[:64], batch_size=variants["fp32"].batch_size)  # warm-up (and OpenVINO's conversion)
    for embedder in variants.values():
        embedder.encode(texts[:64])
    times: dict[str, list[float]] = {"direct": [], **{name: [] for name in variants}}
    vectors: dict[str, np.ndarray] = {}
    names = list(times)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for kind in reversed(order) if r % 2 else order:
            t = time.perf_counter()
            if kind == "direct":
                model.encode(texts, batch_size=variants["fp32"].batch_size, convert_to_numpy=True)
            else:
                vectors[kind] = TextEncoder(variants[kind]).documents(texts)
            times[kind].append(time.perf_counter() - t)
    full = vectors["fp32"]
    out: dict[str, dict[str, float | str]] = {}
    for kind in names:
        row: dict[str, float | str] = {
            "texts_per_s": len(texts) / statistics.median(times[kind]),
            "ratio": statistics.median(d / t for d, t in zip(times["direct"], times[kind], strict=True))}
        if kind != "direct":
            row |= {"max_1_minus_cos": max_1_minus_cos(full, vectors[kind]), "precision": variants[kind].precision}
        out[kind] = row
    return out


def run_texts(path: str, share: int = 1) -> tuple[list[str], list[str]]:
    """The texts a LoCoMo turn-level run sends to the model, as the run's encoder makes them (its prefixes, the
    character cut, each distinct text once; a query equal to a document is not embedded again): the documents,
    then the queries. ``share`` > 1 keeps every ``share``-th of each (an even subsample)."""
    from memini_bench.embed.factory import build_encoder
    from memini_bench.embed.settings import EmbedSettings

    ds = load("locomo", path)
    encoder = build_encoder(EmbedSettings(embedder="minilm", no_cache=True))
    docs = list(dict.fromkeys(encoder._cut(encoder.doc_prefix + i.content) for i in ds.items))
    seen = set(docs)
    queries = [t for t in dict.fromkeys(encoder._cut(encoder.query_prefix + q.query) for q in ds.questions)
               if t not in seen]
    return docs[::share], queries[::share]


def cold_run(path: str, slices: int = 8, repeats: int = 2, share: int = 1) -> dict[str, object]:
    """The embedding of a cold LoCoMo run through the harness against sentence-transformers itself, one process.

    The run's texts (``run_texts``: documents, then queries) are dealt into ``slices`` even slices; each slice is
    embedded ``repeats`` times by each side, the two sides back to back and their order alternating (A B, B A,
    ...), so a pair shares the machine's load. Side ``st``: ``model.encode(texts, batch_size)`` on the documents,
    then on the queries (the same model object, batch size and token cap). Side ``harness``: what a cold run does
    (a fresh ``TextEncoder`` with a fresh disk cache in a temporary folder, progress on): its ``documents``, then
    its ``queries``. Each pair's ratio is harness time / st time (wall clock and process CPU); the figures are the
    median ratio and its spread, and the harness's vectors must be the same bits as st's. The harness's first ETA
    of each pass is compared with the time that pass really had left."""
    from memini_bench import progress
    from memini_bench.embed.cache import DiskCache
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.embed.local import minilm

    docs, queries = run_texts(path, share)
    embedder = minilm()
    model = embedder.model
    batch = embedder.batch_size
    model.encode(docs[:batch], batch_size=batch, show_progress_bar=False)  # warm-up
    parts = [(docs[s::slices], queries[s::slices]) for s in range(slices)]
    etas: list[tuple[float, float, float]] = []  # (time of the tick, the ETA then, the task's start)
    real_tick = progress.Task.tick

    def recording_tick(task: progress.Task, n: int = 1, *, work: float = 0.0) -> None:
        real_tick(task, n, work=work)
        if task.desc.startswith("embedding") and task.done == n < task.total:  # a pass's first tick, not its last
            etas.append((task.ticked_at or 0.0, task.estimate(task.ticked_at or 0.0)[0] or 0.0, task.start))

    def st_side(d: list[str], q: list[str]) -> np.ndarray:
        vectors = [model.encode(t, batch_size=batch, convert_to_numpy=True, show_progress_bar=False)
                   for t in (d, q) if t]
        return np.concatenate(vectors).astype(np.float32, copy=False)

    def harness_side(d: list[str], q: list[str], tmp: str) -> tuple[np.ndarray, list[float]]:
        encoder = TextEncoder(embedder, cache=DiskCache(Path(tmp), embedder.identity, embedder.dims))
        ends = []
        out = []
        for texts in (d, q):
            if texts:
                out.append(encoder.encode(texts))
                ends.append(progress._now())
        return np.concatenate(out), ends

    pairs: list[dict[str, float]] = []
    identical = True
    honest: list[float] = []
    load_start = os.getloadavg()
    progress.Task.tick = recording_tick  # type: ignore[method-assign]
    try:
        for r in range(repeats):
            for s, (d, q) in enumerate(parts):
                got: dict[str, tuple[float, float]] = {}
                for side in ("st", "harness") if (r + s) % 2 == 0 else ("harness", "st"):
                    with tempfile.TemporaryDirectory() as tmp:
                        t, c = time.perf_counter(), time.process_time()
                        if side == "st":
                            reference = st_side(d, q)
                        else:
                            del etas[:]
                            vectors, ends = harness_side(d, q, tmp)
                        got[side] = (time.perf_counter() - t, time.process_time() - c)
                    if side == "harness":
                        honest += [eta / (end - at) for (at, eta, _), end in zip(etas, ends, strict=False)
                                   if end > at]
                identical = identical and bool(np.array_equal(vectors, reference))
                pairs.append({"slice": s, "repeat": r, "st_s": got["st"][0], "harness_s": got["harness"][0],
                              "st_cpu_s": got["st"][1], "harness_cpu_s": got["harness"][1],
                              "ratio": got["harness"][0] / got["st"][0],
                              "cpu_ratio": got["harness"][1] / got["st"][1]})
                print(f"  slice {s + 1}/{slices}, round {r + 1}/{repeats}: st {got['st'][0]:.1f} s, harness "
                      f"{got['harness'][0]:.1f} s -> {pairs[-1]['ratio']:.3f}", file=sys.stderr, flush=True)
    finally:
        progress.Task.tick = real_tick  # type: ignore[method-assign]
    ratios = sorted(p["ratio"] for p in pairs)
    cpu_ratios = sorted(p["cpu_ratio"] for p in pairs)
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    texts = len(docs) + len(queries)
    return {"documents": len(docs), "queries": len(queries), "texts": texts, "share": share, "slices": slices,
            "repeats": repeats, "batch_size": batch, "max_tokens": embedder.max_tokens, "identical_vectors": identical,
            "ratio_median": statistics.median(ratios), "ratio_q1": quartiles[0], "ratio_q3": quartiles[2],
            "ratio_min": ratios[0], "ratio_max": ratios[-1], "ratio_of_totals":
                sum(p["harness_s"] for p in pairs) / sum(p["st_s"] for p in pairs),
            "cpu_ratio_median": statistics.median(cpu_ratios), "cpu_ratio_min": cpu_ratios[0],
            "cpu_ratio_max": cpu_ratios[-1],
            "st_texts_per_s": texts * repeats / sum(p["st_s"] for p in pairs),
            "harness_texts_per_s": texts * repeats / sum(p["harness_s"] for p in pairs),
            "first_eta_over_actual_median": statistics.median(honest) if honest else None,
            "first_eta_over_actual_min": min(honest) if honest else None,
            "first_eta_over_actual_max": max(honest) if honest else None,
            "load_average_start": list(load_start), "load_average_end": list(os.getloadavg()), "pairs": pairs}


def cold_run_line(c: dict[str, object]) -> str:
    share = f", every {c['share']}th text" if c["share"] != 1 else ""
    eta = ("" if c["first_eta_over_actual_median"] is None else
           f"; first ETA / time really left, median {c['first_eta_over_actual_median']:.2f} "
           f"({c['first_eta_over_actual_min']:.2f}-{c['first_eta_over_actual_max']:.2f})")
    return (f"cold-run embedding, LoCoMo turn level ({c['documents']} documents + {c['queries']} queries{share}), "
            f"MiniLM, batch {c['batch_size']}, {c['max_tokens']} tokens, {c['slices']} slices x {c['repeats']} "
            f"interleaved pairs: harness / sentence-transformers wall {c['ratio_median']:.3f} median (IQR "
            f"{c['ratio_q1']:.3f}-{c['ratio_q3']:.3f}, range {c['ratio_min']:.3f}-{c['ratio_max']:.3f}, totals "
            f"{c['ratio_of_totals']:.3f}), CPU {c['cpu_ratio_median']:.3f} median; st {c['st_texts_per_s']:.1f} "
            f"texts/s, harness {c['harness_texts_per_s']:.1f}; vectors "
            f"{'bit-identical' if c['identical_vectors'] else 'DIFFERENT'}{eta}; load average "
            f"{c['load_average_start'][0]:.1f} -> {c['load_average_end'][0]:.1f}")


def max_1_minus_cos(full: np.ndarray, low: np.ndarray) -> float:
    """The largest ``1 - cos`` between matching rows of two sets of vectors (0 for none)."""
    if not len(full):
        return 0.0
    cosine = (full * low).sum(axis=1) / np.linalg.norm(full, axis=1) / np.linalg.norm(low, axis=1)
    return float((1 - cosine).max())


def embedding_lines(label: str, count: int, rounds: int, rows: dict[str, dict[str, float | str]]) -> list[str]:
    direct = rows["direct"]
    lines = [f"embedding, MiniLM, {count} {label}, {rounds} rounds: plain model.encode fp32 "
             f"{direct['texts_per_s']:.1f} texts/s"]
    for kind, row in rows.items():
        if kind != "direct":
            effect = "" if row["precision"] == requested_precision(kind) else f" ({row['precision']} in effect)"
            lines.append(f"  harness {kind}{effect}: {row['texts_per_s']:.1f} texts/s -> {row['ratio']:.2f}x "
                         f"plain model.encode fp32; max(1 - cos) vs harness fp32 {row['max_1_minus_cos']:.1e}")
    return lines


def precision_recall(path: str) -> dict[str, dict[str, float]]:
    """LoCoMo turn-level memini-vector R@5, R@10 and MRR (all questions, ``-k 5,10``) of fp32 and bf16 on torch and,
    when installed, on OpenVINO: one CLI run each (the user's embedding cache; each variant has its own file)."""
    variants = [("fp32", "torch"), ("bf16", "torch")]
    if openvino_installed():
        variants += [("fp32", "openvino"), ("bf16", "openvino")]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for precision, backend in variants:
            folder = os.path.join(tmp, f"{precision}-{backend}")
            subprocess.run([sys.executable, "-m", "memini_bench", "-suite", "locomo", "-data", path, "-embedder",
                            "minilm", "-systems", "vector", "-k", "5,10", "-precision", precision, "-embed-backend",
                            backend, "-out", folder], env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            (result,) = Path(folder).glob("*.json")
            rows = {s.k: s for s in map(Score.from_row, json.loads(result.read_text())["results"])}
            out[f"{precision}-{backend}"] = {"r5": rows[5]['recall_any@{k}'], "r10": rows[10]['recall_any@{k}'],
                                             "mrr": rows[10]["mrr"]}
    return out


def end_to_end(path: str, tmp: str, warm_runs: int = 3) -> dict[str, object]:
    """A cold run (empty embedding cache in ``tmp/cache``) then ``warm_runs`` warm ones, each a fresh process; the
    warm figure is the fastest (the least disturbed by other work on the machine), every one is kept. Bytecode is
    written as a normal install does (``PYTHONDONTWRITEBYTECODE`` is dropped for these runs), so warm runs do not
    recompile the package."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"MEMINI_BENCH_CACHE": os.path.join(tmp, "cache"), "HF_HUB_OFFLINE": "1"})
    cmd = [sys.executable, "-m", "memini_bench", "-suite", "locomo", "-data", path, "-k", "5,10", "-out",
           os.path.join(tmp, "results")]
    times = []
    for _ in range(1 + warm_runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    cold, warm = times[0], min(times[1:])
    return {"cold_s": cold, "warm_s": warm, "warm_runs_s": times[1:], "cold_over_warm": cold / warm}


PARTS = ("hybrid", "vector", "keyword")


def hybrid(path: str, embedder: str, cache_dir: str, rounds: int = 3) -> dict[str, float]:
    """Fast vs reference path, interleaved; identical rankings and scores are required (see the docstring)."""
    from memini_bench.embed.factory import EmbedSettings, build_encoder
    from memini_bench.systems.memini import HybridSystem, KeywordSystem, MeminiBackend, VectorSystem

    ds = load("locomo", path)
    encoder = build_encoder(EmbedSettings(embedder=embedder, cache_dir=cache_dir))
    queries = [q.query for q in ds.questions]
    paths = {}
    for name, reference in (("fast", False), ("reference", True)):
        backend = MeminiBackend(encoder, reference=reference)
        backend.ingest(ds.items)
        backend.prepare(queries)
        paths[name] = dict(zip(PARTS, (HybridSystem(backend), VectorSystem(backend), KeywordSystem(backend)),
                               strict=True))
    wall: dict[tuple[str, str], list[float]] = {(n, p): [] for n in paths for p in PARTS}
    cpu: dict[tuple[str, str], list[float]] = {(n, p): [] for n in paths for p in PARTS}
    for r in range(rounds):
        for n, q in enumerate(ds.questions):
            for part in PARTS:
                order = ["fast", "reference"] if (n + r) % 2 else ["reference", "fast"]
                got = {}
                for name in order:
                    system = paths[name][part]
                    t, c = time.perf_counter(), time.thread_time()
                    hits = system.recall(q.group, q.query, 10, now=q.now)
                    cpu[name, part].append((time.thread_time() - c) * 1e3)
                    wall[name, part].append((time.perf_counter() - t) * 1e3)
                    got[name] = [(h.ids, h.score) for h in hits]
                if got["fast"] != got["reference"]:
                    raise SystemExit(f"{part}: fast and reference paths disagree on {q.id}")
    out: dict[str, float] = {"queries": len(ds.questions) * rounds}
    for (name, part), values in wall.items():
        out[f"{part}_{name}_p50_ms"] = statistics.median(values)
        out[f"{part}_{name}_cpu_p50_ms"] = statistics.median(cpu[name, part])
    return out


@own_system
class _OwnTimed:
    """A system whose ``recall`` adds its own thread CPU time to ``spent`` (the harness's share is the rest). It
    wraps memini-hybrid, one of the harness's own systems, and is marked as one too, so the run guards it as it
    guards memini-hybrid (``core.hooks.own_system``)."""

    def __init__(self, system: object) -> None:
        self.system, self.name, self.spent = system, system.name, 0.0

    def ingest(self, items: object) -> None:
        pass  # ingested already

    def recall(self, group: str, query: str, k: int, *, now: object = None, context: object = None) -> object:
        # named keywords, not **kwargs: the wrapper's own cost outside its two readings is the method's error
        c = time.thread_time()
        try:
            return self.system.recall(group, query, k, now=now, context=context)  # type: ignore[attr-defined]
        finally:
            self.spent += time.thread_time() - c


class _PluginTimed(_OwnTimed):
    """``_OwnTimed`` as a plugin: a subclass is not one of the harness's own systems, so every recall gets the
    plugin checks (the threads, the standard streams and the working folder after each call)."""


def overhead(path: str, embedder: str, cache_dir: str, rounds: int = 15) -> dict[str, float]:
    """The harness's per-recall cost against memini-hybrid's own: ``run_system`` (hooks, the recall bound's timer,
    ``check_hits``, token counts, the records) over the ingested and prepared hybrid, LoCoMo turn level, k 10, under
    ``run_guard`` as a run is. Per round, the thread CPU time of the whole run, less that inside the system's
    ``recall``, less that of the same run over no question (its per-run work: the item index, the corpus token
    count), per recall, over the system's own per recall; the median of ``rounds`` rounds. The same for the hybrid
    guarded as a plugin (``plugin_*``), interleaved round by round."""
    import dataclasses

    from memini_bench.core.hooks import run_guard
    from memini_bench.embed.factory import EmbedSettings, build_encoder
    from memini_bench.systems.memini import HybridSystem, MeminiBackend

    ds = load("locomo", path)
    backend = MeminiBackend(build_encoder(EmbedSettings(embedder=embedder, cache_dir=cache_dir)))
    backend.ingest(ds.items)
    backend.prepare([q.query for q in ds.questions])
    empty = dataclasses.replace(ds, questions=())
    rows: dict[str, list[tuple[float, float, float, float]]] = {"": [], "plugin_": []}
    with run_guard():
        for r in range(rounds):
            for prefix in sorted(rows, reverse=bool(r % 2)):
                wrap = _PluginTimed if prefix else _OwnTimed
                rows[prefix].append(_overhead_round(wrap(HybridSystem(backend)), ds, empty))
    n = len(ds.questions)
    out: dict[str, float] = {"queries": n, "rounds": rounds}
    for prefix, got in rows.items():
        out |= {f"{prefix}hybrid_own_cpu_ms": statistics.median(g[0] for g in got) / n * 1e3,
                f"{prefix}harness_cpu_ms": statistics.median(g[1] for g in got) / n * 1e3,
                f"{prefix}harness_over_hybrid": statistics.median(g[1] / g[0] for g in got),
                f"{prefix}harness_over_hybrid_iqr": _quartiles([g[1] / g[0] for g in got])}
    out["per_run_cpu_ms"] = statistics.median(g[2] for g in rows[""]) * 1e3
    outside = []
    with run_guard():
        for _ in range(rounds):
            outside.append(_outside_round(HybridSystem(backend), ds, empty))
    out |= {"outside_bare_cpu_ms": statistics.median(b for b, _ in outside) / n * 1e3,
            "outside_harness_over_hybrid": statistics.median(h / b for b, h in outside),
            "outside_harness_over_hybrid_iqr": _quartiles([h / b for b, h in outside])}
    return out


def _quartiles(values: list[float]) -> list[float]:
    """The first and third quartiles of the rounds' ratios (``statistics.quantiles``, exclusive method): how much
    one round's figure moves on a shared machine."""
    q = statistics.quantiles(values, n=4)
    return [q[0], q[2]]


def _run_cpu(system: object, ds: object, empty: object) -> tuple[float, float]:
    """Thread CPU s of ``run_system`` over no question (its per-run work) and over ``ds``'s questions."""
    from memini_bench.evaluation.runner import run_system

    c = time.thread_time()
    run_system(system, empty, 10)  # type: ignore[arg-type]
    fixed = time.thread_time() - c
    c = time.thread_time()
    run_system(system, ds, 10)  # type: ignore[arg-type]
    return fixed, time.thread_time() - c


def _outside_round(system: object, ds: object, empty: object) -> tuple[float, float]:
    """The outside method: no timer inside the recall. The thread CPU of a bare loop of ``system.recall`` over the
    questions, and of ``run_system`` over them less its per-run work (a run over no question) and less that bare
    loop: (bare s, the harness's s)."""
    c = time.thread_time()
    for q in ds.questions:  # type: ignore[attr-defined]
        system.recall(q.group, q.query, 10, now=q.now, context=dict(q.context))  # type: ignore[attr-defined]
    bare = time.thread_time() - c
    fixed, whole = _run_cpu(system, ds, empty)
    return bare, whole - fixed - bare


def _overhead_round(system: _OwnTimed, ds: object, empty: object) -> tuple[float, float, float, float]:
    """One round of ``overhead``: (the system's own CPU s, the harness's per-recall CPU s in all, the per-run CPU
    s, the whole run's CPU s)."""
    fixed, whole = _run_cpu(system, ds, empty)
    return system.spent, whole - system.spent - fixed, fixed, whole


PEER_NAMES = ("bm25s", "bm25s-global", "sqlite-vec", "sqlite-vec-hybrid", "agentmemory", "mempalace",
              "mempalace-hybrid", "lancedb", "lancedb-fts", "lancedb-hybrid", "qdrant", "qdrant-bm25", "qdrant-hybrid",
              "chroma", "mem0")


def peers(path: str, embedder: str, cache_dir: str, limit: int = 500) -> list[tuple[str, float]]:
    """Recall p50 (ms) of memini-keyword, memini-hybrid and every installed peer adapter on the same LoCoMo questions
    (an even ``limit`` subsample), one process, one shared encoder; a peer whose extra is missing is left out."""
    from memini_bench.core.dataset import subsample
    from memini_bench.embed.factory import build_encoder
    from memini_bench.errors import BenchError
    from memini_bench.evaluation.runner import close_all, run_system
    from memini_bench.modes.options import RunOptions
    from memini_bench.systems.lineup import build_systems

    ds = subsample(load("locomo", path), limit)
    opts = RunOptions.build({"embedder": embedder, "cache_dir": cache_dir})
    encoder = build_encoder(opts.embed)
    out = []
    for name in ("memini-keyword", "memini-hybrid", *PEER_NAMES):
        try:
            systems = build_systems([name], opts.context(lambda: encoder))  # one store each, one encoder
        except BenchError as exc:
            if "extra" in str(exc):
                continue  # its extra is not installed
            raise
        try:
            result = run_system(systems[0], ds, 10)
        finally:
            close_all(systems)
        out.append((name, statistics.median(q.latency_ms for q in result.questions)))
    return out


@dataclass(frozen=True)
class SpeedOptions:
    """The flags of ``speed`` (each ``-name`` and ``--name``)."""

    locomo: str = setting("locomo", "../shared/data/locomo/locomo10.json", "LoCoMo's locomo10.json")
    lme: str = setting("lme", "../shared/data/longmemeval/longmemeval_oracle_sample97.json",
                       "LongMemEval file whose sessions are the long texts of the embedding benchmark")
    texts: int = setting("texts", 2000, "short texts (LoCoMo turns) for the embedding part", type=Int())
    long_texts: int = setting("long-texts", 128, "long texts (512+ token LongMemEval sessions) for the embedding "
                              "part; 0 = none", type=Int())
    rounds: int = setting("rounds", 3, "interleaved rounds of the embedding part", type=Int())
    skip: str = setting("skip", "", "comma list of parts to skip: keyword,cold-run,embedding,recall,end-to-end,hybrid,"
                       "overhead,peers")
    cold_slices: int = setting("cold-slices", 8, "slices of the cold-run part (pairs per round)", type=Int(min=1))
    cold_repeats: int = setting("cold-repeats", 2, "rounds of the cold-run part", type=Int(min=1))
    cold_share: int = setting("cold-share", 1, "the cold-run part embeds every Nth text of the run (1 = all)",
                              type=Int(min=1))
    hybrid_embedder: str = setting("hybrid-embedder", "minilm", "vectors for the hybrid part (minilm, hash)")
    out: str = setting("out", "runs/bench/speed.json", "the results file (docs/performance.md)")
    merge: bool = setting("merge", False, "write the parts that ran into the existing --out file, each with its own "
                          "config (the command, the machine's load, the commit), and keep its other parts")


@command(SpeedOptions, name="speed")
def main_command(args: SpeedOptions) -> int | None:
    check_bench_out(args.out)
    if args.merge:
        merged(args.out, {}, {})  # the file to merge into is there and is one, before any work
    if not os.path.exists(args.locomo):
        raise SystemExit(f"{args.locomo}: no such file; pass --locomo PATH to locomo10.json")
    skip = set(args.skip.split(","))
    np.set_printoptions(precision=3)
    figures: dict[str, object] = {}
    start = bench_start()
    started = time.perf_counter()
    if "keyword" not in skip:
        k = figures["keyword"] = keyword_leg(args.locomo)
        print(f"keyword leg, LoCoMo turn level, pool {POOL}, {k['queries']} queries: memini ({k['path']}) p50 "
              f"{k['memini_p50_ms']:.3f} ms vs FTS5 p50 {k['fts5_p50_ms']:.3f} ms -> {k['speedup_p50']:.1f}x faster "
              f"(mean {k['speedup_mean']:.1f}x); rankings identical", flush=True)
    if "cold-run" not in skip:
        c = figures["cold_run"] = cold_run(args.locomo, args.cold_slices, args.cold_repeats, args.cold_share)
        print(cold_run_line(c), flush=True)
    if "embedding" not in skip:
        sets = embedding_texts(args.locomo, args.lme, args.texts, args.long_texts if os.path.exists(args.lme) else 0)
        labels = {"short": "LoCoMo turns", "long": "LongMemEval sessions of 512+ tokens"}
        figures["embedding"] = {"rounds": args.rounds, "sets": {}}
        for name, texts in sets.items():
            rows = embedding(texts, args.rounds)
            figures["embedding"]["sets"][name] = {"label": labels[name], "texts": len(texts), "rows": rows}
            for line in embedding_lines(labels[name], len(texts), args.rounds, rows):
                print(line, flush=True)
    if "recall" not in skip:
        r = figures["precision_recall"] = precision_recall(args.locomo)
        for variant, row in r.items():
            print(f"LoCoMo turn level, memini-vector, {variant}: R@5 {fmt_pct(row['r5'], 2)}, "
                  f"R@10 {fmt_pct(row['r10'], 2)}, MRR {fmt_pct(row['mrr'], 2)}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if "end-to-end" not in skip:
            w = figures["end_to_end"] = end_to_end(args.locomo, tmp)
            print(f"full LoCoMo turn-level run (-k 5,10, MiniLM): cold cache {w['cold_s']:.1f} s, warm cache "
                  f"{w['warm_s']:.2f} s, the fastest of {', '.join(f'{x:.2f}' for x in w['warm_runs_s'])} "
                  f"({w['cold_over_warm']:.1f}x)", flush=True)
        if "hybrid" not in skip:
            # step 3's cache when it ran, else the user's (default) embedding cache
            h = hybrid(args.locomo, args.hybrid_embedder, "" if "end-to-end" in skip else os.path.join(tmp, "cache"))
            figures["hybrid"] = {"embedder": args.hybrid_embedder, "path": kernel_path(), **h}
            for part in PARTS:
                fast, ref = h[f"{part}_fast_p50_ms"], h[f"{part}_reference_p50_ms"]
                fast_cpu, ref_cpu = h[f"{part}_fast_cpu_p50_ms"], h[f"{part}_reference_cpu_p50_ms"]
                print(f"memini-{part}, LoCoMo turn level, k 10, {args.hybrid_embedder}, {h['queries']:.0f} queries: "
                      f"fast p50 {fast:.3f} ms vs reference p50 {ref:.3f} ms -> {ref / fast:.1f}x (thread CPU p50 "
                      f"{fast_cpu:.3f} vs {ref_cpu:.3f} ms, {ref_cpu / fast_cpu:.1f}x); rankings and scores identical",
                      flush=True)
        if "overhead" not in skip:
            o = figures["overhead"] = {"embedder": args.hybrid_embedder, "path": kernel_path(), **overhead(
                args.locomo, args.hybrid_embedder, "" if "end-to-end" in skip else os.path.join(tmp, "cache"))}
            print(f"harness per recall (run_system: hooks, timers, checks), LoCoMo turn level, k 10, "
                  f"{args.hybrid_embedder}, {o['queries']} questions x {o['rounds']}: {o['harness_cpu_ms']:.3f} ms "
                  f"CPU vs memini-hybrid's own {o['hybrid_own_cpu_ms']:.3f} ms -> "
                  f"{fmt_pct(o['harness_over_hybrid'], 0)} of the recall; guarded as a plugin "
                  f"{o['plugin_harness_cpu_ms']:.3f} ms vs {o['plugin_hybrid_own_cpu_ms']:.3f} ms -> "
                  f"{fmt_pct(o['plugin_harness_over_hybrid'], 0)}; measured from outside (a bare recall loop, no "
                  f"timer inside the recall) {fmt_pct(o['outside_harness_over_hybrid'], 0)} of the bare loop's "
                  f"{o['outside_bare_cpu_ms']:.3f} ms", flush=True)
        if "peers" not in skip:
            cache = "" if "end-to-end" in skip else os.path.join(tmp, "cache")
            rows = peers(args.locomo, args.hybrid_embedder, cache)
            figures["peers"] = {"embedder": args.hybrid_embedder, "p50_ms": dict(rows)}
            base = dict(rows)
            for name, p50 in rows:
                print(f"{name}, LoCoMo turn level (500 questions), k 10: recall p50 {p50:.3f} ms -> "
                      f"{p50 / base['memini-keyword']:.1f}x memini-keyword, {p50 / base['memini-hybrid']:.1f}x "
                      "memini-hybrid", flush=True)
    write_results(args, figures, start, time.perf_counter() - started)


def write_results(args: SpeedOptions, figures: dict, start: dict, seconds: float) -> None:
    """``results/bench/speed.json``: every part's figures, the settings and the machine (docs/performance.md); with
    ``--merge``, the parts that ran replace theirs in the existing file, each with its own config."""
    from memini_bench.results.provenance import bench_config
    from memini_bench.results.schema import bench_document
    from memini_bench.results.write import write_results_file

    if args.merge:
        doc = merged(args.out, figures, {**start, "seconds": seconds,
                                         "command": shlex.join(["python", "cmd/speed.py", *sys.argv[1:]])})
        write_results_file(Path(args.out), bench_document(doc))
        print(f"wrote {', '.join(figures)} into {args.out}", file=sys.stderr, flush=True)
        return
    config = bench_config("speed", {"locomo": args.locomo, "texts": args.texts, "lme": args.lme,
                                    "long_texts": args.long_texts, "rounds": args.rounds, "skip": args.skip},
                          start, seconds)
    write_results_file(Path(args.out), bench_document({"config": config, **figures}))
    print(f"wrote {args.out}", file=sys.stderr, flush=True)


def merged(path: str, figures: dict, config: dict) -> dict:
    """The speed document at ``path`` (its ``config`` and parts) with each part of ``figures`` in place of its own,
    that part's ``config`` beside its figures."""
    from memini_bench.errors import BenchError

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchError(f"--out {path}: --merge needs the speed results file to merge into ({exc}); run make speed "
                         "first or drop --merge") from None
    if not isinstance(doc, dict) or doc.get("kind") != "bench" or doc.get("config", {}).get("mode") != "speed":
        raise BenchError(f"--out {path}: not a make speed results file; --merge writes only into one")
    parts = {k: v for k, v in doc.items() if k not in ("schema", "schema_version", "kind")}
    return parts | {name: {**value, "config": config} for name, value in figures.items()}


def main(argv: list[str] | None = None) -> int | None:
    """The entry point: ``main_command`` with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
