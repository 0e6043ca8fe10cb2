"""Every mode that writes results claims its path before any embedding (issue 21, item 2): a run whose readable
name holds another run (or a file of no identity) writes ``<name>-<hash>``, the hash being the first 8 hex digits
of the SHA-256 of its identity's canonical JSON (computed here from the identity the same run recorded where
nothing was in the way); a hashed name that holds yet another file is refused with one line, before the run's
encoder embeds a single text. Runs on LoCoMo (20 questions, the hash embedder) and the VetoBench fixtures."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from cli_run import run_cli

from memini_bench.embed.encoder import TextEncoder

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
LOCOMO = SHARED / "locomo" / "locomo10.json"
VETO = SHARED / "vetobench"
BASE = ["-suite", "locomo", "-data", str(LOCOMO), "-limit", "20", "-embedder", "hash"]

MODES = {
    "normal run": BASE,
    "-multihop": [*BASE, "-multihop"],
    "-entity-bridge": [*BASE, "-entity-bridge"],
    "-rerank": [*BASE, "-rerank", "-rerank-cats", "2"],
    "-vec-gate": [*BASE, "-vec-gate", "0.3,0.5"],
    "-sweep": [*BASE, "-sweep", "fusion=0.5,-1", "-resamples", "100"],
    "-suite vetobench": ["-suite", "vetobench", "-data", str(VETO), "-veto-embedders", "hash",
                         "-composite-embedder", "hash"],
}


def _identity_of(path: Path) -> dict:
    doc = path / "summary.json" if path.is_dir() else path
    return json.loads(doc.read_text())["config"]["identity"]


def _hashed(path: Path, ident: dict) -> Path:
    canonical = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    h = hashlib.sha256(canonical).hexdigest()[:8]
    return path.with_name(f"{path.name.removesuffix('.json')}-{h}{'.json' if path.suffix == '.json' else ''}")


def _foreign(path: Path) -> None:
    """A file (or, for a sweep's folder, a folder) of no identity at ``path``."""
    if path.suffix == ".json":
        path.write_text("{}")
    else:
        path.mkdir()
        (path / "summary.json").write_text("{}")


@pytest.mark.parametrize("mode", list(MODES))
def test_a_taken_name_gives_the_hashed_name_and_a_taken_hash_is_refused_before_embedding(
        mode, tmp_path, capsys, monkeypatch):
    if not LOCOMO.exists() or not VETO.exists():
        pytest.skip("needs ../shared/data (LoCoMo and the VetoBench fixtures)")
    args = MODES[mode]
    alone, out = tmp_path / "alone", tmp_path / "out"
    code, _, err = run_cli([*args, "-out", str(alone)], capsys)
    assert code in (0, 1), err                                    # VetoBench's gate may fail the hash embedder
    written = sorted(p for p in alone.iterdir() if p.suffix == ".json" or p.is_dir())
    readable = written[0]
    assert readable.name in {"vetobench.json"} or readable.name.startswith("locomo"), written
    ident = _identity_of(readable)
    hashed = _hashed(out / readable.name, ident)

    out.mkdir()
    _foreign(out / readable.name)
    code, _, err = run_cli([*args, "-out", str(out)], capsys)
    assert code in (0, 1) and f"this run writes {hashed}" in err, err
    assert _identity_of(hashed) == ident                          # the same run, under its hashed name
    foreign = out / readable.name
    assert (foreign / "summary.json" if foreign.is_dir() else foreign).read_text() == "{}"   # left as it was

    shutil.rmtree(hashed) if hashed.is_dir() else hashed.unlink()
    _foreign(hashed)

    def embed(*_a, **_k):
        raise AssertionError("embedded before the results path was claimed")

    monkeypatch.setattr(TextEncoder, "encode", embed)
    code, _, err = run_cli([*args, "-out", str(out)], capsys)
    last = err.strip().splitlines()[-1]
    assert code == 2 and str(hashed) in last and "other settings (no identity)" in last, err


def test_two_comparisons_of_files_with_one_name_keep_both(tmp_path, capsys):
    sample = Path(__file__).resolve().parents[2] / "memini_bench" / "data" / "sample.json"
    runs = []
    for fusion, folder in (("0.5", "a"), ("-1", "b")):
        pq = tmp_path / folder / "pq.jsonl"
        code, _, err = run_cli(["-suite", "file", "-data", str(sample), "-embedder", "hash", "-fusion", fusion,
                                "-out", str(tmp_path / folder), "-per-question", str(pq)], capsys)
        assert code == 0, err
        runs.append(pq)
    out = tmp_path / "cmp"
    for pq in runs:
        code, _, err = run_cli(["-compare", str(pq), "-resamples", "100", "-out", str(out)], capsys)
        assert code == 0, err
    names = {p.name for p in out.glob("*.json")}
    assert "compare-pq.json" in names and len(names) == 2, names
    [hashed] = names - {"compare-pq.json"}
    assert json.loads((out / hashed).read_text())["config"]["files"] == [str(runs[1])]
    code, _, err = run_cli(["-compare", str(runs[1]), "-resamples", "100", "-out", str(out)], capsys)
    assert code == 0 and len(list(out.glob("*.json"))) == 2, err  # the same comparison again: its own file
