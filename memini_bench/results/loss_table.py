"""The QA loss-attribution table (``qa.losses``: every wrong answer of a run's first pass in one bucket, per arm and
category) as a ``core.table.Table``, read from a results file's ``losses`` block: what ``-qa`` prints and the report
shows for a QA results file. It lives here, below both, because the report may not import the QA package."""

from __future__ import annotations

from memini_bench.core.table import Cell, Column, Table

#: The buckets, in the order their rules are tried (``qa.losses``'s module docstring).
BUCKETS = ("known-bad gold", "judge disagreement", "no gold ids", "gold not retrieved",
           "gold below the reader's cut", "gold given, answer wrong", "not attributed (external)")
TITLE = "### Where the wrong answers were lost (first pass)"


def _count(n: int) -> Cell:
    return Cell(n, str(n))


def loss_table(block: dict) -> Table:
    """Per arm, a row over every category (``all``) and a row per category: the wrong answers and each bucket's
    count (the buckets no arm used left out); the footnote says what is counted."""
    used = [b for b in BUCKETS if any(b in a.get("buckets", {}) for a in block.values())]
    apart = any(a.get("unparseable") for a in block.values())
    columns = (Column("arm", "Arm", "left"), Column("category", "Category", "left"), Column("wrong", "Wrong"),
               *(Column(b, b) for b in used), *((Column("unparseable", "no label (not wrong)"),) if apart else ()))
    rows = []
    for arm, a in block.items():
        for cat, counts, wrong in [("all", a.get("buckets", {}), a.get("wrong", 0)),
                                   *((c, n, sum(n.values())) for c, n in a.get("by_category", {}).items())]:
            tail = ((_count(a.get("unparseable", 0)) if cat == "all" else Cell(None, "-")),) if apart else ()
            rows.append((Cell(arm, arm), Cell(cat, cat), _count(wrong), *(_count(counts.get(b, 0)) for b in used),
                         *tail))
    note = ("N: the wrong answers of the first pass per arm (row all) and per category; each is counted in one "
            "bucket, the first of " + ", ".join(BUCKETS) + " whose rule holds; a verdict that was no label is no "
            "wrong answer (counted apart, row all). No marks.")
    return Table(columns, tuple(rows), title=TITLE, notes=(note,), notes_in_markdown=True)
