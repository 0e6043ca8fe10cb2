"""Rewrite results files of an older results schema as the current version writes them, their numbers untouched.

    python cmd/migrate_results.py FILE_OR_FOLDER...

A file from before schema 1 has no ``kind``; its kind is inferred once, here, from what the old writers put in it
(``config.mode`` and the top-level keys), and the file is rewritten as ``{"schema", "schema_version": 1, "kind",
"config", ...the rest as it was}`` (version 1: what the old writers wrote; the reader fills what later versions
added with its defaults). Files already on the schema, and JSON files that are not results (a VetoBench
archive, a QA archive), are left alone. The reader (``results.read.load``) never guesses: it refuses a file
without a kind and names this command.

A file of schema version 1 or 2 (or one just given its header) is rewritten as ``results.schema.upgrade`` reads
it: every ``Score`` row in the open score mapping of version 3 (``recall_at_k`` -> ``scores["recall_any@K"]`` ...,
the same numbers), every other key as it was. ``config`` is never touched, so a file's identity and name stay.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memini_bench.results.schema import SCHEMA, SCHEMA_VERSION, upgrade  # noqa: E402
from memini_bench.results.write import write_json  # noqa: E402

STUDY_MODES = {"multihop", "entity-bridge", "qa"}


def old_kind(doc: dict) -> str | None:
    """The kind an old results document stands for, None when it is not one."""
    config = doc.get("config")
    if not isinstance(config, dict):
        return None
    mode = config.get("mode", "")
    results = doc.get("results")
    if "suites" in doc:
        return "vetobench"
    if "points" in doc:
        return "vetobench-scale"
    if mode in ("rerank", "rerank-tier"):
        return "ranking"
    if mode in ("vec-gate", "rerank-gate"):
        return "gate"
    if mode == "compare-files":
        return "compare-files"
    if mode in STUDY_MODES:
        return "study"
    if isinstance(results, list) and results and isinstance(results[0], dict) and "dur_recall" in results[0]:
        return "quality"
    if isinstance(results, list) and results and all(isinstance(r, dict) and "recall_at_k" in r for r in results):
        return "run"
    if "tune" in doc and "sweep" in config:
        return "sweep-summary"
    if mode in ("speed", "scale", "gpu", "ray-estimate", "gpu-embed"):
        return "bench"
    if "study" in config or mode in ("contradiction", "entities") or {"gate", "wild", "errors"} & set(doc) \
            or "labelled" in config:
        return "study"
    return None


def migrate(path: Path) -> str:
    doc = orjson.loads(path.read_bytes())
    if not isinstance(doc, dict):
        return "not a results file"
    said = "kept"
    if doc.get("schema") != SCHEMA:
        kind = old_kind(doc)
        if kind is None:
            return "not a results file"
        rest = {k: v for k, v in doc.items() if k != "config"}
        doc = {"schema": SCHEMA, "schema_version": 1, "kind": kind, "config": doc["config"], **rest}
        said = f"kind {kind}"
    if doc.get("schema_version", SCHEMA_VERSION) < SCHEMA_VERSION:
        version = doc["schema_version"]
        doc = upgrade(doc)
        said = f"{said}, schema {version} -> {SCHEMA_VERSION}" if said != "kept" else \
            f"schema {version} -> {SCHEMA_VERSION}"
    if said != "kept":
        write_json(path, doc, results=True)
    return said


def main(argv: list[str]) -> int:
    paths = [p for a in argv for p in (sorted(Path(a).rglob("*.json")) if Path(a).is_dir() else [Path(a)])]
    for path in paths:
        print(f"{path}: {migrate(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
