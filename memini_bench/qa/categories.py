"""``-qa-categories`` / ``-qa-exclude``: which question categories a QA run grades.

A value names a category as the data set spells it (LoCoMo: ``1`` .. ``5``; LongMemEval: its question types) or as
QA reports it (LongMemEval abstention: ``<type>_abs``); a value that names no category of the loaded questions is an
error listing the ones there. The filter applies after ``-holdout`` and ``-limit``. The results record the
categories graded and the ones excluded, and the report's heading states them (LoCoMo's adversarial category 5,
which most papers leave out, is then visible either way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from memini_bench.core.dataset import Dataset
from memini_bench.errors import BenchError
from memini_bench.qa.prompts import qa_category


def _names(q) -> set[str]:
    return {q.category, qa_category(q.category, q.id)}


def select(ds: Dataset, include: Sequence[str], exclude: Sequence[str]) -> tuple[Dataset, dict]:
    """The data set with only the wanted questions, and the record ``{"graded": [...], "excluded": [...]}``."""
    if include and exclude:
        raise BenchError("-qa-categories and -qa-exclude: give one of them")
    present = set().union(*(_names(q) for q in ds.questions)) if ds.questions else set()
    flag = "-qa-categories" if include else "-qa-exclude"
    for value in (*include, *exclude):
        if value not in present:
            raise BenchError(f"{flag} {value}: no question of {ds.name} has that category (there: "
                             f"{', '.join(sorted(present))})")
    if include:
        keep = [q for q in ds.questions if _names(q) & set(include)]
    else:
        keep = [q for q in ds.questions if not _names(q) & set(exclude)]
    if not keep:
        raise BenchError(f"{flag}: leaves no question of {ds.name} to grade")
    graded = sorted({qa_category(q.category, q.id) for q in keep})
    excluded = sorted({qa_category(q.category, q.id) for q in ds.questions} - set(graded))
    out = dataclasses.replace(ds, questions=tuple(keep)) if len(keep) < len(ds.questions) else ds
    return out, {"graded": graded, "excluded": excluded}


def heading(record: Mapping, labels: Mapping[str, str]) -> str:
    """``categories: all`` or ``categories: excluded 5 (adversarial)``."""
    if not record.get("excluded"):
        return "categories: all graded"
    names = [f"{c} ({labels[c]})" if c in labels else c for c in record["excluded"]]
    return "categories: excluded " + ", ".join(names)
