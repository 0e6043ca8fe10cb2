"""Every input file a command reads is bounded: a FIFO, a device, a socket, a folder or a file over its bound is
refused before reading (one line naming the flag and path), never read forever or blocked on."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memini_bench.core.inputs import read_regular
from memini_bench.errors import BenchError
from memini_bench.qa import agreement, cost, prompt_sets
from memini_bench.qa.checkpoint import Checkpoint
from memini_bench.results.per_question import read_per_question
from memini_bench.results.read import load

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def specials(tmp_path):
    """A FIFO, a socket, a folder and /dev/zero (a character device that never ends)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    (tmp_path / "folder").mkdir()
    yield {"a FIFO": fifo, "a socket": sock_path, "a folder": tmp_path / "folder",
           "a character device": Path("/dev/zero")}
    sock.close()


READERS = {
    "read_regular": lambda p: read_regular(p, "-x"),
    "results": load,
    "per-question": read_per_question,
    "-prices": lambda p: cost.read_prices(str(p)),
    "-qa-labels": lambda p: agreement.read_labels(str(p)),
    "-qa-prompts": lambda p: prompt_sets.read_longmemeval(str(p)),
    "checkpoint": lambda p: Checkpoint(Path(p), {"x": 1}, decode=dict, encode=dict, key=lambda r: r).open(),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("kind", ["a FIFO", "a socket", "a character device"])
def test_special_files_are_refused_before_reading(specials, reader, kind):
    with pytest.raises(BenchError) as err:
        READERS[reader](specials[kind])
    message = str(err.value)
    assert "\n" not in message and str(specials[kind]) in message
    if reader == "per-question" and kind == "a FIFO":  # read, once, when a writer sends: here none does
        assert "a FIFO with no data after" in message
    elif reader not in ("-qa-prompts", "per-question"):
        assert kind in message or "not a regular file" in message, message


def test_a_file_over_its_bound_is_refused_before_reading(tmp_path):
    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(cost.MAX_PRICES_BYTES + 1)  # sparse: no disk used
    with pytest.raises(BenchError, match="more than the 16,777,216"):
        cost.read_prices(str(big))
    (tmp_path / "small").write_bytes(b"12345")
    assert read_regular(tmp_path / "small", limit=5) == b"12345"
    with pytest.raises(BenchError, match="6 bytes, more than the 5"):
        (tmp_path / "small").write_bytes(b"123456")
        read_regular(tmp_path / "small", limit=5)


def _report(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memini_bench", "report", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})  # timeout: a hang guard


def test_report_over_a_folder_holding_a_fifo_is_one_line(tmp_path):
    runs = tmp_path / "runs" / "r"
    runs.mkdir(parents=True)
    shutil.copy(ROOT / "results" / "locomo.json", runs / "locomo.json")
    os.mkfifo(runs / "x.json")
    done = _report("runs/r", "-format", "md", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
    assert "x.json: is a FIFO" in done.stderr
    os.mkfifo(tmp_path / "pq.jsonl")
    (runs / "x.json").unlink()
    done = _report("runs/r", str(tmp_path / "pq.jsonl"), "-format", "md", cwd=tmp_path)
    assert done.returncode == 2 and "pq.jsonl: a FIFO with no data after" in done.stderr, done.stderr


def test_prices_dev_zero_is_one_line(tmp_path):
    with pytest.raises(BenchError, match=r"-prices /dev/zero: is a character device"):
        cost.read_prices("/dev/zero")
