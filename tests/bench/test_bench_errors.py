"""The benchmark scripts keep the CLI's contract on bad input: one ``memini-bench: error:`` line, exit code 2, no
traceback and no results file (``provenance.bench_main``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MALFORMED = "data/contradiction-quads.json"  # a JSON object where the LoCoMo loader wants an array


@pytest.mark.parametrize("script, args, words", [
    ("cmd/speed.py", ["--locomo", MALFORMED, "--skip", "embedding,recall,end-to-end,hybrid,peers"],
     f"{MALFORMED}: expected an array"),
    ("cmd/scale.py", ["--data", "/nonexistent", "--dir", "{tmp}/scale", "--scales", "1/4"],
     "/nonexistent/locomo/locomo10.json: no such file"),
    ("cmd/scale.py", ["--scales", "S,M-rare"], "-scales S,M-rare: unknown M-rare"),
    ("cmd/gpu_embed.py", ["--device", "cpu", "--suite", "locomo", "--data", MALFORMED], f"{MALFORMED}: expected"),
    ("cmd/gpu_embed.py", ["--device", "cpu", "--suite", "nosuch", "--data", MALFORMED], "-suite 'nosuch': unknown"),
    ("cmd/ray_estimate.py", ["--long", "0"], "--gpu-texts-per-s, --long and --short must be positive"),
    ("cmd/speed.py", ["--locomo", MALFORMED, "--out", "/proc/nope/speed.json"], "--out /proc/nope/speed.json"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, script, args, words):
    out = tmp_path / "bench.json"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(out)]
    run = subprocess.run([sys.executable, script, *argv], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)})
    errors = [line for line in run.stderr.splitlines() if line.startswith("memini-bench: error:")]
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert len(errors) == 1 and words in errors[0], run.stderr
    assert not out.exists()
