"""The Embedder protocol every embedding backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    ``identity`` names the model and every setting that changes its vectors (it keys the disk cache and is
    recorded in results); ``dims`` is the vector length; ``max_chars`` truncates each text before embedding
    (memini's Batched client cuts to 8000 characters; None = no cut). An embedder whose definition yields zero
    vectors (VetoBench's fnv64) sets ``allows_zero_vectors = True``; for every other one an all-zero vector is a
    fault (``embed.checks``). One whose ``encode`` runs mostly without the GIL may set ``gil_free = True``: a large
    batch is then embedded by a thread beside the caller's (``embed.background``).
    """

    identity: str
    dims: int
    max_chars: int | None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (already prefixed and truncated) into a float32 array of shape (len(texts), dims)."""
        ...
