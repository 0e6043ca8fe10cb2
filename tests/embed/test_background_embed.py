"""Embedding a large batch on a thread beside the caller's while the indexes are built: the same bits as in
process, the scan really off the GIL, and a failing job falls back."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from memini_bench.embed import background
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder, VetoHashEmbedder
from memini_bench.text import go_strings

pytestmark = [pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 CPUs"),
              pytest.mark.skipif(go_strings.WORDS is None, reason="needs the compiled word scan (text/_words.c)")]

TEXTS = [f"session {i}: the user asked about item {i % 97} and the assistant said {i * 7 % 13} things, café"
         for i in range(3000)]


def test_vectors_from_the_thread_are_the_in_process_bits(monkeypatch):
    monkeypatch.setattr(background, "MIN_CHARS", 1)
    beside = TextEncoder(HashEmbedder(64))
    beside.start_documents(TEXTS)
    assert beside._background is not None
    got = beside.documents(TEXTS)
    want = TextEncoder(HashEmbedder(64)).documents(TEXTS)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)) and beside.embedded == len(TEXTS)


def test_the_word_scan_lets_another_thread_run():
    """While one thread is inside ``hash_buckets`` on a large batch, another thread's Python code keeps running:
    the other thread reads the scanning thread's CPU clock over and over, and no two of its readings are further
    apart than a small share of the whole scan (holding the GIL, the scan would be one jump: nothing runs
    meanwhile)."""
    texts = ["abcdefghijkl " * 8_000] * 800  # 83 MB of characters in 6.4 M words: a scan of some 200 ms of CPU
    embedder = HashEmbedder(16)
    started, done = threading.Event(), threading.Event()

    def scan() -> None:
        started.set()
        go_strings.WORDS.hash_buckets(texts, 16, embedder._word_bucket)
        done.set()

    scanning = threading.Thread(target=scan)
    scanning.start()
    started.wait()
    clock = time.pthread_getcpuclockid(scanning.ident)
    readings = []
    while not done.is_set():
        readings.append(time.clock_gettime(clock))
    scanning.join()
    jumps = np.diff(readings)
    assert len(readings) > 2 and jumps.max() < 0.5 * (readings[-1] - readings[0])


class _Fails(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(16)
        self.caller = threading.get_ident()

    def encode(self, texts):
        if threading.get_ident() != self.caller:
            raise MemoryError("the job ran out")
        return super().encode(texts)


def test_a_failing_job_falls_back_to_embedding_in_process(monkeypatch):
    monkeypatch.setattr(background, "MIN_CHARS", 1)
    encoder = TextEncoder(_Fails())
    encoder.start_documents(TEXTS[:50])
    assert encoder._background is not None
    got = encoder.documents(TEXTS[:50])
    assert np.array_equal(got, TextEncoder(HashEmbedder(16)).documents(TEXTS[:50]))


def test_small_batches_and_embedders_that_hold_the_gil_stay_in_process(monkeypatch):
    small = TextEncoder(HashEmbedder(16))
    small.start_documents(TEXTS[:10])  # far below MIN_CHARS
    assert small._background is None
    assert background.can_run_beside(HashEmbedder(16), ["x" * background.MIN_CHARS])
    assert not background.can_run_beside(VetoHashEmbedder(), ["x" * background.MIN_CHARS])  # pure Python
    monkeypatch.setattr(go_strings, "WORDS", None)  # no compiled scan: the Python path holds the GIL
    assert not background.can_run_beside(HashEmbedder(16), ["x" * background.MIN_CHARS])
