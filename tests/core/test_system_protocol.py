"""Any object with name / ingest / recall can be measured (the README's example, run for real)."""

from __future__ import annotations

from memini_bench.core.contract import Hit, System
from memini_bench.evaluation.metrics import score
from memini_bench.evaluation.runner import run_system
from memini_bench.loaders import load


class WordOverlap:
    """A toy memory: rank a group's items by how many query words they contain."""

    name = "word-overlap"

    def ingest(self, items):
        self.items = list(items)

    def recall(self, group, query, k, *, now=None, context=None):
        words = set(query.lower().split())
        scored = [(len(words & set(it.content.lower().split())), it) for it in self.items if it.group == group]
        scored.sort(key=lambda pair: -pair[0])
        return [Hit(ids=(it.id,), score=float(s), content=it.content) for s, it in scored[:k]]


def test_custom_system_is_measured():
    system = WordOverlap()
    assert isinstance(system, System)
    result = run_system(system, load("sample"), depth=5)
    row = score(result, 5)
    assert row.system == "word-overlap" and row.questions == 8
    assert 0.0 < row["recall_any@{k}"] <= 1.0 and len(result.questions[0].ranked_ids) == 5
