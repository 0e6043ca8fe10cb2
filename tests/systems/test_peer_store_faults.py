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
                          text=True, timeout=600, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"memini-bench: error: {name}: its store folder '{tmp_path}")
    assert "free space there or set TMPDIR" in last
    assert "Traceback" not in done.stderr
    assert not out.exists() or not list(out.iterdir())


# mem0 keeps its store in memory; what it puts on disk is its home folder (MEM0_DIR, made when the adapter module is
# imported; mem0 writes config.json there) and the adapter's workdir(). The temp folder is made unwritable for real:
# as root the process drops to nobody (root ignores permission bits) after importing what it reads; otherwise the
# folder is chmod 0o500. A warm-up run imports the run's own modules while they are readable.
MEM0_SCRIPT = """
import os, sys, tempfile
os.environ["MEM0_DIR"] = {home!r}
import mem0, qdrant_client
from memini_bench.cli import main
try:
    main(['-systems', 'keyword', '-embedder', 'hash', '-no-write', '-no-cache', '-quiet'])
except SystemExit:
    pass
if {imported}:
    tempfile.tempdir = {home!r}
    import memini_bench.systems.peers.mem0
if os.geteuid() == 0:
    os.setgroups([])
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
else:
    os.chmod({folder!r}, 0o500)
tempfile.tempdir = {folder!r}
main(['-systems', 'mem0', '-embedder', 'hash', '-no-write', '-no-cache', '-quiet'])
"""


@pytest.mark.parametrize("imported", [False, True], ids=["at-import", "workdir"])
def test_mem0_with_an_unwritable_temp_folder_is_one_line(tmp_path, imported):
    """Unwritable while the adapter module is imported (its MEM0_HOME) or after (its workdir for Memory)."""
    if importlib.util.find_spec("mem0") is None:
        pytest.skip("mem0ai is not installed (the peers extra)")
    folder, home = tmp_path / "tmp", tmp_path / "home"
    folder.mkdir(mode=0o755)
    home.mkdir()
    script = MEM0_SCRIPT.format(home=str(home), folder=str(folder), imported=imported)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    os.chmod(folder, 0o755)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"memini-bench: error: mem0: its store folder '{folder}' is full or not writable (Permission denied); "
        "free space there or set TMPDIR to a writable folder with room"), done.stderr
    assert "Traceback" not in done.stderr
    assert list(folder.iterdir()) == []
