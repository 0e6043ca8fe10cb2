"""One typed results schema: every committed results file reads back as its kind and writes back byte for byte the
same document; the reader never guesses a kind (a file without one, a newer version or an unknown kind is one
line naming the file and the fix)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest

from memini_bench.errors import BenchError
from memini_bench.results.read import load
from memini_bench.results.schema import ADDED_IN, KINDS, SCHEMA, SCHEMA_VERSION, CompareResults, ResultsFile, Score
from memini_bench.results.write import write_results_file

RESULTS = Path(__file__).resolve().parents[2] / "results"
COMMITTED = sorted(p for p in RESULTS.rglob("*.json"))


def _upgraded(doc: dict) -> dict:
    """``doc`` as the current version writes it: the version number, and every row field a later version added,
    at its default (``ADDED_IN``)."""
    out = {**doc, "schema_version": SCHEMA_VERSION}
    if doc["kind"] == "run":
        added = [f for v, kinds in ADDED_IN.items() if v > doc["schema_version"] for f in kinds.get("Score", ())]
        defaults = {f.name: f.default for f in dataclasses.fields(Score) if f.name in added}
        out["results"] = [{**row, **{k: v for k, v in defaults.items() if k not in row}} for row in doc["results"]]
    return out


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
    score = Score("memini-keyword", "sample", 5, 8, 0.875, 0.875, 0.8, 0.81, 0.01, 0.02, 1.5, 80.0, 0.38,
                  {"a": 1.0}, {"a": 2}, {"a": 1.0})
    written = CompareResults(config={"mode": "compare", "dataset": "sample"}, scores=(score,),
                             extra={"significance": [{"system_a": "x"}]})
    write_results_file(tmp_path / "r.json", written)
    back = load(tmp_path / "r.json")
    assert back == written and back.scores == (score,) and back.extra["significance"] == [{"system_a": "x"}]
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
    (lambda d: d.update(results=[{"system": "x"}]), "a results row lacks k, recall_at_k, mrr"),
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
