"""The embedding disk cache: hits skip the embedder, damage is set aside and rebuilt, kills never corrupt it."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np

from memini_bench.embed.cache import DiskCache, cache_file
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder


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
