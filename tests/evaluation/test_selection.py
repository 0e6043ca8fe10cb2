"""The reference defaults' cross-data-set selection (memini_bench/evaluation/selection.py) on a hand-computed case."""

from __future__ import annotations

import pytest

from memini_bench.evaluation.selection import choose_rule, leave_one_out, pick, table_of

# objective per cell and data set (each figure of the triple equal, so the objective is that figure)
OBJ = {"A": {"d1": 0.9, "d2": 0.5, "d3": 0.9}, "B": {"d1": 0.8, "d2": 0.8, "d3": 0.8},
       "C": {"d1": 0.95, "d2": 0.4, "d3": 0.95}}
CELLS, SETS = ["A", "B", "C"], ["d1", "d2", "d3"]


@pytest.fixture
def table():
    per_set = {d: {c: (OBJ[c][d],) * 3 for c in CELLS} for d in SETS}
    return table_of(per_set, CELLS)


def test_regret_and_rank_by_hand(table):
    assert table["C"]["d2"]["regret"] == pytest.approx(0.4) and table["C"]["d2"]["rank"] == 3
    assert table["B"]["d1"]["regret"] == pytest.approx(0.15) and table["A"]["d1"]["rank"] == 2


def test_each_rule_picks_by_hand(table):
    # mean objective: A .767, B .8, C .767; worst regret: A .3, B .15, C .4; mean rank: A 2, B 2.33, C 1.67
    assert pick("mean", table, CELLS, SETS) == "B"
    assert pick("worst-regret", table, CELLS, SETS) == "B"
    assert pick("mean-rank", table, CELLS, SETS) == "C"


def test_leave_one_data_set_out_and_the_rule_kept(table):
    lodo = leave_one_out(table, CELLS, SETS)
    # without d1 (or d3) mean and worst-regret pick B (regret .15 there); without d2 they pick C (regret .4)
    for rule in ("mean", "worst-regret"):
        assert [(r["cell"], round(r["regret"], 6)) for r in lodo[rule]] == [("B", 0.15), ("C", 0.4), ("B", 0.15)]
    # mean rank ties A, B, C at 2 without d1 or d3: the earlier cell, A (regret .05)
    assert [(r["cell"], round(r["regret"], 6)) for r in lodo["mean-rank"]] == [("A", 0.05), ("C", 0.4), ("A", 0.05)]
    assert choose_rule(lodo) == "mean-rank"  # all worst at .4; mean-rank's mean held-out regret is smallest
