"""Progress a person sees, in a terminal (a pseudo-terminal here) and off it (stderr to a file): the embedding of a
LoCoMo run shows its texts done/total and an ETA, each system's ingest and recall show theirs, and -quiet silences
all of it. ``MEMINI_BENCH_PROGRESS_S=0`` makes every update due at once, so nothing here waits on the clock."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
EMBEDDING = re.compile(r"embedding (?P<n>\d+) texts: [1-9]\d*/(?P=n) texts \(\d+%\), \d+:\d\d elapsed, ETA \d+:\d\d")

pytestmark = pytest.mark.skipif(not LOCOMO.is_file(), reason=f"needs LoCoMo at {LOCOMO}")


def _argv(tmp_path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "memini_bench", "-suite", "locomo", "-data", str(LOCOMO), "-embedder", "hash",
            "-cache-dir", str(tmp_path / "cache"), "-systems", "vector", "-limit", "5", "-no-write", *extra]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "MEMINI_BENCH_PROGRESS")}
    return {**env, "MEMINI_BENCH_PROGRESS_S": "0", "PYTHONPATH": str(ROOT)}


def _in_a_terminal(argv: list[str]) -> tuple[int, str]:
    """Run ``argv`` with stdin, stdout and stderr on a pseudo-terminal; (exit code, everything it wrote)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stderr is the terminal
        os.chdir(ROOT)
        os.execve(argv[0], argv, _env())
    out = bytearray()
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        out.extend(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_in_a_terminal_the_status_line_counts_the_embedding_with_an_eta(tmp_path):
    code, out = _in_a_terminal(_argv(tmp_path))
    assert code == 0, out
    assert EMBEDDING.search(out), out
    assert re.search(r"\r\x1b\[Kprogress: memini-vector ingest of \d+ items > embedding \d+ texts: ", out)  # in place
    assert re.search(r"progress: memini-vector recall: \d/5 questions", out), out
    assert re.search(r"progress: embedding (\d+) texts: \1/\1 texts \(100%\), \d+:\d\d elapsed, [\d.]+ texts/s, done",
                     out)


def test_off_a_terminal_the_same_lines_go_to_a_file(tmp_path):
    log = tmp_path / "stderr.log"
    with log.open("w") as err:
        done = subprocess.run(_argv(tmp_path), cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=err, text=True)
    text = log.read_text()
    assert done.returncode == 0, text
    assert "\r" not in text and "\x1b" not in text  # plain lines in a file
    assert re.search(r"^progress: memini-vector ingest of \d+ items > " + EMBEDDING.pattern, text, re.M), text
    assert re.search(r"^progress: memini-vector recall: 5/5 questions \(100%\), .*, done$", text, re.M), text


def test_quiet_silences_it_in_a_terminal(tmp_path):
    code, out = _in_a_terminal(_argv(tmp_path, "-quiet"))
    assert code == 0, out
    assert "progress:" not in out and "| memini-vector" in out
