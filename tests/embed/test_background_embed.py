"""Embedding a large batch in a forked child while the indexes are built: the same bits as in process."""

from __future__ import annotations

import os

import numpy as np
import pytest

from memini_bench.embed import background
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2 or not hasattr(os, "fork"), reason="needs fork and 2 CPUs")

TEXTS = [f"session {i}: the user asked about item {i % 97} and the assistant said {i * 7 % 13} things"
         for i in range(3000)]


def test_forked_vectors_are_the_in_process_bits(monkeypatch):
    monkeypatch.setattr(background, "MIN_CHARS", 1)
    forked = TextEncoder(HashEmbedder(64))
    forked.start_documents(TEXTS)
    assert forked._background is not None
    got = forked.documents(TEXTS)
    want = TextEncoder(HashEmbedder(64)).documents(TEXTS)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)) and forked.embedded == len(TEXTS)


class _FailsInAChild(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(16)
        self.parent = os.getpid()

    def encode(self, texts):
        if os.getpid() != self.parent:
            raise MemoryError("the child ran out")
        return super().encode(texts)


def test_a_failing_child_falls_back_to_embedding_in_process(monkeypatch):
    monkeypatch.setattr(background, "MIN_CHARS", 1)
    encoder = TextEncoder(_FailsInAChild())
    encoder.start_documents(TEXTS[:50])
    got = encoder.documents(TEXTS[:50])
    assert np.array_equal(got, TextEncoder(HashEmbedder(16)).documents(TEXTS[:50]))


def test_small_batches_and_cached_or_non_forking_embedders_stay_in_process(tmp_path):
    small = TextEncoder(HashEmbedder(16))
    small.start_documents(TEXTS[:10])  # far below MIN_CHARS
    assert small._background is None

    class _Model(HashEmbedder):
        forks = False

    assert not background.can_fork(_Model(16), ["x" * background.MIN_CHARS])
    assert background.can_fork(HashEmbedder(16), ["x" * background.MIN_CHARS])
