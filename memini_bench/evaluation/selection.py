"""Picking one setting for several data sets from their tune-split sweeps (``make reference-search``): the
reference system's defaults.

Reads every sweep summary (``<folder>/*-sweep-*/summary.json``; one ``-sweep`` over the same grid per data set,
tune split only), scores each cell by the mean over the data sets of ``(R@K0 + R@K1 + MRR) / 3`` (K0, K1: the
smallest and largest K of the sweeps; the three figures the reference system is compared on), and writes the
ranking and the chosen cell (the best; ties: the earlier cell in grid order) as a ``study`` results file. No held
figure is read: held is evaluated once, after.

    python cmd/reference_select.py -sweeps results/reference -out results/reference/selection.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.console import run_command
from memini_bench.core.settings import command, setting
from memini_bench.errors import BenchError
from memini_bench.results.provenance import harness
from memini_bench.results.read import load
from memini_bench.results.schema import Score, StudyResults, SweepSummary
from memini_bench.results.write import write_results_file

RULE = "max over cells of mean over data sets of (R@K0 + R@K1 + MRR) / 3 on the tune split; ties: earlier grid cell"


def cell_scores(summary: SweepSummary) -> dict[str, tuple[float, float, float]]:
    """Per cell label: (R@K0, R@K1, MRR) on the summary's tune split."""
    out = {}
    for cell in summary.extra["tune"]["cells"]:
        scores = sorted((Score.from_row(s) for s in cell["scores"]), key=lambda s: s.k)
        out[cell["cell"]] = (scores[0].recall_at_k, scores[-1].recall_at_k, scores[0].mrr)
    return out


def select(summaries: dict[str, SweepSummary]) -> dict:
    """The ranking of every cell and the selected one (module docstring)."""
    if not summaries:
        raise BenchError("-sweeps: no *-sweep-*/summary.json in the folder; run make reference-search first")
    for name, s in summaries.items():
        if s.config.get("holdout") != "tune":
            raise BenchError(f"-sweeps: {name} is not a tune-split sweep (holdout {s.config.get('holdout')}); "
                             "the defaults are chosen on tune only")
    per_set = {name: cell_scores(s) for name, s in summaries.items()}
    grids = [list(cells) for cells in per_set.values()]
    if any(g != grids[0] for g in grids):
        raise BenchError("-sweeps: the sweeps do not share one grid; run them with the same -sweep")
    ranking = []
    for i, label in enumerate(grids[0]):
        objective = sum(sum(per_set[n][label]) / 3 for n in per_set) / len(per_set)
        ranking.append({"cell": label, "objective": objective, "grid_index": i,
                        "per_dataset": {n: dict(zip(("R@K0", "R@K1", "MRR"), per_set[n][label], strict=True))
                                        for n in per_set}})
    ranking.sort(key=lambda r: (-r["objective"], r["grid_index"]))
    return {"rule": RULE, "sweep": next(iter(summaries.values())).config["sweep"], "cells_tried": len(grids[0]),
            "datasets": list(summaries), "selected": ranking[0]["cell"], "ranking": ranking}


@dataclass(frozen=True)
class SelectionOptions:
    """The flags of ``cmd/reference_select.py``."""

    sweeps: str = setting("sweeps", "results/reference", "the folder holding one tune-split sweep per data set "
                          "(<folder>/*-sweep-*/summary.json)")
    out: str = setting("out", "runs/reference/selection.json", "the selection's results file")


@command(SelectionOptions, name="reference-select")
def main_command(args: SelectionOptions) -> int:
    paths = sorted(Path(args.sweeps).glob("*-sweep-*/summary.json"))
    summaries = {}
    for path in paths:
        doc = load(path)
        if not isinstance(doc, SweepSummary):
            raise BenchError(f"{path}: a {doc.KIND} results file, not a sweep summary")
        summaries[path.parent.name] = doc
    chosen = select(summaries)
    write_results_file(Path(args.out), StudyResults(config={"mode": "reference-select", "rule": RULE,
                                                            "sweeps": args.sweeps, **harness()}, extra=chosen))
    print(f"selected {chosen['selected']} out of {chosen['cells_tried']} cells "
          f"({chosen['ranking'][0]['objective'] * 100:.2f})")
    for row in chosen["ranking"][:10]:
        print(f"  {row['objective'] * 100:.2f}  {row['cell']}")
    return 0


def main(argv: list[str] | None = None) -> int | None:
    """The entry point, with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
