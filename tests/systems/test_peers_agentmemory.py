"""agentmemory's recipe: its stemmer and tokenizer (hand-traced cases), its BM25 and fusion (hand-computed)."""

from __future__ import annotations

import math

import pytest
from peers_fixture import ids, run, table_context

from memini_bench.core.dataset import Item
from memini_bench.systems.peers.agentmemory import AgentMemorySystem, fuse, make, make_bm25, observation_text
from memini_bench.systems.peers.agentmemory_text import AgentMemoryBM25, stem, tokenize

pytestmark = pytest.mark.usefixtures("no_network")


@pytest.mark.parametrize("word, expected", [
    ("is", "is"), ("was", "wa"), ("running", "run"), ("hopping", "hop"), ("filing", "file"), ("agreed", "agre"),
    ("days", "dai"), ("happily", "happili"), ("caroline", "carolin"), ("relational", "relat"),
    ("conversation", "convers"), ("generalization", "gener"), ("adoption", "adop"), ("runner", "runner"),
    ("controll", "control"), ("roll", "roll"),
])
def test_stemmer_hand_traced(word, expected):
    assert stem(word) == expected


def test_tokenizer_keeps_its_odd_characters_and_drops_hyphens():
    assert tokenize("When did Caroline go to the LGBTQ support-group? The dog. a/b ]y ^z e_mail I") == [
        "when", "did", "carolin", "go", "to", "the", "lgbtq", "support", "group", "the", "dog.", "a/b", "]y", "^z",
        "e_mail"]


def test_observation_text_repeats_the_title():
    text = "x" * 100
    assert observation_text(text) == "x" * 80 + "  " + text + " conversation"


def test_bm25_with_prefix_expansion_hand_computed():
    index = AgentMemoryBM25(["cat runner", "run cat cat", "dog"])  # [cat, runner] [run, cat, cat] [dog]
    idf = math.log((3 - 1 + 0.5) / (1 + 0.5) + 1)  # run and runner each occur in one document
    part = [2.2 / (1 + 1.2 * (0.25 + 0.75 * dl / 2.0)) for dl in (2, 3)]  # avgdl = 6 / 3
    ranked = index.search("Run?", 10)
    assert [d for d, _ in ranked] == [1, 0]
    assert [s for _, s in ranked] == pytest.approx([idf * part[1], 0.5 * idf * part[0]])
    assert index.search("the", 10) == [] and index.search("?", 10) == []


def test_fusion_hand_computed():
    fused = fuse([2, 0, 1], [0, 3], ["a", "b", "c", "d"])
    expected = {0: (0.4 * 61 / 62 + 0.6) * 1.05, 3: 0.6 * 61 / 62, 2: 0.4, 1: 0.4 * 61 / 63}
    assert [d for d, _ in fused] == [0, 3, 2, 1]
    assert [s for _, s in fused] == pytest.approx([expected[d] for d in (0, 3, 2, 1)])
    assert [s for _, s in fuse([4, 5], [], "abcdef")] == pytest.approx([1.0, 61 / 62])  # only BM25 active


TABLE = {"the cat sleeps": [1, 0], "a dog barks": [0, 1], "cat and dog": [0.7, 0.7], "cat food": [1, 0.1],
         "cat?": [1, 0]}
ITEMS = [Item("a1", "the cat sleeps", "A"), Item("a2", "a dog barks", "A"), Item("a3", "cat and dog", "A"),
         Item("b1", "cat food", "B")]


def test_hybrid_system_fuses_its_two_streams_per_group():
    (hits, other, none) = run(make(table_context(TABLE)), ITEMS, [("A", "cat?"), ("B", "cat?"), ("C", "cat?")], k=3)
    # in group A, BM25 finds a1 and a3 (they hold "cat"); the cosine order is a1, a3, a2
    bm25 = [d for d, _ in AgentMemoryBM25([observation_text(it.content) for it in ITEMS[:3]]).search("cat?", 40)]
    assert sorted(bm25) == [0, 2]
    want = fuse(bm25, [0, 2, 1], ["a1", "a2", "a3"])
    assert ids(hits) == [["a1", "a2", "a3"][d] for d, _ in want]
    assert [h.score for h in hits] == pytest.approx([s for _, s in want])
    assert ids(other) == ["b1"] and none == []


def test_bm25_only_needs_no_encoder_and_describes_itself():
    system = make_bm25(table_context(None))
    assert isinstance(system, AgentMemorySystem) and system.encoder is None
    (hits,) = run(system, ITEMS, [("A", "dog")], k=5)
    assert sorted(ids(hits)) == ["a2", "a3"]
    assert "stemmer" in system.describe()["bm25"] and "rrf_k" not in system.describe()
