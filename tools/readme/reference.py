"""The generated tables of docs/reference.md, from the reference system's committed runs (``results/reference/``):

- ``reference-held``: ``make reference-held``'s run per data set on the held split (``*-held-peers.json``);
- ``reference-full``: the full sets (``*-reference.json``);
- ``reference-depth``: ``sqlite-vec-hybrid`` with each leg k deep against its pooled variant
  (``*-sqlite-vec-depth.json``);
- ``claimants`` (docs/peers.md): the claimant peers beside reference and memini-hybrid, one run per LoCoMo level
  (``results/*-claimants.json``);
- ``embedders`` (docs/peers.md): memini's three and reference with ``-embedder e5-small`` / ``mpnet``
  (``results/*-e5-small.json``, ``results/*-mpnet.json``).

Each table: every system's R@5, R@10 and MRR (percent), recall p50 (ms) and, for each metric, ``reference`` (or
the system the file's tests are against) minus the system with its Holm-adjusted p (``-significance``: exact
McNemar on R@K, paired bootstrap on MRR, Holm across the run's whole family); bold = significant at 0.05 after
Holm.
"""

from __future__ import annotations

from pathlib import Path

from memini_bench.results.schema import CompareResults
from tools.readme.blocks import get

METRICS = (("R@5", 5, "recall_at_k"), ("R@10", 10, "recall_at_k"), ("MRR", 10, "mrr"))
FOLDER = "reference"


def table(doc: CompareResults) -> str:
    """One results file's table (module docstring), systems by R@5; the differences are to the system the file's
    significance rows test against (``reference`` in the held and full runs)."""
    by = {(s.system, s.k): s for s in doc.scores}
    rows = doc.extra.get("significance", [])
    against = rows[0]["system_a"] if rows else "reference"
    sig = {(r["system_b"], r["metric"]): r for r in rows if r.get("system_a") == against}
    systems = sorted(doc.systems, key=lambda s: -by[(s, 5)].recall_at_k)
    lines = [f"**{doc.dataset}** ({doc.config.get('questions', '?')} questions)", "",
             f"| system | R@5 | R@10 | MRR | p50 ms | {against} - system: R@5 / R@10 / MRR (pp, Holm p) |",
             "|---|--:|--:|--:|--:|---|"]
    for s in systems:
        cells = [f"{getattr(by[(s, k)], attr) * 100:.1f}" for _, k, attr in METRICS]
        diffs = []
        for name, _, _ in METRICS:
            row = sig.get((s, name))
            if row is not None:
                mark = "**" if row["significant"] else ""
                diffs.append(f"{mark}{row['delta'] * 100:+.1f}{mark} (p {row['p_adjusted']:.2g})")
        lines.append(f"| {s} | {' | '.join(cells)} | {by[(s, 10)].p50_ms:.2f} | {' / '.join(diffs) or '-'} |")
    return "\n".join(lines) + "\n"


def _tables(results_dir: Path, pattern: str, make: str, folder: str = FOLDER) -> str:
    paths = sorted((Path(results_dir) / folder).glob(pattern))
    docs = [d for d in (get(p.parent, p.name, CompareResults) for p in paths) if d is not None]
    if not docs:
        where = f"{folder}/" if folder else ""
        return f"_(`results/{where}{pattern}` is not committed yet: `{make}` writes it)_\n"
    return "\n".join(table(d) for d in docs)


def held(results_dir: Path) -> str:
    return _tables(results_dir, "*-held-peers.json", "make reference-held")


def full(results_dir: Path) -> str:
    return _tables(results_dir, "*-reference.json", "make reference-held")


def depth(results_dir: Path) -> str:
    return _tables(results_dir, "*-sqlite-vec-depth.json", "make reference-held")


def claimants(results_dir: Path) -> str:
    return _tables(results_dir, "*-claimants.json", "make results-claimants", folder="")


def embedders(results_dir: Path) -> str:
    tables = [_tables(results_dir, f"*-{e}.json", "make results-embedders", folder="") for e in ("e5-small", "mpnet")]
    return "\n".join(tables)
