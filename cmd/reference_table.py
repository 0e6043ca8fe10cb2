"""Markdown tables of the reference system's committed held runs (``make reference-held``), for docs/reference.md.

    python cmd/reference_table.py results/reference/locomo-held-peers.json [...]

One table per file: every system's R@5, R@10 and MRR (percent), recall p50 (ms), and, for each metric, the
difference of ``reference`` minus the system with its Holm-adjusted p (``-significance``: exact McNemar on R@K,
paired bootstrap on MRR, Holm across the whole family of the run).
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

METRICS = (("R@5", 5, "recall_at_k"), ("R@10", 10, "recall_at_k"), ("MRR", 10, "mrr"))


def table(path: str) -> str:
    doc = orjson.loads(Path(path).read_bytes())
    by = {(r["system"], r["k"]): r for r in doc["results"]}
    sig = {(s["system_b"], s["metric"]): s for s in doc.get("significance", []) if s["system_a"] == "reference"}
    systems = list(dict.fromkeys(r["system"] for r in doc["results"]))
    systems.sort(key=lambda s: -by[(s, 5)]["recall_at_k"])
    head = f"**{doc['config']['dataset']}** ({doc['config']['questions']} questions)\n\n"
    lines = ["| system | R@5 | R@10 | MRR | p50 ms | reference - system: R@5 / R@10 / MRR (pp, Holm p) |",
             "|---|--:|--:|--:|--:|---|"]
    for s in systems:
        cells = [f"{by[(s, k)][attr] * 100:.1f}" for _, k, attr in METRICS]
        diffs = []
        for name, _, _ in METRICS:
            row = sig.get((s, name))
            if row is not None:
                mark = "**" if row["significant"] else ""
                diffs.append(f"{mark}{row['delta'] * 100:+.1f}{mark} (p {row['p_adjusted']:.2g})")
        lines.append(f"| {s} | {' | '.join(cells)} | {by[(s, 10)]['p50_ms']:.2f} | "
                     f"{' / '.join(diffs) if diffs else '-'} |")
    return head + "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path in argv:
        try:
            sys.stdout.write(table(path) + "\n")
        except (OSError, orjson.JSONDecodeError, KeyError) as exc:
            print(f"reference_table: {path}: not a results file of make reference-held ({exc})", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
