"""A judge reply that is no label is neither right nor wrong: the loss table counts it apart from the wrong
answers, and an arm whose every verdict is unparseable has no accuracy ("-"), not 0.0% over 0 judged."""

from __future__ import annotations

from memini_bench.core.table import render
from memini_bench.qa.engine import Call, Graded
from memini_bench.qa.losses import attribute
from memini_bench.qa.summary import _counts
from memini_bench.results.loss_table import loss_table

CALL = Call("s", "u", "r", 1, 1, False, 1)


def _graded(i: int, correct: bool | None) -> Graded:
    return Graded("a", f"q{i}", i, "cat", "ref", (("x",),), "answer", correct, CALL, CALL)


def test_unparseable_verdicts_are_counted_apart_from_the_wrong_answers():
    graded = [_graded(0, True), _graded(1, False), _graded(2, None), _graded(3, None)]
    block = attribute(["a"], graded, lambda _id: {"g"}, lambda arm, i: {"x"}, known_bad=())
    assert block["a"]["wrong"] == 1 and block["a"]["unparseable"] == 2
    text = render(loss_table(block), "md")
    assert "no label (not wrong)" in text and "| a | all | 1 |" in text


def test_every_verdict_unparseable_is_no_accuracy():
    assert _counts([None, None]) == (2, 0, None, 2)
    assert _counts([True, None, False]) == (3, 1, 0.5, 1)
