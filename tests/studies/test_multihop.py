"""The multi-hop retrieval ceiling (memini's TestMultiHopRetrievalCeiling) on hand-checkable fixtures."""

from __future__ import annotations

import json

import pytest

from memini_bench.cli import main
from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Dataset, Item, Question
from memini_bench.errors import BenchError
from memini_bench.studies import multihop


class Scripted:
    """A System whose recall is a fixed table: query text -> item ids (unknown queries recall nothing)."""

    name = "scripted"

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    def ingest(self, items) -> None:
        pass

    def recall(self, group, query, k, *, now=None, context=None):
        self.asked.append(query)
        return [Hit((i,), 1.0, i) for i in self.table.get(query, [])[:k]]


ITEMS = tuple(Item(i, f"text of {i}", "g") for i in ("a", "b", "c", "x"))


def _ds(questions) -> Dataset:
    return Dataset("toy", ITEMS, tuple(questions))


def test_three_regimes_by_hand():
    q1 = Question("q1", "Q1", ("a", "b"), "g", category="1")  # top-1 is gold a: both hops query "Q1 text of a"
    q2 = Question("q2", "Q2", ("b", "c"), "g", category="1")  # no gold found: no oracle hop
    q3 = Question("q3", "Q3", ("a", "c"), "g", category="1")  # covered by the first recall: no second recall
    q4 = Question("q4", "Q4", ("a", "b", "c"), "g", category="1")  # top-1 x (not gold); the oracle bridges via b
    system = Scripted({"Q1": ["a", "x"], "Q1 text of a": ["b"],
                       "Q2": ["x"], "Q2 text of x": ["c", "x"],
                       "Q3": ["c", "a"],
                       "Q4": ["x", "b"], "Q4 text of x": ["x"], "Q4 text of b": ["a", "c"]})
    rows, scores = multihop.run_system(system, _ds([q1, q2, q3, q4]), 10)
    got = {r.id: (r.total, r.single, r.realistic, r.oracle) for r in rows}
    assert got == {"q1": (2, 1, 2, 2), "q2": (2, 0, 1, 0), "q3": (2, 2, 2, 2), "q4": (3, 1, 1, 3)}
    assert "Q3 text of c" not in system.asked and not any(a.startswith("Q2 text of b") for a in system.asked)
    by = {s.regime: s for s in scores}
    assert (by["single"].full_gold, by["realistic"].full_gold, by["oracle"].full_gold) == (0.25, 0.5, 0.75)
    assert by["single"].mean_gold_recall == pytest.approx((1 / 2 + 0 + 1 + 1 / 3) / 4)
    assert by["realistic"].mean_gold_recall == pytest.approx((1 + 1 / 2 + 1 + 1 / 3) / 4)
    assert by["oracle"].mean_gold_recall == pytest.approx((1 + 0 + 1 + 1) / 4)


def test_hops_are_warmed_in_two_batches():
    q = Question("q1", "Q1", ("a", "b"), "g", category="1")
    batches: list[list[str]] = []
    multihop.run_system(Scripted({"Q1": ["a"]}), _ds([q]), 10, warm=batches.append)
    assert batches == [["Q1"], ["Q1 text of a", "Q1 text of a"]]


def test_selection_by_category_gold_count_and_limit():
    qs = [Question(f"q{i}", "?", ("a", "b") if i % 2 else ("a",), "g", category="1" if i < 8 else "2")
          for i in range(10)]
    ds = multihop.select(_ds(qs))
    assert [q.id for q in ds.questions] == ["q1", "q3", "q5", "q7"] and ds.name == "toy-multihop"
    assert [q.id for q in multihop.select(_ds(qs), limit=2).questions] == ["q1", "q5"]
    with pytest.raises(BenchError, match="no question of that category"):
        multihop.select(_ds(qs), category="5")


def test_locomo_selection_is_memini_277(locomo):
    assert len(multihop.select(locomo).questions) == 277


def test_cli_writes_results_and_renders_them(tmp_path, capsys):
    data = {"name": "mh", "items": [{"id": i, "content": c} for i, c in (
        ("p1", "Alice moved to Lisbon in May."), ("p2", "Lisbon is where Alice adopted a cat named Miso."),
        ("p3", "Bob plays the cello."))],
        "questions": [{"query": "What pet did Alice adopt after she moved?", "gold": ["p1", "p2"], "category": "1"},
                      {"query": "Where does Bob play?", "gold": ["p3"], "category": "1"}]}
    path = tmp_path / "mh.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SystemExit) as done:
        main(["-suite", "file", "-data", str(path), "-embedder", "hash", "-multihop", "-out", str(tmp_path)])
    out = capsys.readouterr().out
    assert done.value.code == 0
    doc = json.loads((tmp_path / "mh-multihop-emb-hash.json").read_text())
    assert doc["config"]["questions"] == 1 and doc["config"]["multihop_k"] == 10
    assert [r["system"] for r in doc["results"]] == ["memini-hybrid", "memini-vector", "memini-keyword"]
    assert out == multihop.render(doc)
    assert "memini full-gold" not in out  # memini published MiniLM figures only
    minilm = dict(doc, config=dict(doc["config"], embedder="minilm"))
    assert "| single recall |" in multihop.render(minilm) and "15.9% / 16.2%" in multihop.render(minilm)
