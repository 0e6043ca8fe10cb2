"""``-poison N`` (memini's bench/poison.go): debris per questioned group, one shared filler, ``<name>-poisoned``."""

from __future__ import annotations

import json

import pytest
from cli_run import run_cli

from memini_bench.core.dataset import Dataset, Item, Question
from memini_bench.errors import BenchError
from memini_bench.loaders.poison import FILLER, poison, render


def _toy() -> Dataset:
    items = (Item("a1", "alpha one", "ga"), Item("b1", "beta one", "gb"), Item("c1", "gamma one", "gc"))
    questions = (Question("q1", "beta?", ("b1",), "gb"), Question("q2", "alpha?", ("a1",), "ga"),
                 Question("q3", "beta again?", ("b1",), "gb"))
    return Dataset("toy", items, questions, notes=("loader note",))


def test_debris_goes_to_each_questioned_group_in_question_order():
    out = poison(_toy(), 3)
    assert out.name == "toy-poisoned" and out.questions == _toy().questions
    assert out.items[:3] == _toy().items
    assert [(it.id, it.group) for it in out.items[3:]] == [
        ("debris/gb/0", "gb"), ("debris/gb/1", "gb"), ("debris/gb/2", "gb"),
        ("debris/ga/0", "ga"), ("debris/ga/1", "ga"), ("debris/ga/2", "ga")]  # gc has no question: no debris
    assert {it.content for it in out.items[3:]} == {FILLER}
    assert FILLER == "TODO: revisit this later, low-signal note from a bulk import"
    assert out.notes == ("loader note", "poisoned: 3 debris items added to each of 2 groups (6 in all)")
    assert poison(_toy(), 0) is not None and poison(_toy(), 0).name == "toy"
    assert poison(_toy(), 1, filler="custom").items[-1].content == "custom"


def test_an_existing_debris_id_is_refused():
    ds = _toy()
    ds = ds.with_(items=ds.items + (Item("debris/ga/0", "x", "ga"),))
    with pytest.raises(BenchError, match="debris/ga/0"):
        poison(ds, 1)


def test_cli_poison_50_on_the_sample(tmp_path, capsys):
    per_question = tmp_path / "pq.jsonl"
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-poison", "50", "-out", str(tmp_path),
                           "-per-question", str(per_question)], capsys)
    assert code == 0, err
    assert "## memini-sample-poisoned — 8 questions" in out
    assert 'poisoned "memini-sample-poisoned": 50 debris items added to each of 1 groups (50 in all)' in err
    doc = json.loads((tmp_path / "memini-sample-poisoned-emb-hash.json").read_text())
    assert doc["config"]["items"] == 60 and doc["config"]["identity"]["mode_settings"] == {"poison": 50}
    rows = [json.loads(line) for line in per_question.read_text().splitlines()]
    debris = {s: max(sum(ids[0].startswith("debris/") for ids in r["ranked"]) for r in rows if r["system"] == s)
              for s in ("memini-hybrid", "memini-vector")}
    assert debris["memini-hybrid"] <= 1  # the hybrid's content dedup collapses the identical debris
    assert debris["memini-vector"] >= 2  # the raw vector leg does not


def test_poison_is_refused_by_modes_that_do_not_use_it(capsys):
    code, _, err = run_cli(["-suite", "sample", "-rerank", "-poison", "5"], capsys)
    assert code == 2 and "-poison: not used by -rerank" in err
    code, _, err = run_cli(["-suite", "sample", "-poison", "-3"], capsys)
    assert code == 2 and "-poison" in err


def test_render_compares_clean_and_poisoned_per_system():
    def doc(items, rows, poison_n=None):
        ident = {"mode_settings": {"poison": poison_n}} if poison_n else {"mode_settings": {}}
        return {"config": {"dataset": "d-poisoned" if poison_n else "d", "items": items, "embedder": "hash",
                           "identity": ident},
                "results": [{"system": s, "k": k, "scores": {f"recall_any@{k}": r, "mrr": m}} for s, k, r, m in rows]}

    clean = doc(10, [("a", 5, 0.5, 0.4), ("a", 10, 0.6, 0.4), ("b", 5, 0.2, 0.1), ("b", 10, 0.3, 0.1)])
    bad = doc(20, [("a", 5, 0.5, 0.4), ("a", 10, 0.5, 0.35), ("b", 5, 0.1, 0.05), ("b", 10, 0.3, 0.05)], 5)
    text = render(clean, bad)
    assert "5 debris items per group (10 in all)" in text
    assert "| a | 50.0 → 50.0 (+0.0) | 60.0 → 50.0 (-10.0) | 40.0 → 35.0 (-5.0) |" in text
    assert "| b | 20.0 → 10.0 (-10.0) | 30.0 → 30.0 (+0.0) | 10.0 → 5.0 (-5.0) |" in text
