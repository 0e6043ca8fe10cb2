"""How long ``import memini_bench.cli`` takes here and in an earlier commit (``python cmd/import_time.py``).

Each run is a fresh ``python -X importtime -c "import memini_bench.cli"`` with the checkout first on PYTHONPATH; the
earlier commit is checked out in a temporary git worktree (its C extensions built, as an install builds them) and
its runs alternate with this checkout's, so a load on the machine falls on both alike. Printed per tree: the median
wall time of the process, its median CPU time (user + system, from the children's rusage) and the median of what
``-X importtime`` reports for ``memini_bench.cli`` itself (cumulative), and the ratios of this checkout's to the
earlier one's. It prints only: the figures in docs/performance.md were made by it.
"""

from __future__ import annotations

import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.console import run_command
from memini_bench.core.settings import Int, command, setting
from memini_bench.errors import BenchError

ROOT = Path(__file__).resolve().parents[2]
CODE = "import memini_bench.cli"


@dataclass(frozen=True)
class ImportTimeOptions:
    before: str = setting("before", "f138d29", "the earlier commit (default: the last one before the verbs, the "
                          "light core and the mode specs)")
    runs: int = setting("runs", 15, "runs per tree, alternating", type=Int(min=1, max=500))


def one_run(tree: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, -X importtime's cumulative s for memini_bench.cli) of one fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", CODE], cwd=tree, env=env, capture_output=True,
                          text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise BenchError(f"{tree}: {CODE} failed: {done.stderr.strip().splitlines()[-1:]}")
    found = re.search(r"\|\s*(\d+) \| memini_bench\.cli$", done.stderr, re.M)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, int(found.group(1)) / 1e6 if found else float("nan")


def earlier_tree(rev: str, folder: Path) -> Path:
    """A worktree of ``rev`` under ``folder`` with its C extensions built."""
    tree = folder / "before"
    git = subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=ROOT, capture_output=True,
                         text=True)
    if git.returncode != 0:
        raise BenchError(f"--before {rev}: git worktree add failed: {git.stderr.strip()}")
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree, capture_output=True,
                   check=False)
    return tree


@command(ImportTimeOptions, name="import-time")
def main_command(args: ImportTimeOptions) -> int | None:
    with tempfile.TemporaryDirectory() as tmp:
        trees = {f"before ({args.before})": earlier_tree(args.before, Path(tmp)), "this checkout": ROOT}
        try:
            runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
            for _ in range(args.runs):
                for name, tree in trees.items():
                    runs[name].append(one_run(tree))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(trees[f"before ({args.before})"])],
                           cwd=ROOT, capture_output=True, check=False)
    medians = {name: [statistics.median(r[i] for r in rs) for i in range(3)] for name, rs in runs.items()}
    print(f"{CODE}, {args.runs} alternating runs per tree, medians (load average {os.getloadavg()[0]:.1f}):")
    for name, (wall, cpu, imp) in medians.items():
        print(f"  {name}: wall {wall:.3f} s, CPU {cpu:.3f} s, -X importtime memini_bench.cli {imp:.3f} s")
    (w0, c0, i0), (w1, c1, i1) = medians.values()
    print(f"  this checkout / before: wall {w1 / w0:.2f}, CPU {c1 / c0:.2f}, importtime {i1 / i0:.2f}")
    return 0


def main(argv: list[str] | None = None) -> int | None:
    """The entry point: ``main_command`` with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "import-time")
