"""Picking one setting for several data sets from their tune-split sweeps (``make reference-search``): the
reference system's defaults, chosen across data sets by leave-one-data-set-out.

Reads every sweep summary (``<folder>/*-sweep-*/summary.json``, or the committed ``summary.json.gz``; one
``-sweep`` over the same grid per data set, tune split only; no held figure is read: held is evaluated once,
after). Each cell ``c`` gets, on each data set ``d``, the objective ``o(c, d) = (R@K0 + R@K1 + MRR) / 3`` (K0, K1:
the smallest and largest K of the sweeps; the three figures the reference system is compared on), its regret
``r(c, d) = max_c' o(c', d) - o(c, d)`` (how far below the best cell of that data set) and its rank there (1 =
best). Three rules pick a cell from a set of data sets ``D``:

- ``mean``: the largest mean of ``o`` over ``D`` (the rule before cross-data-set selection);
- ``worst-regret``: the smallest largest ``r`` over ``D`` (a setting chosen for its worst data set);
- ``mean-rank``: the smallest mean rank over ``D``.

Leave-one-data-set-out: for each data set ``d`` and rule, the rule picks a cell on the other data sets only, and
that cell's regret and rank on ``d`` (a data set the pick never saw) are recorded. The rule kept is the one whose
largest held-out regret is smallest (ties: the smaller mean held-out regret, then the order above); the defaults are
that rule's pick on every data set. Ties between cells: the earlier grid cell. The file records every cell's
figures on every data set, every rule's leave-one-out picks and the final choice.

    python cmd/reference_select.py -sweeps results/reference -out results/reference/selection.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.console import run_command
from memini_bench.core.settings import command, setting
from memini_bench.core.table import fmt_points
from memini_bench.errors import BenchError
from memini_bench.results.provenance import harness
from memini_bench.results.read import load, sweep_summary
from memini_bench.results.schema import Score, StudyResults, SweepSummary
from memini_bench.results.write import write_results_file

RULES = ("mean", "worst-regret", "mean-rank")
RULE = ("leave-one-data-set-out over the tune splits: each rule (mean objective, worst-case regret, mean rank; "
        "objective (R@K0 + R@K1 + MRR) / 3) picks a cell on all data sets but one and is scored by that cell's "
        "regret on the one left out; the rule with the smallest worst held-out regret picks the defaults on every "
        "data set; ties: earlier grid cell")


def cell_scores(summary: SweepSummary) -> dict[str, tuple[float, float, float]]:
    """Per cell label: (R@K0, R@K1, MRR) on the summary's tune split."""
    out = {}
    for cell in summary.extra["tune"]["cells"]:
        scores = sorted((Score.from_row(s) for s in cell["scores"]), key=lambda s: s.k)
        out[cell["cell"]] = (scores[0]["recall_any@{k}"], scores[-1]["recall_any@{k}"], scores[0]["mrr"])
    return out


def table_of(per_set: dict[str, dict[str, tuple[float, float, float]]], cells: list[str]) -> dict[str, dict]:
    """``table[cell][set]``: R@K0, R@K1, MRR, the objective (their mean), the regret against the set's best cell and
    the rank there (1 = best; ties: the earlier cell)."""
    table = {c: {d: {"R@K0": per_set[d][c][0], "R@K1": per_set[d][c][1], "MRR": per_set[d][c][2],
                     "objective": sum(per_set[d][c]) / 3} for d in per_set} for c in cells}
    for d in per_set:
        order = sorted(range(len(cells)), key=lambda i: (-table[cells[i]][d]["objective"], i))
        best = table[cells[order[0]]][d]["objective"]
        for rank, i in enumerate(order, start=1):
            table[cells[i]][d].update(regret=best - table[cells[i]][d]["objective"], rank=rank)
    return table


def pick(rule: str, table: dict[str, dict[str, dict]], cells: list[str], sets: list[str]) -> str:
    """The cell ``rule`` picks on data sets ``sets`` (``table[cell][set]``: objective, regret, rank); ties: the
    earlier cell."""
    def key(i_cell: tuple[int, str]) -> tuple[float, int]:
        i, cell = i_cell
        rows = [table[cell][d] for d in sets]
        if rule == "mean":
            value = -sum(r["objective"] for r in rows) / len(rows)
        elif rule == "worst-regret":
            value = max(r["regret"] for r in rows)
        else:
            value = sum(r["rank"] for r in rows) / len(rows)
        return value, i

    return min(enumerate(cells), key=key)[1]


def leave_one_out(table: dict[str, dict[str, dict]], cells: list[str], sets: list[str]) -> dict[str, list[dict]]:
    """Per rule: for each data set, the cell picked on the others and its figures on the one left out."""
    out: dict[str, list[dict]] = {}
    for rule in RULES:
        rows = []
        for held in sets:
            cell = pick(rule, table, cells, [d for d in sets if d != held]) if len(sets) > 1 else cells[0]
            rows.append({"held_out": held, "cell": cell, **table[cell][held]})
        out[rule] = rows
    return out


def choose_rule(lodo: dict[str, list[dict]]) -> str:
    """The rule whose worst held-out regret is smallest (ties: mean held-out regret, then ``RULES`` order)."""
    def key(rule: str) -> tuple[float, float, int]:
        regrets = [r["regret"] for r in lodo[rule]]
        return max(regrets), sum(regrets) / len(regrets), RULES.index(rule)

    return min(RULES, key=key)


def select(summaries: dict[str, SweepSummary]) -> dict:
    """Every cell's figures per data set, the leave-one-out picks of each rule and the selected cell (module
    docstring)."""
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
    cells, sets = grids[0], list(per_set)
    table = table_of(per_set, cells)
    lodo = leave_one_out(table, cells, sets)
    rule = choose_rule(lodo)
    selected = pick(rule, table, cells, sets)
    ranking = [{"cell": c, "grid_index": i, "objective": sum(table[c][d]["objective"] for d in sets) / len(sets),
                "worst_regret": max(table[c][d]["regret"] for d in sets),
                "mean_rank": sum(table[c][d]["rank"] for d in sets) / len(sets), "per_dataset": table[c]}
               for i, c in enumerate(cells)]
    ranking.sort(key=lambda r: (r["cell"] != selected, r["worst_regret"], r["grid_index"]))
    return {"rule": RULE, "rule_chosen": rule, "sweep": next(iter(summaries.values())).config["sweep"],
            "cells_tried": len(cells), "datasets": sets, "leave_one_out": lodo, "selected": selected,
            "ranking": ranking}


@dataclass(frozen=True)
class SelectionOptions:
    """The flags of ``cmd/reference_select.py``."""

    sweeps: str = setting("sweeps", "results/reference", "the folder holding one tune-split sweep per data set "
                          "(<folder>/*-sweep-*/summary.json)")
    out: str = setting("out", "runs/reference/selection.json", "the selection's results file")


@command(SelectionOptions, name="reference-select")
def main_command(args: SelectionOptions) -> int:
    paths = [p for folder in sorted(Path(args.sweeps).glob("*-sweep-*")) if (p := sweep_summary(folder))]
    summaries = {}
    for path in paths:
        doc = load(path)
        if not isinstance(doc, SweepSummary):
            raise BenchError(f"{path}: a {doc.KIND} results file, not a sweep summary")
        summaries[path.parent.name.split("-tune-")[0]] = doc  # the data set's name: locomo, beam-100k, ...
    chosen = select(summaries)
    write_results_file(Path(args.out), StudyResults(config={"mode": "reference-select", "rule": RULE,
                                                            "sweeps": args.sweeps, **harness()}, extra=chosen))
    print(f"rule kept: {chosen['rule_chosen']}; selected {chosen['selected']} out of {chosen['cells_tried']} cells")
    for rule, rows in chosen["leave_one_out"].items():
        held = ", ".join(f"{r['held_out']} regret {fmt_points(r['regret'], 2)} (rank {r['rank']})" for r in rows)
        print(f"  {rule}: {held}")
    top = chosen["ranking"][0]
    for d, row in top["per_dataset"].items():
        print(f"  {d}: R@K0 {fmt_points(row['R@K0'])}, R@K1 {fmt_points(row['R@K1'])}, MRR {fmt_points(row['MRR'])}, "
              f"regret {fmt_points(row['regret'], 2)}, rank {row['rank']}")
    return 0


def main(argv: list[str] | None = None) -> int | None:
    """The entry point, with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
