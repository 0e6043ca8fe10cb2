"""The one vector check (embed.checks) and where it applies: embedder output, cache reads and cache writes."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from memini_bench.embed.cache import DiskCache, cache_file, text_key
from memini_bench.embed.checks import index_order, sound_rows, validate_vectors
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder, VetoHashEmbedder
from memini_bench.errors import BenchError

SRC = "embedding endpoint at http://h/v1/embeddings"


def test_sound_vectors_pass_as_float32():
    got = validate_vectors([[1, 0], [0.5, -2.0]], count=2, dims=2, source=SRC)
    assert got.dtype == np.float32 and got.tolist() == [[1.0, 0.0], [0.5, -2.0]]


@pytest.mark.parametrize(("vectors", "message"), [
    ([[1.0, float("nan")], [1.0, 1.0]], "1 of 2 vectors hold NaN or infinite values (first: vector 0)"),
    ([[1.0, 1.0], [float("inf"), 1.0]], "1 of 2 vectors hold NaN or infinite values (first: vector 1)"),
    ([[1.0, 1.0], [-float("inf"), 1.0]], "first: vector 1"),
    ([[1e39, 1.0], [1.0, 1.0]], "NaN or infinite"),                    # beyond float32: Infinity after the cast
    ([[0.0, 0.0], [1.0, 1.0]], "1 of 2 vectors are all zeros (first: vector 0)"),
    ([[-0.0, 0.0], [0.0, 0.0]], "2 of 2 vectors are all zeros"),
    ([[1.0, 1.0]], "returned 1 vectors for 2 texts"),
    ([[1.0, 1.0], [1.0]], "returned vectors of length 1, 2, expected 2"),
    ([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], "length 3, expected 2"),
    ([[1.0, "x"], [1.0, 1.0]], "non-numeric"),
    ([None, [1.0, 1.0]], "length -1, 2, expected 2"),
])
def test_each_fault_is_one_line_naming_the_source(vectors, message):
    with pytest.raises(BenchError) as exc:
        validate_vectors(vectors, count=2, dims=2, source=SRC)
    text = str(exc.value)
    assert text.startswith(SRC) and message in text and "\n" not in text


def test_array_input_is_checked_too():
    with pytest.raises(BenchError, match="length 3, expected 2"):
        validate_vectors(np.ones((2, 3)), count=2, dims=2, source=SRC)
    with pytest.raises(BenchError, match="shape"):
        validate_vectors(np.ones(2), count=2, dims=2, source=SRC)
    zeros = np.zeros((1, 2))
    assert validate_vectors(zeros, count=1, dims=2, source=SRC, allow_zero=True).tolist() == [[0.0, 0.0]]


def test_sound_rows_mask():
    m = np.array([[1, 0], [0, 0], [np.nan, 1], [np.inf, 0], [0, -1e-30]], dtype=np.float32)
    assert sound_rows(m).tolist() == [True, False, False, False, True]
    assert sound_rows(m, allow_zero=True).tolist() == [True, True, False, False, True]


@pytest.mark.parametrize(("indices", "message"), [
    ([0, 0, 0], "sent index 0 3 times"),
    ([0, 2, 2], "sent index 2 2 times"),
    ([0, 1, 3], "sent index 3 for a request of 3 texts (expected 0..2)"),
    ([-1, 0, 1], "sent index -1"),
    ([0, "1", 2], "sent index '1', not an integer"),
    ([0, 1.0, 2], "not an integer"),
    ([0, True, 2], "not an integer"),
    ([0, None, 2], "not an integer"),
])
def test_index_must_be_a_permutation(indices, message):
    with pytest.raises(BenchError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        index_order(indices, SRC)


def test_index_permutation_is_returned():
    assert index_order([2, 0, 1], SRC) == [2, 0, 1]
    assert index_order([], SRC) == []


class _Faulty(HashEmbedder):
    """The hash embedder, with row ``bad`` of each call replaced by ``value``."""

    def __init__(self, value: float, bad: int = 1) -> None:
        super().__init__(8)
        self.identity = "faulty-model"
        self.value, self.bad = value, bad

    def encode(self, texts):
        out = super().encode(texts)
        if len(out) > self.bad:
            out[self.bad] = self.value
        return out


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0])
def test_encoder_refuses_a_local_embedders_bad_vector_and_caches_nothing(tmp_path, value):
    cache = DiskCache(tmp_path, "faulty-model", 8)
    encoder = TextEncoder(_Faulty(value), cache=cache)
    with pytest.raises(BenchError, match="^embedder faulty-model: 1 of 3 vectors") as exc:
        encoder.documents(["alpha", "beta gamma", "delta"])
    assert "\n" not in str(exc.value)
    assert cache.get_many(["alpha", "beta gamma", "delta"]) == [None, None, None]
    assert encoder._memo == {}                                   # nothing half-remembered either


def test_fnv64_zero_vectors_stay_allowed():
    """VetoBench's fnv64 maps a text with no 3+ character token to the zero vector; its numbers rely on that."""
    vectors = TextEncoder(VetoHashEmbedder()).documents(["a b", "release the payments service"])
    assert not vectors[0].any() and vectors[1].any()


def _poison(directory, identity, dims, text, blob):
    with sqlite3.connect(cache_file(directory, identity, dims)) as db:
        db.execute("INSERT OR REPLACE INTO vectors(key, vec) VALUES (?, ?)", (text_key(text), blob))


@pytest.mark.parametrize("bad", [[np.nan] * 8, [1.0] * 7 + [np.inf], [0.0] * 8])
def test_a_cached_vector_failing_the_check_is_a_miss_and_heals(tmp_path, capsys, bad):
    embedder = HashEmbedder(8)
    DiskCache(tmp_path, embedder.identity, 8).close()
    _poison(tmp_path, embedder.identity, 8, "alpha beta", np.asarray(bad, dtype=np.float32).tobytes())
    cache = DiskCache(tmp_path, embedder.identity, 8)
    assert cache.get_many(["alpha beta"]) == [None] and cache.misses == 1
    assert "1 cached vectors failed the check" in capsys.readouterr().err
    got = TextEncoder(embedder, cache=cache).documents(["alpha beta"])   # reads (and warns) again, re-embeds
    np.testing.assert_array_equal(got, embedder.encode(["alpha beta"]))
    capsys.readouterr()
    healed = DiskCache(tmp_path, embedder.identity, 8).get_many(["alpha beta"])[0]
    np.testing.assert_array_equal(healed, embedder.encode(["alpha beta"])[0])
    assert "failed the check" not in capsys.readouterr().err


def test_put_many_never_writes_an_unsound_row(tmp_path):
    cache = DiskCache(tmp_path, "m", 2)
    cache.put_many(["good", "nan", "zero"], np.array([[1, 0], [np.nan, 0], [0, 0]], dtype=np.float32))
    with sqlite3.connect(cache_file(tmp_path, "m", 2)) as db:
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    assert cache.get_many(["good"])[0].tolist() == [1.0, 0.0]
    with pytest.raises(ValueError):
        cache.put_many(["a"], np.ones((1, 3), dtype=np.float32))
