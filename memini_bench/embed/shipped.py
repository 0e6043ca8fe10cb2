"""Vectors the driver embedded, shipped to workers that must not embed (``-sweep -executor ray``).

``ShippedVectors.of(encoder)`` snapshots a driver ``TextEncoder``: its memo (every final text -- prefix included,
after truncation -- and its checked vector), the prefixes and the embedder's identity, dims and character cut.
``.encoder()`` rebuilds, in a worker, a ``TextEncoder`` with that memo pre-filled in front of a ``MemoOnlyEmbedder``
and no disk cache: every lookup is a memo hit, so the worker's vectors are the driver's bits, and a text the driver
did not embed is a one-line error instead of a second model run or a cache write from a worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError


@dataclass(frozen=True)
class MemoOnlyEmbedder:
    """Stands in for the driver's embedder in a worker: its identity and shape, and no model."""

    identity: str
    dims: int
    max_chars: int | None
    allows_zero_vectors: bool = False

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        raise BenchError(f"embedder {self.identity}: {len(texts)} texts reached a worker without the driver's "
                         "vectors; this is a harness fault, run with -executor local and report it")


@dataclass(frozen=True)
class ShippedVectors:
    """A picklable snapshot of a driver encoder (see the module docstring)."""

    embedder: MemoOnlyEmbedder
    query_prefix: str
    doc_prefix: str
    texts: tuple[str, ...]
    vectors: np.ndarray

    @classmethod
    def of(cls, encoder: TextEncoder) -> ShippedVectors:
        e = encoder.embedder
        texts, vectors = encoder.memo_items()
        stand_in = MemoOnlyEmbedder(e.identity, e.dims, e.max_chars, bool(getattr(e, "allows_zero_vectors", False)))
        return cls(stand_in, encoder.query_prefix, encoder.doc_prefix, tuple(texts), vectors)

    def encoder(self) -> TextEncoder:
        out = TextEncoder(self.embedder, query_prefix=self.query_prefix, doc_prefix=self.doc_prefix)
        out.remember(self.texts, self.vectors)
        return out
