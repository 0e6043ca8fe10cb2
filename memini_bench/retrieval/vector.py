"""The vector leg: exact top-k by L2 distance inside a group, scored ``1 / (1 + L2)`` (memini's sqlite-vec).

Distances are computed in float32 on the vectors as the embedder returned them (memini does not normalize);
ties are broken by item order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memini_bench.retrieval.keyword import top_k


class VectorIndex:
    def __init__(self, vectors: np.ndarray, groups: Sequence[str]) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        members: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(g, []).append(i)
        self._groups = {g: (np.asarray(ix, dtype=np.int64), self.vectors[ix]) for g, ix in members.items()}

    def scores(self, group: str, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every item of ``group`` with its score ``1/(1+||q - v||_2)``."""
        if group not in self._groups:
            return np.zeros(0, np.int64), np.zeros(0)
        ids, mat = self._groups[group]
        diff = mat - np.asarray(query, dtype=np.float32)
        dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        return ids, 1.0 / (1.0 + dist.astype(np.float64))

    def search(self, group: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        ids, scores = self.scores(group, query)
        if k <= 0 or not len(ids):
            return ids[:0], scores[:0]
        pos, best = top_k(np.arange(len(ids)), scores, k)
        return ids[pos], best
