"""The no-LLM entity extractor, rule by rule, and its hand-labelled sample (shape and precision/recall)."""

from __future__ import annotations

import json

import pytest

from memini_bench.errors import BenchError
from memini_bench.studies import entities, entity_eval
from memini_bench.studies.entities import extract


@pytest.mark.parametrize(("text", "keys"), [
    ("[1:56 pm on 8 May, 2023] Caroline: I went to a support group yesterday.", []),  # date skipped, speaker
    ("Caroline is here. Later I met Caroline.", ["caroline"]),  # sentence-initial kept: also seen mid-sentence
    ("Caroline is here.", []),  # sentence case only
    ("LGBTQ groups meet weekly. Qwen3 ranks well. Mango is ripe.", ["lgbtq", "qwen3"]),  # own casing signal
    ("Harry Potter is fun to reread.", ["harry potter"]),  # a two-word span starting a sentence
    ("I met Bob and Alice at the Blue Note.", ["bob", "alice", "blue note"]),  # stopwords split spans
    ("We met in March, on Monday, and again on Black Friday.", ["black friday"]),  # calendar-only spans are dates
    ("We read Caroline's book and Dana’s notes.", ["caroline", "dana"]),  # possessives, curly apostrophe
    ("We like Alpha Beta Gamma Delta Epsilon a lot.", []),  # five capitalised words: a heading, not a name
    ("In 2023 we shipped v2 to the EU-West region.", ["eu-west"]),  # numbers alone never start one
    ("The bot said: Deploy done. Then Ops replied.", ["ops"]),  # ":" and "." end sentences; "Then" is a stopword
    ("Hey Evan, great to see you! Don't forget Tokyo.", ["evan", "tokyo"]),  # greeting stopword; contraction stem
    ("line one ends\nKubernetes starts a line. It runs on Kubernetes.", ["kubernetes"]),
])
def test_rules(text, keys):
    assert extract(text) == keys


def test_at_most_twelve_keys_in_reading_order():
    names = [f"Name{chr(65 + i)}x" for i in range(15)]  # digits-free, capitalised, distinct
    text = "We met " + " and ".join(names) + "."
    assert extract(text) == [n.lower() for n in names[:entities.MAX_ENTITIES]]


def test_labelled_sample_shape():
    rows = entity_eval.read_labelled()
    ids = [r["id"] for r in rows]
    assert len(rows) >= 40 and len(set(ids)) == len(ids)
    assert {r["source"] for r in rows} == {"locomo", "ours", "scoreboard"}
    assert sum(r["source"] == "ours" for r in rows) >= 20 and sum(r["source"] == "locomo" for r in rows) >= 30
    for r in rows:
        assert all(e == " ".join(e.lower().split()) and not e.endswith("'s") for e in r["entities"]), r["id"]
        assert (r["source"] != "locomo") == ("text" in r)  # LoCoMo turns are referenced, never copied


def test_scoreboard_sentences_are_the_corpus_memories_they_name():
    from quality import corpus

    by_id = {it.id: it.content for it in corpus.build().items}
    rows = [r for r in entity_eval.read_labelled() if r["source"] == "scoreboard"]
    assert len(rows) == 63 and all(by_id[r["id"]] == r["text"] for r in rows)
    kinds = [r["id"].rsplit("-", 1)[-1] for r in rows]
    assert (kinds.count("fact"), kinds.count("dup"), kinds.count("0"), kinds.count("detail")) == (18, 5, 20, 20)


def test_labelled_locomo_ids_exist(locomo):
    texts = {it.id: it.content for it in locomo.items}
    sentences, skipped = entity_eval.resolve(entity_eval.read_labelled(), texts)
    assert skipped == 0 and all(s.text for s in sentences)


def test_precision_recall_arithmetic():
    sentences = [entity_eval.Labelled("s1", "ours", "t1", ("a", "b")), entity_eval.Labelled("s2", "ours", "t2", ()),
                 entity_eval.Labelled("s3", "locomo", "t3", ("c",))]
    fake = {"t1": ["a", "x"], "t2": ["y"], "t3": ["c"]}
    pr = entity_eval.score(sentences, "all", extract=lambda t: fake[t])
    assert (pr.predicted, pr.labelled, pr.correct) == (4, 3, 2)
    assert (pr.precision, pr.recall) == (pytest.approx(2 / 4), pytest.approx(2 / 3))
    assert pr.f1 == pytest.approx(2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3))
    assert entity_eval.errors(sentences, extract=lambda t: fake[t]) == [
        {"id": "s1", "false_positives": ["x"], "missed": ["b"]}, {"id": "s2", "false_positives": ["y"], "missed": []}]


def test_command_without_locomo_scores_our_sentences(tmp_path, capsys):
    out = tmp_path / "entities.json"
    entity_eval.main(["-out", str(out)])
    doc = json.loads(out.read_text())
    assert [r["scope"] for r in doc["results"]] == ["ours", "scoreboard", "all"]
    assert doc["config"]["skipped_locomo"] > 0
    out = capsys.readouterr().out
    assert out == entity_eval.render(doc) and "| 1.00 / 0.75 |" in out and "published no" not in out


def test_a_study_of_another_labelled_file_keeps_the_earlier_results(tmp_path, capsys):
    """The study scripts claim their -out file like the CLI (results.identity.claim): a run on other inputs writes
    the hashed name beside it; the same run again replaces its own file."""
    out = tmp_path / "entities.json"
    entity_eval.main(["-out", str(out)])
    first = out.read_bytes()
    edited = tmp_path / "labelled.json"
    doc = json.loads(entity_eval.LABELLED_PATH.read_text())
    doc["sentences"] = doc["sentences"][:-1]
    edited.write_text(json.dumps(doc))
    entity_eval.main(["-out", str(out), "-labelled", str(edited)])
    assert "this run writes" in capsys.readouterr().err and out.read_bytes() == first
    [hashed] = tmp_path.glob("entities-*.json")
    assert json.loads(hashed.read_text())["config"]["sentences"] == json.loads(first)["config"]["sentences"] - 1
    entity_eval.main(["-out", str(out), "-labelled", str(edited)])
    assert sorted(p.name for p in tmp_path.glob("entities*.json")) == sorted(["entities.json", hashed.name])


def test_bad_labelled_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sentences": [{"id": "x", "source": "elsewhere", "entities": []}]}))
    with pytest.raises(BenchError, match="sentences\\[0\\]"):
        entity_eval.read_labelled(bad)
