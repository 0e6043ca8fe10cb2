"""Breakdowns by where the evidence lies: recall by evidence distance, and LoCoMo's own evidence recall.

Evidence distance (questions whose loader set ``meta["evidence_distance"]``: LoCoMo, every unit): the sessions
between the question and its earliest evidence (0 = the last session). Questions fall in the buckets
``DISTANCE_BUCKETS`` (inclusive ranges); each row gives, per system at the largest K, the bucket's question count and
recall_any@K / recall_all@K on those questions alone (the same definitions as ``evaluation.metrics``).

LoCoMo's evidence recall (questions with ``meta["evidence"]`` over items with ``meta["covers"]``: ``-unit
observation|summary``), as ``task_eval/evaluation.py`` computes it: for one question with evidence keys
e_1..e_n (repeats kept) and the keys C covered by its top K units, ``recall = |{j : e_j in C}| / n``, averaged over
the questions (one whose evidence no unit covers scores 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from memini_bench.core.dataset import Dataset
from memini_bench.core.runs import RunResult
from memini_bench.core.table import Cell, Column, Table, fmt_pct
from memini_bench.core.table import render as render_table
from memini_bench.evaluation.metrics import recall_all, recall_any
from memini_bench.loaders.locomo import DISTANCE
from memini_bench.loaders.locomo_units import COVERS, EVIDENCE

DISTANCE_BUCKETS = ((0, 0), (1, 2), (3, 5), (6, 10), (11, 20), (21, None))


def bucket_of(distance: int) -> str:
    for lo, hi in DISTANCE_BUCKETS:
        if distance >= lo and (hi is None or distance <= hi):
            return _label(lo, hi)
    raise ValueError(distance)


def _label(lo: int, hi: int | None) -> str:
    return f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")


def distance_table(results: Sequence[RunResult], ks: Sequence[int]) -> tuple[str, dict]:
    k = max(ks)
    systems: dict[str, dict[str, dict]] = {}
    for result in results:
        rows: dict[str, list] = {}
        for run in result.questions:
            d = dict(run.question.meta).get(DISTANCE)
            if d is not None:
                rows.setdefault(bucket_of(int(d)), []).append((recall_any(run, k), recall_all(run, k)))
        if rows:
            systems[result.system] = {b: {"questions": len(v), "recall_any": sum(a for a, _ in v) / len(v),
                                          "recall_all": sum(c for _, c in v) / len(v)}
                                      for b, v in rows.items()}
    if not systems:
        return "", {}
    order = [_label(lo, hi) for lo, hi in DISTANCE_BUCKETS]
    present = [b for b in order if any(b in rows for rows in systems.values())]
    names = list(systems)
    cols = (Column("bucket", "Sessions back", "left"), Column("n", "n"), *(Column(name, name) for name in names))
    body = []
    for b in present:
        n = next(rows[b]["questions"] for rows in systems.values() if b in rows)
        cells = [Cell((rows[b]["recall_any"], rows[b]["recall_all"]),
                      f"{fmt_pct(rows[b]['recall_any'])} / {fmt_pct(rows[b]['recall_all'])}")
                 if b in rows else Cell(None, "") for rows in systems.values()]
        body.append((Cell(b, b), Cell(n, str(n)), *cells))
    table = Table(cols, tuple(body), title=f"### By evidence distance (sessions back from the question to its "
                                           f"earliest evidence; recall_any@{k} / recall_all@{k})")
    return render_table(table, "md") + "\n", {"evidence_distance": {"k": k, "buckets": present, "systems": systems}}


def evidence_recall(result: RunResult, k: int, covers: dict[str, tuple[str, ...]]) -> tuple[float, int]:
    """LoCoMo's recall at k averaged over the questions with evidence keys, and their count."""
    values = []
    for run in result.questions:
        keys = dict(run.question.meta).get(EVIDENCE)
        if not keys:
            continue
        covered = {c for ids in run.ranked_ids[:k] for i in ids for c in covers.get(i, ())}
        values.append(sum(e in covered for e in keys) / len(keys))
    return (sum(values) / len(values) if values else 0.0), len(values)


def evidence_table(ds: Dataset, results: Sequence[RunResult], ks: Sequence[int]) -> tuple[str, dict]:
    covers = {item.id: tuple(dict(item.meta)[COVERS]) for item in ds.items if COVERS in dict(item.meta)}
    if not covers or not any(EVIDENCE in dict(q.meta) for q in ds.questions):
        return "", {}
    rows = []
    for result in results:
        for k in sorted(ks):
            value, n = evidence_recall(result, k, covers)
            rows.append({"system": result.system, "k": k, "questions": n, "evidence_recall": value})
    cols = (Column("system", "System", "left"), Column("k", "K"), Column("questions", "n"),
            Column("evidence_recall", "recall"))
    body = tuple((Cell(r["system"], r["system"]), Cell(r["k"], str(r["k"])), Cell(r["questions"], str(r["questions"])),
                  Cell(r["evidence_recall"], format(r["evidence_recall"], ".1%"))) for r in rows)
    table = Table(cols, body, title="### LoCoMo's evidence recall (task_eval/evaluation.py: the share of each "
                                    "question's evidence ids covered by the top K units)")
    return render_table(table, "md") + "\n", {"locomo_evidence_recall": rows}
