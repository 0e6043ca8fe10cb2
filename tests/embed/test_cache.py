"""The embedding disk cache: hits skip the embedder, damage is set aside and rebuilt, kills never corrupt it."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memini_bench.embed.cache import DiskCache, cache_file
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.errors import BenchError


class _Spy(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(8)
        self.identity = "spy-model|max_tokens=7"
        self.calls = 0

    def encode(self, texts):
        self.calls += len(texts)
        return super().encode(texts)


def test_second_run_is_served_from_disk(tmp_path):
    texts = ["alpha beta", "gamma", "alpha beta", "delta"]
    first = _Spy()
    a = TextEncoder(first, cache=DiskCache(tmp_path, first.identity, 8)).documents(texts)
    assert first.calls == 3  # identical texts embedded once
    second = _Spy()
    cache = DiskCache(tmp_path, second.identity, 8)
    b = TextEncoder(second, cache=cache).documents(texts)
    assert second.calls == 0 and cache.hits == 3
    np.testing.assert_array_equal(a, b)
    other = _Spy()
    other.identity = "spy-model|max_tokens=9"  # another setting -> another file, nothing shared
    TextEncoder(other, cache=DiskCache(tmp_path, other.identity, 8)).documents(texts)
    assert other.calls == 3


def test_garbage_file_is_set_aside_and_rebuilt(tmp_path, capsys):
    path = cache_file(tmp_path, "m", 8)
    path.write_bytes(b"this is not a database" * 100)
    cache = DiskCache(tmp_path, "m", 8)
    assert cache.get_many(["x"]) == [None]
    cache.put_many(["x"], np.ones((1, 8), dtype=np.float32))
    assert cache.get_many(["x"])[0].tolist() == [1.0] * 8
    err = capsys.readouterr().err
    assert "damaged" in err and len(list(tmp_path.glob("*.corrupt-*"))) == 1


def test_wrong_length_vectors_are_ignored(tmp_path, capsys):
    cache = DiskCache(tmp_path, "m", 8)
    cache.put_many(["x"], np.ones((1, 8), dtype=np.float32))
    cache.close()
    with sqlite3.connect(cache_file(tmp_path, "m", 8)) as db:
        db.execute("UPDATE vectors SET vec = ?", (b"\x00" * 12,))
    assert DiskCache(tmp_path, "m", 8).get_many(["x"]) == [None]
    assert "wrong length" in capsys.readouterr().err


_WRITER = """
import sys, numpy as np
from memini_bench.embed.cache import DiskCache
cache = DiskCache(sys.argv[1], "m", 64)
i = 0
while True:
    cache.put_many([f"t{i}-{j}" for j in range(200)], np.random.rand(200, 64).astype(np.float32))
    i += 1
    print(i, flush=True)
"""


def test_killed_writer_leaves_a_sound_cache(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    for _ in range(3):  # let it commit a few batches, then kill it mid-write
        proc.stdout.readline()
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    cache = DiskCache(tmp_path, "m", 64)  # runs SQLite's integrity check
    vectors = cache.get_many([f"t0-{j}" for j in range(200)] + [f"t1-{j}" for j in range(200)])
    assert all(v is not None and v.shape == (64,) for v in vectors)
    assert not list(tmp_path.glob("*.corrupt-*"))


# --- a cache folder the run cannot write: one line, never "damaged" ---------------------------------------------

_OPEN = """
import sys
from memini_bench.embed.cache import DiskCache
from memini_bench.errors import BenchError
try:
    DiskCache(sys.argv[1], "m", 8)
except BenchError as exc:
    print("BENCHERROR", exc)
"""


def _in_read_only(folder: Path, args: list[str]) -> subprocess.CompletedProcess:
    """Run ``python -c ARGS`` with ``folder`` read-only: by its mode bits, or (root writes through those) in a
    private mount namespace where it is bind-mounted read-only; skips when neither is possible."""
    command = [sys.executable, "-c", *args]
    if os.geteuid() != 0:
        folder.chmod(0o555)
    else:
        if not shutil.which("unshare"):
            pytest.skip("running as root without unshare: cannot make a folder read-only")
        script = f'mount --bind "{folder}" "{folder}" && mount -o remount,ro,bind "{folder}" && exec "$@"'
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[2])
    if os.geteuid() == 0 and run.returncode != 0 and "mount" in run.stderr:
        pytest.skip(f"cannot bind-mount read-only here: {run.stderr.strip()[:100]}")
    return run


def test_read_only_cache_folder_is_one_line_not_damage(tmp_path):
    folder = tmp_path / "cache"
    DiskCache(folder, "m", 8).close()                     # an existing cache file, in a folder made read-only
    try:
        for target in (folder, folder / "sub"):            # the folder itself, and one that cannot be created
            run = _in_read_only(folder, [_OPEN, str(target)])
            assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
            assert run.stdout.startswith("BENCHERROR") and "-cache-dir" in run.stdout and run.stdout.count("\n") == 1
            assert "damaged" not in run.stdout + run.stderr
    finally:
        folder.chmod(0o755)
    assert not list(folder.glob("*.corrupt-*"))


def test_unopenable_cache_file_is_one_line_not_damage(tmp_path, capsys):
    """SQLite's "unable to open database file" (here: a folder where the file should be) is no damage."""
    cache_file(tmp_path, "m", 8).mkdir()
    with pytest.raises(BenchError, match=r"cannot use the embedding cache here \(unable to open database file\); "
                                         "pass -cache-dir with a writable folder, or -no-cache"):
        DiskCache(tmp_path, "m", 8)
    assert "damaged" not in capsys.readouterr().err and not list(tmp_path.glob("*.corrupt-*"))


def test_cli_unusable_cache_dir_exits_2_with_one_line(tmp_path, capsys, monkeypatch):
    from loopback import ScriptedServer

    from memini_bench.cli import main

    def embeddings(path, body):
        vectors = HashEmbedder(8).encode(body["input"])
        return 200, {"data": [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]}

    cache = tmp_path / "cache"
    with ScriptedServer(embeddings) as srv:
        monkeypatch.setenv("MEMINI_EMBED_BASE_URL", srv.url)
        monkeypatch.setenv("MEMINI_EMBED_DIMS", "8")
        monkeypatch.delenv("MEMINI_EMBED_MODEL", raising=False)
        cache_file(cache, f"openai:{srv.url}|text-embedding-3-small", 8).mkdir(parents=True)
        with pytest.raises(SystemExit) as exc:
            main(["-suite", "sample", "-out", str(tmp_path / "out"), "-cache-dir", str(cache)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "Traceback" not in err and "damaged" not in err
    assert err.splitlines()[-1].startswith(f"memini-bench: error: {cache}: cannot use the embedding cache here")
    assert not list((tmp_path / "out").glob("*.json")) if (tmp_path / "out").exists() else True


def test_damaged_page_met_by_a_read_is_set_aside_and_rebuilt(tmp_path, capsys):
    """Damage inside a sound-looking file (no integrity check on open) is found by the read that meets it: the
    file is set aside, the vectors count as misses and are embedded again into a fresh file."""
    texts = [f"text number {i} " * 20 for i in range(300)]
    identity = _Spy().identity
    first = TextEncoder(_Spy(), cache=DiskCache(tmp_path, identity, 8))
    want = first.documents(texts)
    first.cache.close()
    path = cache_file(tmp_path, identity, 8)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(path.read_bytes())
    page = 4096
    for start in range(2 * page, len(raw) - page, page):  # every page after the schema's: its b-tree header broken
        raw[start:start + 12] = b"\xff" * 12
    path.write_bytes(bytes(raw))
    again = _Spy()
    got = TextEncoder(again, cache=DiskCache(tmp_path, again.identity, 8)).documents(texts)
    np.testing.assert_array_equal(got, want)
    assert again.calls == len(texts)
    err = capsys.readouterr().err
    aside = [p for p in tmp_path.glob("*.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
    assert "damaged" in err and len(aside) == 1 and "Traceback" not in err
