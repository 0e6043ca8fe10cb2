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

Machine paths (``portable``): a committed file names no path of the machine that made it. The embedding cache's
``{"path": "/home/.../embeddings-....sqlite"}`` becomes ``{"file": "embeddings-....sqlite"}`` (what the writers
record now). A data folder given by its absolute path (a BEAM tier, ``-data /somewhere/chats/100K``) becomes the
registered set's name (``beam-100k``) and its ``data_sha256`` the set's canonical content hash (the listing of its
files' sha256 by their paths inside the set, ``core.dataset.listing_sha256``), only when the recorded hash is
exactly the listing the loader then hashed of the catalog's files under that path (``memini_bench/data/catalog.json``:
same files, same bytes); every copy of the old hash in the config (the identity's) and the path in the recorded
command follow. A path that cannot be verified is left as it is and reported.

Metric names (``registered_names``): a paired test's row names its metric by its registered name
(``core.metrics.normalize``: ``R@5`` -> ``recall_any@5``, ``MRR`` -> ``mrr``, ``nDCG@10`` -> ``ndcg@10``), a ranking
row's ``recall_at_1``/``recall_at_k`` are ``recall_any_at_1``/``recall_any_at_k`` and a gate row's ``pos_recall_at_k``
``pos_recall_any`` (``results.schema.RANK_LEGACY_FIELDS``, ``GATE_LEGACY_FIELDS``), as the writers do now, and so
is a sweep's recorded selection (``config.select``: ``MRR`` -> ``mrr``, what the sweep records for ``-select MRR``
now); the numbers and the rest of ``config`` (what the command line said) stay as they were.

Sweep folders (``migrate_sweep``): the summary gains the sweep's command line, commit and harness version (from its
``baseline.json``, or from the folder's line in ``cmd/results_manifest.txt`` when the baseline predates recorded
commands) and each cell's plain rerun command (``results.provenance.cell_command``); then the cell files
(``<cell>.json``, ``baseline.json``, ``held-*.json``) are removed: the summary holds every cell's scores. A
summary over 1 MB is then kept gzip-compressed (``summary.json.gz``; ``docgen.manifest.prune_sweep``, as ``make
results`` leaves a sweep). A run that predates recorded command lines says where its command came from
(``command_from``).

    python cmd/migrate_results.py results    # the committed results: every step, idempotent
"""

from __future__ import annotations

import hashlib
import shlex
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memini_bench.core.dataset import listing_sha256  # noqa: E402
from memini_bench.core.metrics import normalize  # noqa: E402
from memini_bench.data.registry import catalog  # noqa: E402
from memini_bench.results.provenance import cell_command  # noqa: E402
from memini_bench.results.schema import (  # noqa: E402
    GATE_LEGACY_FIELDS,
    RANK_LEGACY_FIELDS,
    SCHEMA,
    SCHEMA_VERSION,
    upgrade,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docgen.manifest import commands, prune_sweep  # noqa: E402
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
    for step in (portable, registered_names):
        moved = step(doc)
        if moved:
            said = f"{said}, {moved}" if said != "kept" else moved
    if said != "kept":
        write_json(path, doc, results=True)
    return said


def registered_names(doc: dict) -> str:
    """Every paired test's metric (a row with ``system_a`` and ``metric``, outside ``config``) renamed to its
    registered name; what was done, "" when nothing."""
    renamed = 0
    for part in (v for k, v in doc.items() if k != "config"):
        for row in _walk(part):
            if "system_a" in row and isinstance(row.get("metric"), str) and normalize(row["metric"]) != row["metric"]:
                row["metric"] = normalize(row["metric"])
                renamed += 1
    legacy = {"ranking": RANK_LEGACY_FIELDS, "gate": GATE_LEGACY_FIELDS}.get(str(doc.get("kind")), {})
    rows = doc.get("results") if legacy else None
    fields = 0
    for row in rows if isinstance(rows, list) else []:
        for old in [k for k in row if k in legacy] if isinstance(row, dict) else []:
            row[legacy[old]] = row.pop(old)
            fields += 1
    config = doc.get("config")
    select = config.get("select") if isinstance(config, dict) else None
    selection = isinstance(select, str) and select and normalize(select) != select
    if selection:  # a sweep's -select, recorded by its registered name as the sweep now records it
        config["select"] = normalize(select)
    said = [f"{renamed} test rows name their metric by its registered name" if renamed else "",
            f"-select {select} recorded as {config['select']}" if selection else "",
            f"{fields} row fields by their registered names" if fields else ""]
    return ", ".join(s for s in said if s)


def _walk(obj: object):
    """Every dict inside ``obj``, depth first."""
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)


def registered_data(suite: str, data: str, sha256: str) -> tuple[str, str] | None:
    """(set name, canonical content hash) of the registered set whose catalog files, under the folder ``data``,
    list to exactly ``sha256`` as the loader hashed several files before hashes were path-free; None when none."""
    for ds in catalog().values():
        files = [f for f in ds.files if f.sha256]
        if ds.suite != suite or len(files) < 2 or len(files) != len(ds.files):
            continue
        full = sorted((f"{data.rstrip('/')}/{f.path}", f.sha256) for f in files)
        old = hashlib.sha256("".join(f"{h}  {p}\n" for p, h in full).encode()).hexdigest()
        if old == sha256:
            return ds.name, listing_sha256([(f.path, f.sha256) for f in files])
    return None


def _replace_strings(obj: object, old: str, new: str) -> object:
    if isinstance(obj, dict):
        return {k: _replace_strings(v, old, new) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_replace_strings(v, old, new) for v in obj]
    return new if obj == old else obj


def portable(doc: dict) -> str:
    """``doc`` (a results document) rewritten in place without machine paths (module docstring); what changed,
    "" when nothing did."""
    said = []
    for d in _walk(doc):
        cache = d.get("embed_cache")
        if isinstance(cache, dict) and "path" in cache:
            d["embed_cache"] = {"file": Path(str(cache["path"])).name, **{k: v for k, v in cache.items()
                                                                          if k != "path"}}
            said.append("embed cache named by its file")
    config = doc.get("config")
    data = config.get("data") if isinstance(config, dict) else None
    if isinstance(data, str) and data.startswith("/"):
        found = registered_data(str(config.get("suite", "")), data, str(config.get("data_sha256", "")))
        if found is None:
            return ", ".join([*dict.fromkeys(said), f"absolute data path {data} kept: no registered set verifies it"])
        name, canonical = found
        new = _replace_strings(config, config["data_sha256"], canonical)
        new["data"] = name
        if isinstance(new.get("command"), str):
            new["command"] = shlex.join(name if w == data else w for w in shlex.split(new["command"]))
        doc["config"] = new
        said.append(f"data {data} -> {name} (sha256 verified against the catalog; canonical {canonical[:12]})")
    return ", ".join(dict.fromkeys(said))


def _manifest_command(folder: Path) -> str:
    """The command of ``folder``'s line in cmd/results_manifest.txt (default variables), "" when it has none."""
    rel = f"{folder.parent.name}/{folder.name}"  # a manifest path: results/<folder>
    return next((shlex.join(words) for e, words in commands() if e.paths[0] == rel), "")


def migrate_sweep(folder: Path) -> str:
    """A sweep folder migrated (module docstring): its summary enriched, then its cell files removed."""
    path = folder / "summary.json"
    if not path.is_file():
        return "kept (summary already committed compressed)"
    doc = orjson.loads(path.read_bytes())
    said = []
    if "command" not in doc["config"]:
        base_path = folder / "baseline.json"
        base = orjson.loads(base_path.read_bytes())["config"] if base_path.is_file() else {}
        old_sha = base.get("data_sha256")
        portable(wrapped := {"config": base})
        base = wrapped["config"]
        if old_sha and base.get("data_sha256") != old_sha:  # the identity's copy of the hash follows the data's
            doc["config"] = _replace_strings(doc["config"], old_sha, base["data_sha256"])
            said.append(f"data sha256 {old_sha[:12]} -> {base['data_sha256'][:12]} (as its baseline's)")
        command = base.get("command") or _manifest_command(folder)
        if not command:
            return "kept: no baseline.json command and no manifest line to take the sweep's command from"
        doc["config"].update(command=command, git_commit=base.get("git_commit", ""),
                             harness_version=base.get("harness_version", ""))
        if not base.get("command"):  # say so: the run predates recorded command lines
            doc["config"]["command_from"] = "cmd/results_manifest.txt (the sweep's line; its files recorded none)"
        for key in ("tune", "held"):
            phase = doc.get(key)
            if phase:  # a sweep without -systems swept memini-hybrid (the reference sweeps name theirs)
                at = phase["split"]
                doc[key] = {"split": at, "baseline": phase["baseline"],
                            "baseline_command": cell_command(command, "baseline", at, "memini-hybrid"),
                            "cells": [{"cell": c["cell"], "command": cell_command(command, c["cell"], at,
                                                                                  "memini-hybrid"),
                                       "scores": c["scores"]} for c in phase["cells"]],
                            **{k: v for k, v in phase.items() if k not in ("split", "baseline", "cells")}}
        said.append("command and each cell's rerun command added")
    moved = ", ".join(m for m in (portable(doc), registered_names(doc)) if m)
    if moved or said:
        write_json(path, doc, results=True)
    gone = [p for p in prune_sweep(folder) if not p.name.startswith("summary")]
    if gone:
        said.append(f"{len(gone)} cell files removed")
    if (folder / "summary.json.gz").is_file():
        said.append("summary kept compressed")
    return ", ".join(said + ([moved] if moved else [])) or "kept"


def main(argv: list[str]) -> int:
    folders = [Path(a) for a in argv if Path(a).is_dir()]
    for sweep in sorted({p.parent for f in folders for p in f.rglob("summary.json")}):
        if orjson.loads((sweep / "summary.json").read_bytes()).get("kind") == "sweep-summary":
            print(f"{sweep}: {migrate_sweep(sweep)}")
    paths = [p for a in argv for p in (sorted(Path(a).rglob("*.json")) if Path(a).is_dir() else [Path(a)])]
    for path in paths:
        print(f"{path}: {migrate(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
