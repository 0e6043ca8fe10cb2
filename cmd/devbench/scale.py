"""``make scale``: wall time, peak memory and per-phase timings of a memini run on LongMemEval-shaped files.

Files come from ``devbench.synth`` (generated once into ``--dir``, never committed): 1/4, 1/2 and full
LongMemEval-S shape (125, 250, 500 records x 48 sessions) and the -M shape (500 x 500). Each S file is run twice
(the first run "cold": the file just written or not in the page cache yet; the second "warm"), the M file once.
Embedding uses the ``hash`` embedder: what this measures is loading, indexing and recall.

Phase times are wall clock (on a busy machine they stretch; ``phases_cpu_s`` holds the run's own CPU time per phase,
which does not; the CPU column is the child's own CPU time, all its threads (``embed.background``'s embeds on the
second core while the keyword index is built), plus that of any process it started and waited for; the largest
such process's peak RSS is ``children_peak_gb`` (0 when it starts none, as a memini run does), and
``peak_gb_with_children`` adds it to the run's own peak: a bound on the whole run's memory, counting pages
shared by fork twice). The parent also samples,
every half second, the proportional set size (PSS, shared pages split between the processes sharing them) of the
run and its children together: ``tree_pss_peak_gb``, the largest sample (a sampled figure may miss a short peak).
Each run records the 1-minute load average before and after it (``load_average``): the machine may be shared.
Each run is a child process (``python cmd/scale.py --worker FILE``) doing the normal run's steps
(load and prepare the data set, build memini's three systems, ingest, prepare, recall every question, score;
no results file), timing each phase and reading its own peak RSS after each. The parent measures the child's wall
time and peak RSS (``wait4``), polls its RSS and stops it above ``--max-rss-gb`` (the machine is shared).
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from devbench import synth
from memini_bench.core.console import run_command
from memini_bench.core.settings import Int, Real, command, setting
from memini_bench.core.table import Cell, Column, Table, fmt_num, markdown
from memini_bench.errors import BenchError

S_SCALES = ((125, "1/4 S"), (250, "1/2 S"), (500, "S"))
M_SCALES = (("M", 50_000), ("M-less", 250_000))  # label, pool of filler sessions


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # Linux: kilobytes


def worker(path: str, embedder: str) -> dict[str, object]:
    """One timed run over ``path`` (see the module docstring); returns the phases and figures."""
    from memini_bench.evaluation.metrics import score
    from memini_bench.evaluation.runner import run_system
    from memini_bench.modes.common import load_prepared
    from memini_bench.modes.options import RunOptions
    from memini_bench.systems.lineup import systems_for

    phases: dict[str, float] = {}
    phases_cpu: dict[str, float] = {}
    peaks: dict[str, float] = {}
    cpu = [time.process_time()]

    def mark(name: str, t0: float) -> float:
        now = time.perf_counter()
        phases[name] = now - t0
        phases_cpu[name] = time.process_time() - cpu[0]
        cpu[0] = time.process_time()
        peaks[name] = _peak_gb()
        return now

    t = t_start = time.perf_counter()
    opts = RunOptions.build({"suite": "longmemeval", "data": path, "embedder": embedder, "k": (5, 10)})
    ctx = opts.context()
    systems = systems_for(opts.lineup, ctx)
    ds = load_prepared(opts)
    t = mark("load", t)
    results = [run_system(s, ds, opts.depth) for s in systems]
    t = mark("ingest+recall", t)
    scores = [score(r, 10) for r in results]
    mark("score", t)
    backend = getattr(systems[0], "backend", None)
    timings = {k.removesuffix("_ms"): v / 1e3 for k, v in getattr(backend, "timings_ms", {}).items()}
    recall = {r.system: sum(q.latency_ms for q in r.questions) / 1e3 for r in results}
    return {
        "items": len(ds.items), "distinct_texts": len({it.content for it in ds.items}),
        "questions": len(ds.questions), "phases_s": phases, "phases_cpu_s": phases_cpu, "peak_gb_after": peaks,
        "backend_s": timings,
        "recall_s": recall, "p50_ms": {r.system: statistics.median([q.latency_ms for q in r.questions])
                                       for r in results},
        "recall_any@10": {s.system: s["recall_any@{k}"] for s in scores}, "total_s": time.perf_counter() - t_start,
        "cpu_s": time.process_time() + _children_cpu_s(), "children_cpu_s": _children_cpu_s(),
        "children_peak_gb": _children_peak_gb(),
        "peak_gb_with_children": max(peaks.values()) + _children_peak_gb(),
    }


def _children_cpu_s() -> float:
    """CPU time of this process's finished children (processes it started and waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _children_peak_gb() -> float:
    """The largest peak RSS of a finished child (pages it shared with this process by fork included)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6


@dataclass
class Measured:
    label: str
    run: str
    wall_s: float
    peak_gb: float
    report: dict[str, object] = field(default_factory=dict)
    error: str = ""
    load_average: list[float] = field(default_factory=list)  # 1-minute load before and after the run
    tree_pss_peak_gb: float = 0.0  # the largest sampled PSS of the run and its children together


def _tree_pss_gb(pid: int) -> float:
    """The PSS of ``pid`` and its descendants, summed (0 where /proc does not say)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total / 1e6


def _rss_gb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1e6
    except OSError:
        pass
    return 0.0


def measure(path: Path, label: str, run: str, embedder: str, max_rss_gb: float) -> Measured:
    """Run the worker on ``path`` in a child process: its wall time, peak RSS and report."""
    cmd = [sys.executable, str(Path(__file__).resolve().parents[1] / "scale.py"), "--worker", str(path), "--embedder",
           embedder]
    env = {**os.environ, "MEMINI_BENCH_PROGRESS": "0"}
    t = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    killed = threading.Event()
    seen = [0.0, 0.0]  # the child's RSS, the tree's PSS
    loads = [os.getloadavg()[0]]

    def watch() -> None:
        while child.poll() is None:
            seen[0] = max(seen[0], _rss_gb(child.pid))
            seen[1] = max(seen[1], _tree_pss_gb(child.pid))
            if seen[0] > max_rss_gb:
                killed.set()
                child.kill()
                return
            time.sleep(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out, err = child.communicate()
    wall = time.perf_counter() - t
    watcher.join()
    loads.append(os.getloadavg()[0])
    peak = seen[0]  # polled; the child's own ru_maxrss below is exact
    sampled = {"load_average": loads, "tree_pss_peak_gb": seen[1]}
    if killed.is_set():
        return Measured(label, run, wall, peak, error=f"stopped above {max_rss_gb:g} GB RSS", **sampled)
    if child.returncode:
        return Measured(label, run, wall, peak, error=(err.strip().splitlines() or ["failed"])[-1], **sampled)
    report = json.loads(out.strip().splitlines()[-1])
    own_peak = max(report["peak_gb_after"].values())
    return Measured(label, run, wall, own_peak, report, **sampled)


COLUMNS = (Column("scale", "scale", "left"), Column("run", "run", "left"),
           Column("items", "items / distinct texts", "left"), Column("wall_s", "wall s"), Column("cpu_s", "CPU s"),
           Column("peak_gb", "peak RSS GB"), Column("load_s", "load s"), Column("keyword_index_s", "keyword index s"),
           Column("dedup_keys_s", "dedup keys s"), Column("embed_s", "embed s"), Column("ingest_s", "ingest s"),
           Column("recall_s", "recall s"), Column("hybrid_p50_ms", "hybrid p50 ms"),
           Column("vector_p50_ms", "vector p50 ms"), Column("keyword_p50_ms", "keyword p50 ms"))


def cells(m: Measured) -> tuple[Cell, ...]:
    """One run's cells under ``COLUMNS``; a failed run: its error in the items cell, ``-`` where nothing was
    measured."""
    head = (Cell(m.label, m.label), Cell(m.run, m.run))
    if m.error:
        return (*head, Cell(m.error, f"failed: {m.error}"), Cell(m.wall_s, fmt_num(m.wall_s, 1)), Cell(None, "-"),
                Cell(m.peak_gb, fmt_num(m.peak_gb)), *(Cell(None, "-") for _ in COLUMNS[6:]))
    r = m.report
    ph, be, p50 = r["phases_s"], r["backend_s"], r["p50_ms"]
    recall_s = sum(r["recall_s"].values())
    seconds = (ph["load"], be.get("keyword_index", 0), be.get("dedup_keys", 0), be.get("embed", 0),
               ph["ingest+recall"] - recall_s, recall_s)
    return (*head, Cell((r["items"], r["distinct_texts"]), f"{r['items']} / {r['distinct_texts']}"),
            Cell(m.wall_s, fmt_num(m.wall_s, 1)), Cell(r["cpu_s"], fmt_num(r["cpu_s"], 1)),
            Cell(m.peak_gb, fmt_num(m.peak_gb)), *(Cell(x, fmt_num(x, 1)) for x in seconds),
            *(Cell(p50.get(s, float("nan")), fmt_num(p50.get(s, float("nan")), 3))
              for s in ("memini-hybrid", "memini-vector", "memini-keyword")))


def table(runs: list[Measured]) -> Table:
    """Every run (``make scale``'s printout and the docs' scale block)."""
    return Table(COLUMNS, tuple(cells(m) for m in runs),
                 notes=("N: one run per row, each timed once (cold: an empty embedding cache; warm: the cache the "
                        "cold run filled; once: an M scale's single run). No marks.",))


def row(m: Measured) -> str:
    """One run's Markdown row (printed as it is measured)."""
    return markdown(table([m])).splitlines()[2]


HEADER = markdown(table([])).rstrip("\n")


def ensure(path: Path, source: synth.Source | None, shape: synth.Shape, data: str) -> synth.Source | None:
    """Write ``path`` unless it is there; returns the (lazily loaded) sentence source."""
    if path.exists():
        return source
    source = source or synth.load_source(data)
    t = time.perf_counter()
    size = synth.write(path, source, shape)
    print(f"generated {path} ({size / 1e9:.2f} GB) in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    return source


@dataclass(frozen=True)
class ScaleOptions:
    """The flags of ``scale`` (each ``-name`` and ``--name``)."""

    worker: str = setting("worker", "", "(internal: a child process's job)")
    data: str = setting("data", "../shared/data", "the shared data folder (sentences for the files)")
    dir: str = setting("dir", "/tmp/memini-scale", "where the generated files live (not the repo)")
    embedder: str = setting("embedder", "hash", "the embedder (hash: no model, so the harness itself is timed)")
    scales: str = setting("scales", "1/4,1/2,S,M,M-less", "comma list of 1/4, 1/2, S, M, M-less")
    max_rss_gb: float = setting("max-rss-gb", 22.0, "stop a run whose RSS passes this", type=Real())
    seed: int = setting("seed", 0, "the generated files' seed", type=Int())
    out: str = setting("out", "runs/bench/scale.json", "the results file (docs/performance.md)")


@command(ScaleOptions, name="scale")
def main_command(args: ScaleOptions) -> int | None:
    if args.worker:
        print(json.dumps(worker(args.worker, args.embedder)))
        return 0
    from memini_bench.results.provenance import bench_start, check_bench_out

    check_bench_out(args.out)
    wanted = set(args.scales.split(","))
    known = {label.split()[0] for _, label in S_SCALES} | {label for label, _ in M_SCALES}
    if wanted - known:
        raise BenchError(f"-scales {args.scales}: unknown {', '.join(sorted(wanted - known))}; use a comma list of "
                         f"{', '.join(sorted(known))}")
    folder = Path(args.dir)
    source: synth.Source | None = None
    runs: list[Measured] = []

    def record(m: Measured) -> None:
        runs.append(m)
        print(row(m), flush=True)

    print(HEADER, flush=True)
    start = bench_start()
    started = time.perf_counter()
    for records, label in S_SCALES:
        if label.split()[0] not in wanted:
            continue
        shape = synth.Shape(records=records, seed=args.seed)
        path = folder / f"lme-s-{records}-seed{args.seed}.json"
        source = ensure(path, source, shape, args.data)
        for run in ("cold", "warm"):
            record(measure(path, label, run, args.embedder, args.max_rss_gb))
    for label, pool in M_SCALES:
        if label not in wanted:
            continue
        shape = synth.Shape(sessions=500, pool=pool, seed=args.seed)
        path = folder / (f"lme-m-seed{args.seed}.json" if pool == synth.Shape().pool else
                         f"lme-m-pool{pool}-seed{args.seed}.json")
        source = ensure(path, source, shape, args.data)
        record(measure(path, label, "once", args.embedder, args.max_rss_gb))
    write_results(Path(args.out), args, runs, start, time.perf_counter() - started)
    return 0


def write_results(path: Path, args: ScaleOptions, runs: list[Measured], start: dict,
                  seconds: float) -> None:
    """``results/bench/scale.json``: the settings, the machine and every run (docs/performance.md)."""
    from memini_bench.results.provenance import bench_config
    from memini_bench.results.schema import bench_document
    from memini_bench.results.write import write_results_file

    config = bench_config("scale", {"embedder": args.embedder, "seed": args.seed, "scales": args.scales,
                                    "max_rss_gb": args.max_rss_gb}, start, seconds)
    write_results_file(path, bench_document({"config": config, "runs": [dataclasses.asdict(m) for m in runs]}))
    print(f"wrote {path}", file=sys.stderr, flush=True)



def main(argv: list[str] | None = None) -> int | None:
    """The entry point: ``main_command`` with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")


if __name__ == "__main__":
    sys.exit(main())
