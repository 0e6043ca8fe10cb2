"""The deterministic local embedders: bags of FNV-1a-32-hashed words.

``hash``: memini's (``embedtest.Fake``, ``embedtest.New(dims)``). The words are Go's
``strings.Fields(strings.ToLower(text))`` (``text.go_strings.go_words``: punctuation stays attached); each adds 1 to
the float32 bucket ``FNV-1a-32(utf-8 bytes of the word) mod dims``; then, with ``norm`` the float64 sum of the
squared counts, every bucket is multiplied by ``float32(1 / sqrt(norm))`` in float32. A text without words is e0.

``fnv64``: VetoBench's (``VetoHashEmbedder``). Lowercase ASCII-alphanumeric runs of 3+ characters; each token's
hash h adds 1.0 to bucket ``h mod 64`` and 0.5 to bucket ``(h >> 8) mod 64``; then L2-normalized (all zeros when
the text has no token).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from memini_bench.text import go_strings
from memini_bench.text.go_strings import go_lower, go_words

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bits: ``h = 2166136261; for byte: h = (h ^ byte) * 16777619 mod 2^32``."""
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return h


@lru_cache(maxsize=1 << 18)
def _word_hash(word: str) -> int:
    return fnv1a_32(word.encode("utf-8"))


class _Buckets(dict):
    """word -> ``FNV-1a-32(word) mod dims``, each distinct word hashed once per embedder (emptied past
    ``LIMIT`` words, so memory stays bounded on any input)."""

    LIMIT = 1 << 20

    def __init__(self, dims: int) -> None:
        super().__init__()
        self.dims = dims

    def __missing__(self, word: str) -> int:
        if len(self) >= self.LIMIT:
            self.clear()
        value = self[word] = _word_hash(word) % self.dims
        return value


FLOAT32_COUNT_LIMIT = 1 << 24  # 2**24 + 1 rounds back to 2**24 in float32


def go_unit_rows(counts: np.ndarray) -> np.ndarray:
    """embedtest.Fake's normalisation of integer bucket counts (one row per text, none all zero: the caller puts
    e0 in an empty text's row): ``norm`` = the float64 sum of squares (exact: integer counts, sums below 2**53),
    ``inv = float32(1 / sqrt(norm))``, each bucket ``float32(count) * inv`` rounded to float32."""
    inv = (1.0 / np.sqrt(np.einsum("ij,ij->i", counts, counts).astype(np.float64))).astype(np.float32)
    return counts.astype(np.float32) * inv[:, None]


class HashEmbedder:
    """The ``hash`` embedder (default 256 dims).

    A chunk of texts is embedded at once: every word's bucket (a dict, each distinct word hashed once; where the
    compiled kernels were built, ``hash_buckets`` splits the texts and hashes their ASCII words in C), one
    ``bincount`` over ``row * dims + bucket`` for all the counts, then ``go_unit_rows``: the same floats as
    ``_encode_one``, the per-text transcription of the Go code."""

    max_chars = None

    def __init__(self, dims: int = 256) -> None:
        if dims <= 0:
            raise ValueError("dims must be positive")
        self.dims = dims
        self.identity = f"hash-fnv1a32-{dims}"
        self._buckets = _Buckets(dims)

    @property
    def gil_free(self) -> bool:
        """Whether ``encode`` runs mostly without the GIL: where the compiled word scan was built (it releases the
        GIL), a large batch may be embedded by a thread beside the caller's (``embed.background``)."""
        return go_strings.WORDS is not None

    def _encode_one(self, text: str) -> np.ndarray:
        """The per-text reference, line by line ``Fake.vector``: float32 bucket counts; ``norm`` summed in float64;
        each bucket times ``float32(1 / sqrt(norm))``; e0 for a text without words."""
        out = np.zeros(self.dims, dtype=np.float32)
        for word in go_words(text):
            out[self._buckets[word]] += np.float32(1.0)
        norm = sum(float(x) * float(x) for x in out.tolist())
        if norm == 0:
            out[0] = 1.0
            return out
        inv = np.float32(1.0 / math.sqrt(norm))
        return out * inv

    def _word_bucket(self, word: str) -> int:
        """The bucket of one word of a text (lowercased here as ``go_words`` lowercases the text)."""
        return self._buckets[go_lower(word)]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        n, dims = len(texts), self.dims
        compiled = go_strings.WORDS
        if compiled is not None:  # the same words and buckets: ASCII words hashed in C, the others here
            raw_buckets, raw_sizes = compiled.hash_buckets(list(texts), dims, self._word_bucket)
            buckets, sizes = np.frombuffer(raw_buckets, dtype=np.int64), np.frombuffer(raw_sizes, dtype=np.int64)
        else:
            word_lists = [go_words(t) for t in texts]
            sizes = np.fromiter(map(len, word_lists), dtype=np.int64, count=n)
            buckets = np.fromiter(map(self._buckets.__getitem__, itertools.chain.from_iterable(word_lists)),
                                  dtype=np.int64, count=int(sizes.sum()))
        rows = np.repeat(np.arange(n, dtype=np.int64) * dims, sizes)
        counts = np.bincount(rows + buckets, minlength=n * dims).reshape(n, dims)
        counts[sizes == 0, 0] = 1  # e0: 1 * float32(1 / sqrt(1)) is 1
        np.minimum(counts, FLOAT32_COUNT_LIMIT, out=counts)  # Go's float32 += 1 stops counting there
        return go_unit_rows(counts)


VETO_HASH_DIMS = 64
_TOKEN = re.compile(r"[a-z0-9]+")


def veto_tokens(text: str) -> list[str]:
    """Lowercase ASCII-alphanumeric runs of 3 or more characters."""
    return [t for t in _TOKEN.findall(text.lower()) if len(t) >= 3]


class VetoHashEmbedder:
    """The ``fnv64`` embedder: VetoBench's 64-dim hashed bag of tokens (see the module docstring)."""

    dims = VETO_HASH_DIMS
    max_chars = None
    identity = "vetobench-fnv1a32-64"
    allows_zero_vectors = True  # a text without a token is the zero vector by definition (module docstring)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float64)
        for row, text in enumerate(texts):
            for token in veto_tokens(text):
                h = _word_hash(token)
                out[row, h % self.dims] += 1.0
                out[row, (h >> 8) % self.dims] += 0.5
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)
