"""The contradiction detector by hand, the authored quads' shape, and the study's parts on small fixtures."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import build_embedder
from memini_bench.errors import BenchError
from memini_bench.studies import contradiction, stale
from memini_bench.studies.contradict import (
    DISTINCT,
    RESTATEMENT,
    UPDATE,
    classify,
    normalize_times,
    numbers_to_digits,
    phrase_value,
    stem,
)


@pytest.mark.parametrize(("new", "old", "label"), [
    ("Cache entries expire after 10 minutes.", "cache entries expire after 10 minutes", RESTATEMENT),  # identical
    ("Cache entries expire after 15 minutes.", "Cache entries expire after 10 minutes.", UPDATE),  # value swap
    ("Cache entries expire after ten minutes.", "Cache entries expire after 10 minutes.", RESTATEMENT),  # words
    ("The job runs at 2am UTC.", "The job runs at 02:00 UTC.", RESTATEMENT),  # clock forms
    ("The job runs at 4am UTC.", "The job runs at 02:00 UTC.", UPDATE),
    ("Uploads are capped at 20 megabytes.", "Uploads are capped at 20 MB.", RESTATEMENT),  # unit alias
    ("We store vectors in PostgreSQL.", "We store vectors in Postgres.", RESTATEMENT),  # alias by prefix
    ("We store vectors in Qdrant.", "We store vectors in Postgres.", UPDATE),  # a named value swapped
    ("Backups run nightly at 01:00 and are copied to a second region.", "Backups run nightly at 01:00.",
     RESTATEMENT),  # added detail on one side only never fires
    ("The API no longer requires bearer tokens on public routes.", "The API requires bearer tokens on public routes.",
     UPDATE),  # retrospective cue
    ("The API no longer requires bearer tokens.", "The API no longer requires bearer tokens on every route.",
     RESTATEMENT),  # the cue is in both: no change
    ("Deploys do not require two approvals.", "Deploys require two approvals.", UPDATE),  # negation flip
    ("Approvals are tracked in a spreadsheet by the release manager.", "Deploys require two approvals.", DISTINCT),
])
def test_detector_by_hand(new, old, label):
    assert classify(new, old).label == label


def test_normalizers():
    assert phrase_value(["twenty", "five"]) == 25 and phrase_value(["four", "hundred"]) == 400
    assert phrase_value(["two", "thousand", "ten"]) == 2010 and phrase_value(["hundred"]) == 100
    assert numbers_to_digits("twenty-five items, three replicas") == "25 items, 3 replicas"
    assert normalize_times("at 2am, 2:30 pm and 09:15") == "at 2:00, 14:30 and 9:15"
    assert [stem(w) for w in ("minutes", "seconds", "requests", "capped", "policies", "expires")] == [
        "min", "sec", "req", "cap", "policy", "expir"]


def test_quads_file_shape():
    quads, topics = contradiction.read_quads()
    assert len(quads) >= 36 and {q.kind for q in quads} == {"value", "polarity"}
    assert len({q.base for q in quads}) == len(quads)
    for q in quads:
        assert len({q.base, q.restatement, q.update, q.distinct}) == 4
    assert len(topics) == 12 and len({t.key for t in topics}) == 12
    assert all(t.old != t.update and t.old.startswith("Decision:") for t in topics)


def test_bad_quads_file_is_one_line(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"quads": [{"kind": "value", "base": "a", "restatement": "b", "update": "c",
                                           "distinct": "d"}], "stale_topics": []}))
    with pytest.raises(BenchError, match=">= 36 quads"):
        contradiction.read_quads(path)


def test_pricing_counts():
    q = contradiction.Quad("value", "Cache entries expire after 10 minutes.", "Cache entries expire after ten minutes.",
                           "Cache entries expire after 30 minutes.", "The cache is sharded across nodes by key.")
    p = contradiction.pricing([q, contradiction.Quad("polarity", q.base, q.restatement,
                                                     "Cache entries expire after ten minutes.", q.distinct)])
    assert p["verdicts"]["restatement"] == {"restatement": 2, "update": 0, "distinct": 0}
    assert p["verdicts"]["update"]["update"] == 1 and p["update_by_kind"] == {"value": [1, 1], "polarity": [0, 1]}


def test_nearest_matches_brute_force():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(7, 5)).astype(np.float32), rng.normal(size=(9, 5)).astype(np.float32)
    best, score = contradiction.nearest(a, b)
    brute = np.array([[1 / (1 + np.linalg.norm(x - y)) for y in b] for x in a])
    assert best.tolist() == brute.argmax(axis=1).tolist() and np.allclose(score, brute.max(axis=1))
    best, _ = contradiction.nearest(a, a, exclude_self=True)
    assert all(i != j for i, j in enumerate(best.tolist()))


@pytest.fixture(scope="module")
def hashed() -> TextEncoder:
    return TextEncoder(build_embedder("hash"))


def test_gate_routing_is_monotone_in_the_floor(hashed):
    quads, _ = contradiction.read_quads()
    g = contradiction.gate(hashed, quads)
    rows = g["floors"]
    for probe in contradiction.PROBES:
        routed = [r[f"{probe}_routed"] for r in rows]
        assert routed == sorted(routed, reverse=True)
        assert all(r[f"{probe}_fired"] <= r[f"{probe}_routed"] for r in rows)
    assert g["score_stats"]["update"]["own_base"] <= len(quads)


def test_wild_pairs_flag_a_planted_update(hashed):
    texts = ["The staging cluster runs eight worker nodes in total.", "The staging cluster runs nine worker nodes.",
             "Lunch on Fridays is pizza from the corner shop."]
    w = contradiction.wild(hashed, texts)
    assert w["pairs"] == 3 and w["floors"][0] == {"floor": 0.0, "routed": 3, "flagged": 2}  # the pair, both ways


def test_valid_to_backend_drops_invalidated_items_from_both_legs(hashed):
    topics = contradiction.read_quads()[1][:3]
    items = stale.old_items(topics) + stale.new_items(topics)
    backend = stale.ValidToBackend(hashed, {f"{topics[0].key}-old"})
    backend.ingest(items)
    gone = [i for i, it in enumerate(backend.items) if it.id == f"{topics[0].key}-old"][0]
    for leg in (backend.vector_leg, backend.keyword_leg):
        ids, _ = leg(stale.GROUP, topics[0].old, 5)
        assert gone not in ids.tolist() and len(ids) == 5


def test_stale_study_invalidation_removes_the_stale_fact(hashed):
    topics = contradiction.read_quads()[1]
    s = stale.study(hashed, topics)
    rows = {(r["condition"], r["k"]): r for r in s["rows"]}
    assert set(rows) == {(c, k) for c in ("baseline", "confidence x0.5", "confidence x0.25", "valid_to (detector)",
                                         "valid_to (all)") for k in stale.KS}
    assert rows[("valid_to (all)", 3)]["stale_above_fresh"] == rows[("valid_to (all)", 3)]["both_in_window"] == 0
    assert s["old_fact_mean_access"] > 0  # the entrenching recalls reinforced the old facts


def test_command_renders_its_results(tmp_path, capsys):
    out = tmp_path / "c.json"
    contradiction.main(["-embedders", "hash", "-out", str(out)])
    doc = json.loads(out.read_text())
    assert doc["config"]["quads"] >= 36 and set(doc["gate"]) == {"hash"} and doc["wild"] == {"hash": {}}
    assert capsys.readouterr().out == contradiction.render(doc)


def test_class_scores_by_hand():
    p = {"quads": 4, "verdicts": {"restatement": {"restatement": 3, "update": 1, "distinct": 0},
                                  "update": {"restatement": 1, "update": 3, "distinct": 0},
                                  "distinct": {"restatement": 2, "update": 0, "distinct": 2}}}
    s = contradiction.class_scores(p)
    assert s["restatement"] == (pytest.approx(3 / 6), 0.75)
    assert s["update"] == (pytest.approx(3 / 4), 0.75) and s["distinct"] == (1.0, 0.5)
