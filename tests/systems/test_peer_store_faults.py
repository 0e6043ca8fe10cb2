"""A peer adapter whose store folder is full: one line naming the folder and the fix, exit 2, nothing written.

The folder is made full for real: the run's process gets ``RLIMIT_FSIZE`` of 4 KiB (with ``SIGXFSZ`` ignored), so
every write past 4 KiB fails with ``EFBIG`` inside the library (sqlite's "disk I/O error", Lance's "File too large",
Chroma's database error), as a full disk fails it with ``ENOSPC``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

SCRIPT = """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
from memini_bench.cli import main
main(['-systems', {name!r}, '-embedder', 'hash', '-out', {out!r}, '-quiet'])
"""


@pytest.mark.parametrize(("name", "module"), [
    ("sqlite-vec", "sqlite_vec"),
    pytest.param("lancedb", "lancedb", marks=pytest.mark.slow),
    pytest.param("chroma", "chromadb", marks=pytest.mark.slow),
])
def test_a_full_store_folder_is_one_line(tmp_path, name, module):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (the {name} extra)")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(name=name, out=str(out))], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"memini-bench: error: {name}: its store folder '{tmp_path}")
    assert "free space there or set TMPDIR" in last
    assert "Traceback" not in done.stderr
    assert not out.exists() or not list(out.iterdir())
