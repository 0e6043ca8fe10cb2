"""memini's deterministic hash embedder and the encoder in front of embedders."""

from __future__ import annotations

import numpy as np

from memini_bench.embed import HashEmbedder, TextEncoder
from memini_bench.embed.hashing import fnv1a_32


def test_fnv1a_reference_values():
    # Published FNV-1a 32-bit test vectors.
    assert fnv1a_32(b"") == 0x811C9DC5
    assert fnv1a_32(b"a") == 0xE40C292C
    assert fnv1a_32(b"foobar") == 0xBF9CF968


def test_bag_of_hashed_words():
    e = HashEmbedder(16)
    v = e.encode(["Go go, GO!", ""])
    expected = np.zeros(16, dtype=np.float32)
    for word in ["go", "go,", "go!"]:  # lowercased, whitespace split, punctuation kept
        expected[fnv1a_32(word.encode()) % 16] += 1
    np.testing.assert_allclose(v[0], expected / np.linalg.norm(expected), rtol=1e-6)
    np.testing.assert_array_equal(v[1], np.eye(16, dtype=np.float32)[0])
    assert v.dtype == np.float32 and e.identity == "hash-fnv1a32-16"


def test_go_exact_normalisation_by_hand():
    """embedtest.Fake: float32 counts times float32(1 / sqrt(float64 norm)), not a division by a float32 norm."""
    e = HashEmbedder(1 << 20)  # wide enough that the words below have buckets of their own
    words = ["alpha", "beta", "gamma"]
    assert len({fnv1a_32(w.encode()) % e.dims for w in words}) == 3
    v = e.encode(["alpha beta gamma gamma"])[0]
    inv = np.float32(1.0 / np.sqrt(1.0 + 1.0 + 4.0))  # float64 1/sqrt(6), rounded once to float32
    for word, count in zip(words, (1, 1, 2), strict=True):
        assert v[fnv1a_32(word.encode()) % e.dims] == np.float32(count) * inv
    assert np.float32(1) * inv != np.float32(1) / np.float32(np.sqrt(np.float32(6)))  # the two ways differ here


def test_words_are_go_fields_of_go_lower():
    """Go splits at unicode.IsSpace (not at U+001C..U+001F) and lowercases İ to i and a final Σ to σ."""
    e = HashEmbedder(1 << 20)

    def bucket(word: str) -> int:
        return fnv1a_32(word.encode()) % e.dims

    v = e.encode(["a\x1cb ΟΔΟΣ İX"])[0]
    assert {int(i) for i in np.flatnonzero(v)} == {bucket("a\x1cb"), bucket("οδοσ"), bucket("ix")}


class _Counting:
    identity, dims, max_chars = "count", 2, 5

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen.extend(texts)
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_encoder_prefixes_truncates_and_embeds_each_text_once():
    inner = _Counting()
    enc = TextEncoder(inner, query_prefix="Q:", doc_prefix="D:")
    docs = enc.documents(["abcdefgh", "abcdefgh", "x"])
    assert inner.seen == ["D:abc", "D:x"]  # cut to 5 characters after the prefix, duplicates once
    assert docs[:, 0].tolist() == [5, 5, 3]
    enc.query("x")
    enc.query("x")
    assert inner.seen[-1] == "Q:x" and inner.seen.count("Q:x") == 1 and enc.embedded == 3


def test_batched_encode_is_the_per_text_formula_bit_for_bit():
    """The chunk-at-once path (one bincount, exact integer norms) against the per-text float32 formula, on real
    LoCoMo turns (when the shared data is there), odd whitespace, empty texts and a row whose squared counts pass
    2**24 (float32 no longer exact: the per-row np.dot is taken)."""
    from tests.conftest import SHARED_DATA

    texts = ["", "   ", "Go go, GO!", "tabs\tand\nnew\u00a0lines\u2003em", "x " * 5000, "ünïcödé ÜNÏCÖDÉ",
             "a\x1cb a\x1cb", "ΟΔΟΣ İstanbul", "y " * 70000 + "z"]
    locomo = SHARED_DATA / "locomo/locomo10.json"
    if locomo.exists():
        from memini_bench.loaders import load

        texts += [i.content for i in load("locomo", str(locomo)).items[:1500]]
    for dims in (7, 256):
        e = HashEmbedder(dims)
        want = np.stack([e._encode_one(t) for t in texts])
        got = e.encode(texts)
        assert got.dtype == np.float32 and np.array_equal(want.view(np.uint32), got.view(np.uint32))


def test_compiled_words_give_the_python_paths_vectors(monkeypatch):
    """``text._words.hash_buckets`` (the C split and hash) against the Python ``go_words`` path, bit for bit, on
    texts with every kind of Go space and non-space, Go's special lowercasings, and non-ASCII words."""
    import random

    from memini_bench.text import go_strings

    if go_strings.WORDS is None:
        import pytest

        pytest.skip("the compiled _words is not built here (or MEMINI_BENCH_KERNELS=0)")
    rng = random.Random(11)
    alphabet = list("aZq9-.,'") + [" ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "\x85", "\xa0", "\u1680",
                                    "\u2000", "\u200a", "\u200b", "\u2028", "\u202f", "\u3000", "\u0130", "\u03a3",
                                    "\u00c9", "\u00df", "\U0001f600", "\u4e2d"]
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 30))) for _ in range(400)] + ["", "   ", "ONE two"]
    compiled = HashEmbedder(64).encode(texts)
    monkeypatch.setattr(go_strings, "WORDS", None)
    pure = HashEmbedder(64).encode(texts)
    assert compiled.tobytes() == pure.tobytes()
    assert sum("\u0130" in t or "\u03a3" in t for t in texts) > 10


def test_compiled_fields_join_gives_the_dedup_key_of_the_python_path(monkeypatch):
    """``go_normalize`` with the C join against ``" ".join(go_fields(text))``: equal strings (and so equal hashes)."""
    import random

    from memini_bench.text import go_strings

    if go_strings.WORDS is None:
        import pytest

        pytest.skip("the compiled _words is not built here (or MEMINI_BENCH_KERNELS=0)")
    rng = random.Random(12)
    alphabet = list("aZ9-. ") + ["\t", "\n", "\x1c", "\x85", "\xa0", "\u2000", "\u3000", "\u0130", "\u03a3", "\u00e9",
                                 "\U0001f600", "\u4e2d"]
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 25))) for _ in range(600)] + ["", " ", "\u3000a\u3000"]
    compiled = [go_strings.go_normalize(t) for t in texts]
    monkeypatch.setattr(go_strings, "WORDS", None)
    pure = [go_strings.go_normalize(t) for t in texts]
    assert compiled == pure
    assert [hash(c) for c in compiled] == [hash(p) for p in pure]
