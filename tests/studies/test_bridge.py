"""The entity-bridge diagnostic on a hand-checkable conversation (scripted recall, real extractor and gate)."""

from __future__ import annotations

import json

import pytest

from memini_bench.cli import main
from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Dataset, Item, Question
from memini_bench.studies import bridge


class Scripted:
    name = "scripted"

    def __init__(self, table: dict[str, list[tuple[str, float]]]) -> None:
        self.table = table

    def ingest(self, items) -> None:
        pass

    def recall(self, group, query, k, *, now=None, context=None):
        return [Hit((i,), s, i) for i, s in self.table.get(query, [])[:k]]


def _conversation() -> Dataset:
    """20 items: a and b share Miso (df 2); c and h0..h5 share Bob (df 7, a hub); fillers have no entity."""
    items = [Item("a", "We saw that Alice adopted Miso.", "g"), Item("b", "The cat Miso loves the garden.", "g"),
             Item("c", "Then we called Bob about the roof.", "g")]
    items += [Item(f"h{i}", f"Yesterday we met Bob at stop {i}.", "g") for i in range(6)]
    items += [Item(f"f{i}", f"plain filler line number {i}", "g") for i in range(11)]
    questions = (Question("q1", "Q1", ("a", "b"), "g", category="1"), Question("q2", "Q2", ("h0", "c"), "g",
                                                                               category="1"))
    return Dataset("conv", tuple(items), questions)


def test_vocabulary_and_hub_safe_links():
    v = bridge.Vocabulary(_conversation())
    assert v.of["a"] == ("alice", "miso") and v.of["b"] == ("miso",) and v.of["f0"] == ()
    assert (v.df["g"]["miso"], v.df["g"]["bob"], v.size["g"]) == (2, 7, 20)
    assert v.linked("b", ["a"], "g", 0.10)  # df 2 <= floor(0.10 * 20) = 2
    assert not v.linked("b", ["a"], "g", 0.05)  # 2 > floor(0.05 * 20) = 1
    assert v.linked("c", ["h0"], "g", 1.0) and not v.linked("c", ["h0"], "g", 0.10)  # Bob is a hub


def _scores(ids: list[str]) -> list[tuple[str, float]]:
    return [(i, 1.0 - 0.04 * r) for r, i in enumerate(ids)]


FILL = [f"f{i}" for i in range(11)]


def test_diagnosis_by_hand():
    ds = _conversation()
    table = {
        # q1: a found, b missing but in the pool at rank 11: linked through Miso, and clears the gate
        "Q1": _scores(["a", *FILL[:9], "h1", "b"]),
        # q2: h0 found, c missing and outside the pool; linked through the hub Bob only
        "Q2": _scores(["h0", *FILL[:9]]),
        "Q1 alice miso": [("b", 1.0)],  # the entity-anchored hop: anchors a, f0, f1 -> alice, miso
        "Q2 bob": [("c", 1.0)],  # cap 1.0 only (Bob is a hub under 0.10)
    }
    r = bridge.diagnose(Scripted(table), ds, bridge.Vocabulary(ds), k=10, caps=(1.0, 0.10, 0.05))
    assert (r.questions, r.single_full, r.failures, r.missing, r.missing_in_pool) == (2, 0, 2, 2, 1)
    by = {c.cap: c for c in r.caps}
    full = by[1.0]
    assert (full.linked_misses, full.linked_in_pool, full.bridgeable, full.bridgeable_in_pool) == (2, 1, 2, 1)
    assert (by[0.10].linked_misses, by[0.10].bridgeable) == (1, 1)
    assert (by[0.05].linked_misses, by[0.05].bridgeable) == (0, 0)
    # promotion: b (rank 11, score 0.56) >= max(0.5 x 0.64, 0.4 x 1.0): swapped in under caps 1.0 and 0.10
    assert (by[1.0].promoted_full, by[1.0].promotions, by[1.0].promoted_gold) == (1, 1, 1)
    assert (by[0.10].promoted_full, by[0.05].promoted_full, by[0.05].promotions) == (1, 0, 0)
    hops = {h.cap: h for h in r.hops}
    assert (hops[1.0].full, hops[0.10].full) == (2, 1)
    assert hops[0.10].recall_sum == pytest.approx(1 + 1 / 2)


def test_gate_refuses_a_weak_candidate():
    ds = _conversation()
    weak = _scores(["a", *FILL[:9]]) + [("b", 0.1)]  # 0.1 < 0.4 x top-1
    window = bridge.promote(bridge.Vocabulary(ds), ds.questions[0], [i for i, _ in weak], [s for _, s in weak], 10,
                            1.0)
    assert "b" not in window and window == [i for i, _ in weak[:10]]


def test_cli_on_a_file_suite(tmp_path, capsys):
    ds = _conversation()
    data = {"name": "conv", "items": [{"id": it.id, "content": it.content} for it in ds.items],
            "questions": [{"query": "Which cat did Alice adopt and where does Miso play?", "gold": ["a", "b"],
                           "category": "1"}]}
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SystemExit) as done:
        main(["-suite", "file", "-data", str(path), "-embedder", "hash", "-entity-bridge", "-systems", "keyword",
              "-out", str(tmp_path)])
    assert done.value.code == 0
    doc = json.loads((tmp_path / "conv-multihop-entity-bridge-sys-keyword.json").read_text())
    assert doc["vocabulary"]["items"] == 20 and [r["system"] for r in doc["results"]] == ["memini-keyword"]
    assert [c["cap"] for c in doc["results"][0]["caps"]] == [1.0, 0.1, 0.05]
    assert capsys.readouterr().out == bridge.render(doc)
