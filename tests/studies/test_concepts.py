"""The entity bridge's concept leg: the lowercase concept vocabulary on hand-worked texts, the bridge over it, and
the published figures labelled by vocabulary (memini's text: entities / concepts, not DF caps)."""

from __future__ import annotations

import json

import pytest

from memini_bench.cli import main
from memini_bench.core.dataset import Dataset, Item, Question
from memini_bench.studies import bridge, concepts, published


@pytest.mark.parametrize("word, stem", [("camping", "camp"), ("camped", "camp"), ("camps", "camp"),
                                        ("hikes", "hike"), ("glass", "glas"), ("bring", "bring"),
                                        ("sing", "sing"), ("trees", "tree"), ("planned", "plann")])
def test_stem_cuts_the_first_matching_suffix_leaving_four(word, stem):
    assert concepts.stem(word) == stem


def test_concepts_hand_worked():
    text = "[1:56 pm on 8 May, 2023] Melanie: We went camping with the kids; the camping trip was awesome!"
    # prefix and speaker dropped; 4+ letters, not stop words: camping kids camping trip -> camp kids camp trip
    # ("kids" keeps its s: 3 letters would remain); each stem and adjacent pair once, in reading order
    assert concepts.extract(text) == ["camp", "camp kids", "kids", "kids camp", "camp trip", "trip"]
    # one suffix only: "paintings" loses its s and keeps "ing"
    assert concepts.extract("Caroline: I'm painting sunsets... 'Sunset' paintings!") == [
        "paint", "paint sunset", "sunset", "sunset sunset", "sunset painting", "painting"]
    # a colon past the 20th character is no speaker label
    assert concepts.extract("a long label spanning past twenty: text here") == [
        "long", "long label", "label", "label spann", "spann", "spann past", "past", "past twenty", "twenty",
        "twenty text", "text"]
    assert concepts.extract("") == [] and concepts.extract("[unclosed bracket") == ["unclos", "unclos bracket",
                                                                                      "bracket"]


def test_the_bridge_links_through_a_lowercase_concept_the_entities_miss():
    items = [Item("a", "Melanie: we went camping at the lake", "g"),
             Item("b", "Caroline: the lake camping was fun", "g")]
    items += [Item(f"f{i}", f"plain filler line {i}", "g") for i in range(8)]
    ds = Dataset("conv", tuple(items), (Question("q", "Q", ("a", "b"), "g", category="1"),))
    ents = bridge.Vocabulary(ds, bridge.VOCABULARIES["entities"])
    cons = bridge.Vocabulary(ds, bridge.VOCABULARIES["concepts"])
    assert not ents.linked("b", ["a"], "g", 1.0)                  # no capitalised span is shared
    assert cons.linked("b", ["a"], "g", 0.2)                      # "lake" and "camp": df 2 <= floor(0.2 * 10)
    assert not cons.linked("b", ["a"], "g", 0.1)                  # df 2 > floor(0.1 * 10) = 1: a hub there


def test_cli_runs_both_vocabularies_and_names_the_file(tmp_path, capsys):
    data = {"name": "conv", "items": [{"id": "a", "content": "we went camping at the lake"},
                                      {"id": "b", "content": "the lake camping was fun"}]
            + [{"id": f"f{i}", "content": f"plain filler line {i}"} for i in range(8)],
            "questions": [{"query": "where did we go camping", "gold": ["a", "b"], "category": "1"}]}
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SystemExit) as done:
        main(["-suite", "file", "-data", str(path), "-embedder", "hash", "-entity-bridge", "-systems", "keyword",
              "-bridge-vocab", "entities,concepts", "-out", str(tmp_path)])
    assert done.value.code == 0
    doc = json.loads((tmp_path / "conv-multihop-entity-bridge-sys-keyword-vocab-entities+concepts.json").read_text())
    assert [r.get("vocabulary", "entities") for r in doc["results"]] == ["entities", "concepts"]
    assert "vocabulary" not in doc["results"][0] and doc["vocabularies"]["concepts"]["items_with_entity"] == 10
    assert doc["config"]["identity"]["mode_settings"]["vocabularies"] == ["entities", "concepts"]
    out = capsys.readouterr().out
    assert out == bridge.render(doc) and "**memini-keyword** (concepts)" in out and "Concept-anchored 2nd hop" in out
    with pytest.raises(SystemExit) as done:
        main(["-suite", "file", "-data", str(path), "-entity-bridge", "-bridge-vocab", "nouns", "-no-write"])
    assert done.value.code == 2


def test_published_second_hop_is_labelled_by_vocabulary():
    assert published.ENTITY_HOP_FULL_GOLD["minilm"] == {"entities": 17.3, "concepts": 20.6}
    assert published.ENTITY_HOP_FULL_GOLD["qwen3-0.6b"] == {"entities": 19.1, "concepts": 22.4}
    doc = {"config": {"dataset": "d", "questions": 0, "bridge_k": 10, "bridge_pool": 50, "embedder": "minilm"},
           "vocabulary": {"items": 1, "items_with_entity": 1}, "results": []}
    text = bridge.render(doc)
    assert "17.3% anchored on entities / 20.6% on concepts (MiniLM)" in text and "42-43%" in text
    assert "df cap 1.0 / 0.10" not in text.lower()
