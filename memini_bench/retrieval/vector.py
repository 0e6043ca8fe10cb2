"""The vector leg: exact top-k by L2 distance inside a group, scored ``1 / (1 + L2)`` (memini's sqlite-vec).

Distances are computed in float32 on the vectors as the embedder returned them (memini does not normalize);
ties are broken by item order. The score of item i is, exactly as ``reference.ReferenceVectorIndex`` computes it,

    e_i = einsum(d_i, d_i) in float32,  d_i = v_i - q (float32);   score_i = 1 / (1 + float64(sqrt_f32(e_i)))

Fast path, same ids and the same scores bit for bit. When the group is much larger than k, one float32
matrix-vector product ranks the group by ``h_i = ||v_i||^2 / 2 - v_i . q`` (so ``e_i ~ 2 h_i + ||q||^2``); with
``M`` the group's largest norm and ``n`` the dimension,

    |2 h_i + ||q||^2 - e_i| <= eps = 8 (n + 3) 2^-24 (M + ||q||)^2

(the rounding of ``||v||^2 / 2``, of the dot product and of the subtraction, ``2 (gamma_n + u) (M + ||q||)^2``,
plus that of the float32 sum of squares behind ``e_i``, ``gamma_(n+2) (M + ||q||)^2``: Higham's bounds for any
summation order, u = 2^-24, together below ``(3n + 5) u (M + ||q||)^2``; eps more than doubles that).
Non-finite vectors skip the shortlist. With ``h_k`` the
k-th smallest h, at least k items have ``e <= T = 2 h_k + ||q||^2 + eps``; every item in the top k, and every
item whose float32 distance rounds to the k-th's, has ``e <= T (1 + 1e-5)``, hence ``h_i <= h_k + eps + T 1e-5 / 2``.
Only those candidates get the exact formula above, then the stable top-k. The squared distances ``e_i`` always come
from numpy's einsum; where the compiled kernels are built, the rest (the float32 sqrt, ``1 / (1 + d)`` in float64,
the top k with ties by position) is one call of ``kernels.KERNELS.vector_top_k``, the same operations in C.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memini_bench.retrieval import kernels
from memini_bench.retrieval.keyword import top_k_ascending

SHORTLIST_OVER = 2  # groups of at most this many times k are scored exactly, whole
_ROUNDING = 2.0 ** -24
_PLATEAU = 1e-5  # relative slack for items whose float32 distance rounds to the k-th's


@dataclass(frozen=True, slots=True)
class _Group:
    ids: np.ndarray  # global item indices, in item order
    mat: np.ndarray  # their vectors (float32, C-contiguous)
    half_sq: np.ndarray  # ||v||^2 / 2 in float32
    max_norm: float  # the largest ||v||
    positions: np.ndarray  # 0 .. n-1 (int64): the candidates of a whole-group search


def _rows(vectors: np.ndarray, ix: list[int]) -> np.ndarray:
    """``vectors[ix]``: a view of the rows when ``ix`` is one ascending run (a group's items stored together, as
    LongMemEval's haystacks are), so the matrix is not held twice; else a copy. Either is C-contiguous float32
    holding the same values."""
    if ix and ix[-1] - ix[0] == len(ix) - 1:  # ``ix`` ascends without repeats: one run
        return vectors[ix[0]:ix[-1] + 1]
    return vectors[ix]


class VectorIndex:
    def __init__(self, vectors: np.ndarray, groups: Sequence[str]) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.dims = self.vectors.shape[1] if self.vectors.ndim == 2 else 0
        members: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(g, []).append(i)
        self._groups: dict[str, _Group] = {}
        for g, ix in members.items():
            mat = _rows(self.vectors, ix)
            sq = np.einsum("ij,ij->i", mat, mat, dtype=np.float64)
            max_norm = float(np.sqrt(sq.max())) if len(sq) else 0.0
            self._groups[g] = _Group(np.asarray(ix, dtype=np.int64), mat, (sq / 2).astype(np.float32),
                                     max_norm if np.isfinite(mat).all() else math.inf,
                                     np.arange(len(ix), dtype=np.int64))

    @staticmethod
    def _squared(mat: np.ndarray, query: np.ndarray) -> np.ndarray:
        """``||q - v||^2`` in float32 for each row of ``mat``, as the reference computes it."""
        diff = mat - query
        return np.einsum("ij,ij->i", diff, diff)

    @classmethod
    def _exact(cls, mat: np.ndarray, query: np.ndarray) -> np.ndarray:
        """``1/(1+||q - v||_2)`` for each row of ``mat``, computed exactly as the reference does."""
        dist = np.sqrt(cls._squared(mat, query)).astype(np.float64)
        dist += 1.0
        return np.divide(1.0, dist, out=dist)

    @classmethod
    def _best(cls, g: _Group, positions: np.ndarray, rows: np.ndarray, q: np.ndarray,
              k: int) -> tuple[np.ndarray, np.ndarray]:
        """The top k of the candidates at ``positions`` (ascending; their vectors ``rows``): global ids, scores."""
        compiled = kernels.KERNELS
        if compiled is None:
            pos, best = top_k_ascending(positions, cls._exact(rows, q), k)
            return g.ids[pos], best
        room = min(k, len(positions))
        out_ids, out_scores = np.empty(room, dtype=np.int64), np.empty(room)
        n = compiled.vector_top_k(cls._squared(rows, q), positions, g.ids, k, out_ids, out_scores)
        return out_ids[:n], out_scores[:n]

    def scores(self, group: str, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every item of ``group`` with its score ``1/(1+||q - v||_2)``."""
        g = self._groups.get(group)
        if g is None:
            return np.zeros(0, np.int64), np.zeros(0)
        return g.ids, self._exact(g.mat, np.asarray(query, dtype=np.float32))

    def search(self, group: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        g = self._groups.get(group)
        if g is None or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0)
        q = np.asarray(query, dtype=np.float32)
        n = len(g.ids)
        if n <= SHORTLIST_OVER * k or not math.isfinite(g.max_norm):
            return self._best(g, g.positions, g.mat, q, k)
        cand = self._shortlist(g, q, k)
        return self._best(g, cand, g.mat.take(cand, axis=0), q, k)

    def _shortlist(self, g: _Group, q: np.ndarray, k: int) -> np.ndarray:
        """Positions (ascending) of every item that can rank in the top k (bound in the module docstring)."""
        q64 = q.astype(np.float64)
        q_sq = float(q64 @ q64)
        eps = 8.0 * (self.dims + 3) * _ROUNDING * (g.max_norm + math.sqrt(q_sq)) ** 2
        h = g.half_sq - g.mat @ q
        h_k = float(np.partition(h, k - 1)[k - 1])
        bar = h_k + eps + abs(2.0 * h_k + q_sq + eps) * _PLATEAU / 2 + 1e-30
        bar32 = np.float32(bar)
        if float(bar32) < bar:  # a float32 threshold must not round below the exact one
            bar32 = np.nextafter(bar32, np.float32(np.inf))
        return np.flatnonzero(h <= bar32)
