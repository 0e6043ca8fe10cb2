"""Percent agreement, Cohen's kappa (scikit-learn and a hand case), the confusion table and human label files."""

from __future__ import annotations

import random

import pytest
from sklearn.metrics import cohen_kappa_score

from memini_bench.errors import BenchError
from memini_bench.qa.agreement import agreement, paired, read_labels


def test_hand_case():
    # 10 answers: both correct 4, only A 2, only B 1, both incorrect 3. p_o = 0.7; A correct 0.6, B correct 0.5:
    # p_e = 0.6*0.5 + 0.4*0.5 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    a = [True] * 4 + [True] * 2 + [False] * 1 + [False] * 3
    b = [True] * 4 + [False] * 2 + [True] * 1 + [False] * 3
    r = agreement("A", "B", a, b)
    assert (r.both_correct, r.only_a_correct, r.only_b_correct, r.both_incorrect) == (4, 2, 1, 3)
    assert r.percent == pytest.approx(0.7) and r.kappa == pytest.approx(0.4)


def test_kappa_matches_scikit_learn():
    rng = random.Random(7)
    for _ in range(50):
        n = rng.randint(2, 60)
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [x if rng.random() < 0.7 else not x for x in a]
        r = agreement("A", "B", a, b)
        if r.kappa is None:
            continue
        assert r.kappa == pytest.approx(cohen_kappa_score(a, b))


def test_kappa_undefined_when_both_graders_are_constant():
    assert agreement("A", "B", [True] * 5, [True] * 5).kappa is None
    assert agreement("A", "B", [], []).n == 0


def test_paired_uses_only_shared_keys():
    a = {("x", "q1", 1): True, ("x", "q2", 1): False, ("x", "q3", 1): True}
    b = {("x", "q1", 1): True, ("x", "q2", 1): True}
    r = paired("A", "B", a, b)
    assert r.n == 2 and r.only_b_correct == 1


def test_label_file(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"arm": "a@k1", "id": "q1", "correct": true}\n\n{"arm": "a@k1", "id": "q1", "run": 2, '
                    '"correct": false, "answer": "kept as is"}\n')
    assert read_labels(str(path)) == {("a@k1", "q1", 1): True, ("a@k1", "q1", 2): False}
    for text, why in [('{"arm": "a", "id": "q1", "correct": "yes"}\n', "line 1 is not an object"),
                      ('{"arm": "a", "id": "q1", "correct": true}\n{"arm": "a", "id": "q1", "correct": false}',
                       "a second time"), ("", "holds no verdict"), ("nope\n", "line 1")]:
        path.write_text(text)
        with pytest.raises(BenchError, match=why):
            read_labels(str(path))
    with pytest.raises(BenchError, match="cannot read it"):
        read_labels(str(tmp_path / "missing.jsonl"))
