"""The deterministic local embedders: bags of FNV-1a-32-hashed words.

``hash``: memini's (``embedtest.New(dims)``). Lowercase the text, split on whitespace (punctuation stays attached),
add 1 to bucket ``FNV-1a-32(utf-8 bytes of the word) mod dims`` for each word, then L2-normalize (float32). An
empty text is e0.

``fnv64``: VetoBench's (``VetoHashEmbedder``). Lowercase ASCII-alphanumeric runs of 3+ characters; each token's
hash h adds 1.0 to bucket ``h mod 64`` and 0.5 to bucket ``(h >> 8) mod 64``; then L2-normalized (all zeros when
the text has no token).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

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


class HashEmbedder:
    """The ``hash`` embedder (default 256 dims)."""

    max_chars = None

    def __init__(self, dims: int = 256) -> None:
        if dims <= 0:
            raise ValueError("dims must be positive")
        self.dims = dims
        self.identity = f"hash-fnv1a32-{dims}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            words = text.lower().split()
            if not words:
                out[row, 0] = 1.0
                continue
            buckets = np.fromiter((_word_hash(w) % self.dims for w in words), dtype=np.int64, count=len(words))
            np.add.at(out[row], buckets, 1.0)
            out[row] /= np.float32(np.sqrt(np.dot(out[row], out[row])))
        return out


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
