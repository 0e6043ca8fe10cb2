"""One typed results schema: every committed results file reads back as its kind and writes back byte for byte the
same document; the reader never guesses a kind (a file without one, a newer version or an unknown kind is one
line naming the file and the fix)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from memini_bench.errors import BenchError
from memini_bench.results.read import load
from memini_bench.results.schema import KINDS, SCHEMA, SCHEMA_VERSION, CompareResults, ResultsFile, Score
from memini_bench.results.write import write_results_file

RESULTS = Path(__file__).resolve().parents[2] / "results"
COMMITTED = sorted(p for p in RESULTS.rglob("*.json"))


#: A version-1/2 row's metric fields and their version-3 names, written out here (not read from the schema).
OLD_TO_NEW = {"recall_at_k": "recall_any@{k}", "recall_all_at_k": "recall_all@{k}", "mrr": "mrr",
              "ndcg_at_k": "ndcg@{k}", "p50_ms": "latency_p50", "p95_ms": "latency_p95",
              "tokens_injected_mean": "tokens_injected@{k}", "token_efficiency": "token_efficiency@{k}"}


def _v3_row(row: dict) -> dict:
    """A version-1/2 Score row as version 3 writes it, built by hand: every number moved, none changed."""
    k = row["k"]
    cats: dict = {}
    for old, name in (("per_category", "recall_any@{k}"), ("per_category_all", "recall_all@{k}")):
        for c, v in row.get(old, {}).items():
            cats.setdefault(c, {})[name.format(k=k)] = v
    return {"system": row["system"], "dataset": row["dataset"], "k": k, "questions": row["questions"],
            "scores": {new.format(k=k): row[old] for old, new in OLD_TO_NEW.items() if old in row},
            "categories": cats, "per_category_questions": row.get("per_category_questions", {}),
            "ingest_ms": row["ingest_ms"], "leaked": row.get("leaked", 0),
            "model_load_ms": row.get("model_load_ms", 0.0), "embed_ms": row.get("embed_ms", 0.0),
            "store_ingest_ms": row.get("store_ingest_ms", 0.0)}


def _upgraded(doc: dict) -> dict:
    """``doc`` as the current version writes it: the version number, and before version 3 every Score row (at
    any depth outside config: a run's results, a sweep's cells, VetoBench's scores) in the open form."""
    def walk(v: object) -> object:
        if isinstance(v, dict) and {"system", "k", "recall_at_k", "mrr", "p50_ms"} <= set(v):
            return _v3_row(v)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return [walk(x) for x in v] if isinstance(v, list) else v

    if doc["schema_version"] >= 3:
        return doc
    return {k: (v if k == "config" else walk(v)) for k, v in {**doc, "schema_version": SCHEMA_VERSION}.items()}


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_committed_file_round_trips_through_its_kind(path):
    """A file of the current version writes back as it was read; an older one as its upgrade: every number kept,
    only what a later version added filled with its default."""
    doc = orjson.loads(path.read_bytes())
    typed = load(path)
    assert type(typed) is KINDS[doc["kind"]] and typed.KIND == doc["kind"]
    assert 1 <= doc["schema_version"] <= SCHEMA_VERSION
    expected = _upgraded(doc)
    assert typed.to_dict() == expected and list(typed.to_dict()) == list(expected)   # same keys, same order


def test_writer_and_reader_use_the_same_class(tmp_path):
    score = Score("memini-keyword", "sample", 5, 8, {"recall_any@5": 0.875, "recall_all@5": 0.875, "mrr": 0.8,
                                                     "ndcg@5": 0.81, "latency_p50": 0.01, "recall_frac@5": 0.9},
                  {"a": {"recall_any@5": 1.0, "recall_all@5": 1.0}}, {"a": 2}, ingest_ms=1.5)
    written = CompareResults(config={"mode": "compare", "dataset": "sample"}, scores=(score,),
                             extra={"significance": [{"system_a": "x"}]})
    write_results_file(tmp_path / "r.json", written)
    back = load(tmp_path / "r.json")
    assert back == written and back.scores == (score,) and back.extra["significance"] == [{"system_a": "x"}]
    row = back.scores[0]
    assert (row["recall_any@{k}"], row["mrr"], row.category("recall_any@{k}"), row.value("recall_frac@{k}")) == (
        0.875, 0.8, {"a": 1.0}, 0.9)
    assert row.value("RA@5") == row.value("RecallAll@5") == row.value("recall_all_at_k") == 0.875  # one metric
    assert row.value("precision@5") == 0.0  # a metric the row does not hold: the default
    with pytest.raises(BenchError, match="did you mean recall_frac@5"):
        row.value("recall_fract@5")
    raw = orjson.loads((tmp_path / "r.json").read_bytes())
    assert (raw["schema"], raw["schema_version"], raw["kind"]) == (SCHEMA, SCHEMA_VERSION, "run")


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("kind"), "written before results schema 1 .*cmd/migrate_results.py"),
    (lambda d: d.pop("schema"), "written before results schema 1"),
    (lambda d: d.update(schema_version=SCHEMA_VERSION + 1),
     f"results schema version {SCHEMA_VERSION + 1}; this memini-bench reads"),
    (lambda d: d.update(schema_version="1"), "results schema version '1'"),
    (lambda d: d.update(kind="nosuch"), "unknown results kind 'nosuch'"),
    (lambda d: d.update(results={"not": "a list"}), "results is not a list"),
    (lambda d: d.update(results=[{"system": "x"}]), "a results row lacks system, k or its scores"),
])
def test_the_reader_refuses_what_it_cannot_type(tmp_path, change, message):
    doc = CompareResults(config={"mode": "compare"}, scores=()).to_dict()
    change(doc)
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(BenchError, match=f"^{path}: {message}"):
        load(path)


def test_every_kind_is_registered_once():
    kinds = [cls.KIND for cls in KINDS.values()]
    assert len(kinds) == len(set(kinds)) and all(issubclass(c, ResultsFile) for c in KINDS.values())


def test_upgrade_moves_every_old_score_row_and_changes_no_number():
    """A version-1 document (a run's rows, a sweep's cells, VetoBench's scores) as version 3: every number under
    its canonical name, equal and of the same type; config untouched (so the file's identity and name stay)."""
    from memini_bench.results.schema import upgrade

    old = {"system": "s", "dataset": "d", "k": 5, "questions": 3, "recall_at_k": 2 / 3, "recall_all_at_k": 0.0,
           "mrr": 0.5, "ndcg_at_k": 0.4, "p50_ms": 1.5, "p95_ms": 2, "ingest_ms": 10.0, "tokens_injected_mean": 41.5,
           "token_efficiency": 0.04, "per_category": {"a": 1.0}, "per_category_questions": {"a": 1},
           "per_category_all": {"a": 0.0}}
    ranking = {"system": "s", "category": "a", "questions": 1, "recall_at_1": 0.0, "recall_at_k": 1.0, "mrr": 0.5}
    config = {"identity": {"mode": "compare", "recall_at_k": 1}, "mode": "compare"}
    doc = {"schema": SCHEMA, "schema_version": 1, "kind": "sweep-summary", "config": config,
           "tune": {"baseline": [old], "cells": [{"cell": "x", "scores": [old]}]}, "suites": [{"scores": [old]}],
           "ranking": [ranking]}
    new = upgrade(doc)
    assert new["schema_version"] == SCHEMA_VERSION == 3 and new["config"] is config and new["ranking"] == [ranking]
    row = new["tune"]["cells"][0]["scores"][0]
    assert row == new["tune"]["baseline"][0] == new["suites"][0]["scores"][0] == _v3_row(old)
    assert row["scores"] == {"recall_any@5": 2 / 3, "recall_all@5": 0.0, "mrr": 0.5, "ndcg@5": 0.4,
                             "latency_p50": 1.5, "latency_p95": 2, "tokens_injected@5": 41.5,
                             "token_efficiency@5": 0.04}
    assert type(row["scores"]["latency_p95"]) is int  # nothing converted
    assert row["categories"] == {"a": {"recall_any@5": 1.0, "recall_all@5": 0.0}}
    score = Score.from_row(old)
    assert (score["recall_any@{k}"], score.category("recall_any@{k}"), score.category("recall_all@{k}")) == (
        2 / 3, {"a": 1.0}, {"a": 0.0})
    assert score == Score.from_row(row) and upgrade(new) is new


def test_committed_files_are_schema_3_and_keep_their_identity():
    """Every committed results file is version 3; its config (and so its identity, hence its name and hash)
    holds no schema version."""
    from memini_bench.results.identity import identity_hash, results_identity

    for path in COMMITTED:
        doc = orjson.loads(path.read_bytes())
        assert doc["schema_version"] == 3, path
        ident = results_identity(path)
        if isinstance(ident, dict):
            assert "schema_version" not in orjson.dumps(ident).decode() and len(identity_hash(ident)) == 64
