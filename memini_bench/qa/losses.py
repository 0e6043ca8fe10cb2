"""Where QA loses: every wrong answer of a run's first pass put in exactly one bucket, per arm and category.

For a wrong answer to a question with gold ids G, what the arm's system retrieved R (every hit of its recall at
the run's depth, the largest ``-qa-k``; the ``full-context`` arm: the question's whole history) and what the reader
was given P (the arm's first k hits; the history left after the window's cut), the first rule that holds:

1. ``known-bad gold``: the question is on the data set's known-bad list (``loaders.known_bad``);
2. ``judge disagreement``: with several judges (``-qa-judges``), another judge graded the answer correct;
3. ``no gold ids``: G is empty (an abstention question, a suite without retrieval gold): nothing to attribute;
4. ``gold not retrieved``: no id of G in R;
5. ``gold below the reader's cut``: an id of G in R, none in P;
6. ``gold given, answer wrong``: an id of G in P (the reader, or the judge, went wrong with the evidence in hand).

Answers graded from a hypotheses file (no retrieval of ours) take rules 1-3, then ``not attributed (external)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence

from memini_bench.core.table import markdown
from memini_bench.qa.engine import Graded
from memini_bench.results.loss_table import BUCKETS, loss_table


def bucket(g: Graded, gold: Collection[str], retrieved: Collection[str] | None, known_bad: bool) -> str:
    """The bucket of one wrong answer (module docstring); ``retrieved`` None = answered outside the harness."""
    if known_bad:
        return BUCKETS[0]
    if any(v.correct for v in g.extra):
        return BUCKETS[1]
    wanted = set(gold)
    if not wanted:
        return BUCKETS[2]
    if retrieved is None:
        return BUCKETS[6]
    given = {i for ids in g.recalled for i in ids}
    if wanted & given:
        return BUCKETS[5]
    return BUCKETS[4] if wanted & set(retrieved) else BUCKETS[3]


def attribute(arms: Sequence[str], graded: Sequence[Graded], gold_of: Callable[[str], Collection[str]],
              retrieved_of: Callable[[str, int], Collection[str] | None], known_bad: Collection[str]) -> dict:
    """``{arm: {"wrong": n, "buckets": {bucket: n}, "by_category": {category: {bucket: n}}, "unparseable": n}}``
    over the wrong answers of ``graded`` (one pass; a verdict that was no label is no wrong answer: counted apart
    in ``unparseable``); ``retrieved_of(arm, question index)`` gives R (None: external answers)."""
    out: dict[str, dict] = {}
    for arm in arms:
        total: Counter = Counter()
        by_cat: dict[str, Counter] = {}
        unparseable = 0
        for g in graded:
            if g.arm != arm or g.correct is True:
                continue
            if g.correct is None:  # the judge's reply was no label: neither right nor wrong, counted apart
                unparseable += 1
                continue
            b = bucket(g, gold_of(g.id), retrieved_of(arm, g.index), g.id in known_bad)
            total[b] += 1
            by_cat.setdefault(g.category, Counter())[b] += 1
        out[arm] = {"wrong": sum(total.values()), "buckets": {b: total[b] for b in BUCKETS if total[b]},
                    "by_category": {c: {b: n[b] for b in BUCKETS if n[b]} for c, n in sorted(by_cat.items())},
                    "unparseable": unparseable}
    return out


def render(block: dict) -> str:
    """The loss table (``results.loss_table``) in Markdown, title first; "" for no block."""
    return markdown(loss_table(block)) if block else ""
