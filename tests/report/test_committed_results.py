"""The committed results/ as a reader gets it (issues 39 and 40): every board row can be tested (its file carries
per-question records), no file names a path of the machine that made it, a sweep is its summary (no cell files,
a rerun command per cell), one BEAM 100K board, and the folder stays small."""

from __future__ import annotations

import gzip
import re
from functools import cache
from pathlib import Path

import orjson
import pytest

from memini_bench.report.boards import build_boards
from memini_bench.report.collect import collect, eligible
from memini_bench.results.read import load, sweep_summary

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
#: An absolute path inside a string (a token starting at the string's start, after a space, ``=`` or a quote).
ABSOLUTE = re.compile(r"(?:^|[\s='\"])(/[A-Za-z0-9._-]+/[^\s'\"]*)")


@cache
def boards():
    return build_boards(collect([str(RESULTS)]))


def _strings(obj: object):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)
    elif isinstance(obj, str):
        yield obj


def _documents(path: Path):
    raw = path.read_bytes()
    raw = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    if ".jsonl" in path.name:
        yield from (orjson.loads(line) for line in raw.splitlines() if line.strip())
    else:
        yield orjson.loads(raw)


def _scratch_defaults() -> set[str]:
    """The Makefile's scratch folders (``SCALE_DIR ?= /tmp/...``): a documented default, not a machine's path."""
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^\w+_DIR \?= (/\S+)", text, re.M))


def test_every_board_row_has_per_question_records_and_none_is_untested():
    rows = [(b.key, r) for b in boards() for r in b.rows + b.apart]
    assert rows
    without = [(key, r.name, r.source.name) for key, r in rows if not eligible(r.source, r.system)]
    assert without == [], "board rows whose file has no per-question records (add -per-question to its manifest line)"
    untested = [(b.key, r.name) for b in boards() for r in b.rows if r.mark == "untested"]
    assert untested == []


def test_one_beam_100k_board_per_split():
    """One data set name and one data file for BEAM 100K: a board per split (and embedder), never two copies."""
    beam = [b.key for b in boards() if b.dataset == "beam-100k"]
    assert beam and all(key.startswith(("beam-100k-beam-100k-full-", "beam-100k-beam-100k-held-")) for key in beam)
    assert len(beam) == len(set(beam))
    assert {split for split in ("full", "held") if any(k.startswith(f"beam-100k-beam-100k-{split}-") for k in beam)} \
        == {"full", "held"}


def test_no_committed_file_names_a_machine_path():
    allowed = _scratch_defaults()
    found = []
    for path in sorted(p for p in RESULTS.rglob("*") if p.is_file() and ".json" in p.name):
        for doc in _documents(path):
            for text in _strings(doc):
                found += [(str(path.relative_to(ROOT)), m) for m in ABSOLUTE.findall(text)
                          if not any(m == a or m.startswith(a + "/") for a in allowed)]
    assert found == []


def test_a_committed_sweep_is_its_summary_with_a_rerun_command_per_cell():
    folders = sorted({p.parent for p in RESULTS.rglob("summary.json*")})
    assert len(folders) >= 10
    for folder in folders:
        assert {p.name for p in folder.iterdir()} <= {"summary.json", "summary.json.gz", "sweep.png"}, folder
        doc = load(sweep_summary(folder)).raw
        assert doc["config"]["command"].startswith("memini-bench ") and "-sweep" in doc["config"]["command"]
        for phase in filter(None, (doc["tune"], doc.get("held"))):
            assert phase["baseline_command"].startswith("memini-bench ")
            assert all(c["command"].startswith("memini-bench ") and "-sweep" not in c["command"]
                       for c in phase["cells"])


@pytest.mark.parametrize("limit", [17_000_000])
def test_results_stay_small(limit):
    assert sum(p.stat().st_size for p in RESULTS.rglob("*") if p.is_file()) < limit
