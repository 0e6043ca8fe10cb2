"""Agreement between two graders of the same answers: two LLM judges, or a judge and people.

Over the n answers both graded (verdicts True = correct):

- the confusion table ``{(a, b): count}`` for a, b in {True, False} (rows: grader A, columns: grader B);
- percent agreement ``p_o = (n_TT + n_FF) / n``;
- Cohen's kappa ``(p_o - p_e) / (1 - p_e)`` with chance agreement ``p_e = p_A(T) p_B(T) + p_A(F) p_B(F)`` from each
  grader's own marginal rates (scikit-learn's ``cohen_kappa_score``); undefined (None) when ``p_e = 1``, i.e. both
  graders gave one and the same verdict to every answer.

Human verdicts (``-qa-labels FILE``): JSON Lines, one object per graded answer,
``{"arm": "<arm>", "id": "<question id>", "correct": true|false}`` with an optional ``"run": <n>`` (default 1);
other keys are ignored, so the run's archive lines with a ``correct`` set by a person can be given back as they are.
An answer labelled twice is an error; labels for answers the run did not grade are counted and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from memini_bench.core.inputs import read_regular
from memini_bench.errors import BenchError


@dataclass(frozen=True, slots=True)
class Agreement:
    """Grader A against grader B over ``n`` shared answers (module docstring)."""

    grader_a: str
    grader_b: str
    n: int
    both_correct: int
    only_a_correct: int
    only_b_correct: int
    both_incorrect: int
    percent: float
    kappa: float | None


def agreement(grader_a: str, grader_b: str, a: Sequence[bool], b: Sequence[bool]) -> Agreement:
    """Confusion table, percent agreement and Cohen's kappa of paired verdicts ``a`` and ``b``."""
    if len(a) != len(b):
        raise ValueError("paired verdicts must have the same length")
    n = len(a)
    tt = sum(x and y for x, y in zip(a, b, strict=True))
    tf = sum(x and not y for x, y in zip(a, b, strict=True))
    ft = sum(y and not x for x, y in zip(a, b, strict=True))
    ff = n - tt - tf - ft
    if n == 0:
        return Agreement(grader_a, grader_b, 0, 0, 0, 0, 0, 0.0, None)
    p_o = (tt + ff) / n
    a_true, b_true = (tt + tf) / n, (tt + ft) / n
    p_e = a_true * b_true + (1 - a_true) * (1 - b_true)
    kappa = None if abs(1 - p_e) < 1e-12 else (p_o - p_e) / (1 - p_e)
    return Agreement(grader_a, grader_b, n, tt, tf, ft, ff, p_o, kappa)


Key = tuple[str, str, int]  # (arm, question id, run)


def paired(grader_a: str, grader_b: str, a: Mapping[Key, bool], b: Mapping[Key, bool]) -> Agreement:
    """``agreement`` over the keys both graded, in sorted key order."""
    keys = sorted(set(a) & set(b))
    return agreement(grader_a, grader_b, [a[k] for k in keys], [b[k] for k in keys])


def read_labels(path: str) -> dict[Key, bool]:
    """Human verdicts from a JSON Lines file (format in the module docstring); a bad line is one BenchError."""
    try:
        raw = read_regular(path, "-qa-labels")
    except BenchError as exc:
        raise BenchError(f"{str(exc).split('; ')[0]}; give a JSON Lines file of " + '{"arm", "id", "correct"} '
                         "objects") from None
    labels: dict[Key, bool] = {}
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            obj = None
        ok = (isinstance(obj, dict) and isinstance(obj.get("arm"), str) and isinstance(obj.get("id"), str)
              and isinstance(obj.get("correct"), bool)
              and (isinstance(obj.get("run", 1), int) and not isinstance(obj.get("run", 1), bool)))
        if not ok:
            raise BenchError(f"-qa-labels {path}: line {number} is not an object with string arm and id and a "
                             'boolean correct (e.g. {"arm": "memini-hybrid@k10", "id": "q1", "correct": true})')
        key = (obj["arm"], obj["id"], obj.get("run", 1))
        if key in labels:
            raise BenchError(f"-qa-labels {path}: line {number} labels arm {key[0]} question {key[1]} run {key[2]} "
                             "a second time; keep one verdict per answer")
        labels[key] = obj["correct"]
    if not labels:
        raise BenchError(f"-qa-labels {path}: holds no verdict; give one JSON object per line")
    return labels
