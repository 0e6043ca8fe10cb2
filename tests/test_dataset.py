"""Preparation: memini's holdout split and even subsample, and our -limitN naming."""

from __future__ import annotations

import pytest

from memini_bench.dataset import Dataset, Item, Question, prepare, split_holdout, subsample
from memini_bench.errors import BenchError


def _toy(n: int) -> Dataset:
    items = tuple(Item(id=f"i{g}", content=f"text {g}", group=f"g{g}") for g in range(n))
    questions = tuple(Question(id=f"q{i}", query="q", gold=(f"i{i}",), group=f"g{i}") for i in range(n))
    return Dataset("toy", items, questions)


def test_holdout_on_locomo(locomo):
    held = split_holdout(locomo, "held")
    tune = split_holdout(locomo, "tune")
    assert (len(held.questions), len(tune.questions)) == (198, 1784)
    assert held.name == "locomo-held" and tune.name == "locomo-tune"
    assert held.questions[0] is locomo.questions[9] and held.questions[1] is locomo.questions[19]


def test_holdout_prunes_items_to_kept_groups():
    ds = split_holdout(_toy(20), "held")
    assert [q.id for q in ds.questions] == ["q9", "q19"]
    assert [i.id for i in ds.items] == ["i9", "i19"]
    with pytest.raises(BenchError):
        split_holdout(ds, "bogus")


def test_even_subsample_and_name():
    ds = subsample(_toy(10), 4)  # step 2.5 -> indices 0, 2, 5, 7
    assert [q.id for q in ds.questions] == ["q0", "q2", "q5", "q7"]
    assert ds.name == "toy-limit4"
    assert subsample(_toy(3), 5).name == "toy"
    assert prepare(_toy(100), holdout="tune", limit=9).name == "toy-tune-limit9"
