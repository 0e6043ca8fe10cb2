"""Pick the reference system's defaults from the committed tune-split sweeps (``make reference-search``).

Reads each ``summary.json`` given (one ``-sweep`` over the same grid per data set, tune split only), scores every
cell by the mean over the data sets of ``(R@K0 + R@K1 + MRR) / 3`` (K0, K1: the smallest and largest K of the
sweeps; the three figures the reference system is compared on), and writes the ranking and the chosen cell (the
best; ties: the earlier cell in grid order) to ``--out``. No held figure is read: held is evaluated once, after.

    python cmd/reference_select.py --out results/reference/selection.json SUMMARY.json [SUMMARY.json ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson


def cell_scores(summary: dict) -> dict[str, tuple[float, float, float]]:
    """Per cell label: (R@K0, R@K1, MRR) on the summary's tune split."""
    out = {}
    for cell in summary["tune"]["cells"]:
        scores = sorted(cell["scores"], key=lambda s: s["k"])
        out[cell["cell"]] = (scores[0]["recall_at_k"], scores[-1]["recall_at_k"], scores[0]["mrr"])
    return out


def select(summaries: dict[str, dict]) -> dict:
    per_set = {name: cell_scores(s) for name, s in summaries.items()}
    grids = [list(cells) for cells in per_set.values()]
    if any(g != grids[0] for g in grids):
        raise SystemExit("reference_select: the sweeps do not share one grid; run them with the same -sweep")
    for name, s in summaries.items():
        if s["config"]["holdout"] != "tune":
            raise SystemExit(f"reference_select: {name} is not a tune-split sweep (holdout {s['config']['holdout']})")
    ranking = []
    for i, label in enumerate(grids[0]):
        objective = sum(sum(per_set[n][label]) / 3 for n in per_set) / len(per_set)
        ranking.append({"cell": label, "objective": objective, "grid_index": i,
                        "per_dataset": {n: dict(zip(("R@K0", "R@K1", "MRR"), per_set[n][label], strict=True))
                                        for n in per_set}})
    ranking.sort(key=lambda r: (-r["objective"], r["grid_index"]))
    return {"rule": "max over cells of mean over data sets of (R@K0 + R@K1 + MRR) / 3 on the tune split; ties: "
                    "earlier grid cell", "sweep": next(iter(summaries.values()))["config"]["sweep"],
            "cells_tried": len(grids[0]), "datasets": list(summaries), "selected": ranking[0]["cell"],
            "ranking": ranking}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("summaries", nargs="+")
    args = parser.parse_args(argv)
    summaries = {}
    for path in args.summaries:
        try:
            summaries[Path(path).parent.name] = orjson.loads(Path(path).read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            print(f"reference_select: {path}: cannot read a sweep summary ({exc}); run make reference-search",
                  file=sys.stderr)
            return 2
    doc = select(summaries)
    Path(args.out).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"selected {doc['selected']} out of {doc['cells_tried']} cells ({doc['ranking'][0]['objective'] * 100:.2f})")
    for row in doc["ranking"][:10]:
        print(f"  {row['objective'] * 100:.2f}  {row['cell']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
