"""The one check every embedding passes before it is used or cached: embedder output (``TextEncoder``), an
endpoint's reply (``OpenAIEmbedder``) and every vector read back from the disk cache (``DiskCache``).

A vector is sound when it has the declared length ``dims``, all its values are finite after the cast to float32
(no NaN, no +-Infinity; a value beyond float32's range, e.g. 1e39, becomes Infinity and fails too) and it is not
all zeros (a zero vector has no direction, so its cosine with anything is 0/0). ``allow_zero`` lifts the last rule
for an embedder whose definition yields zero vectors (VetoBench's ``fnv64`` for a text without a token).

An endpoint's ``data[*].index`` values must be a permutation of ``0 .. n-1`` for a request of n texts
(``index_order``): a repeated, missing, out-of-range or non-integer index would silently pair texts with the wrong
vectors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from memini_bench.errors import BenchError


def sound_rows(vectors: np.ndarray, *, allow_zero: bool = False) -> np.ndarray:
    """A boolean mask over the rows of a 2-D float array: True where the row is finite (and, unless
    ``allow_zero``, not all zeros)."""
    ok = np.isfinite(vectors).all(axis=1)
    if not allow_zero:
        ok &= vectors.any(axis=1)
    return ok


def _as_float32(vectors: Sequence[object] | np.ndarray, source: str) -> np.ndarray:
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError):
        raise BenchError(f"{source}: returned non-numeric vectors; nothing from it was cached") from None


def _lengths(vectors: Sequence[object]) -> list[int]:
    return [len(v) if isinstance(v, list | tuple | np.ndarray) else -1 for v in vectors]


def validate_vectors(vectors: Sequence[object] | np.ndarray, *, count: int, dims: int, source: str,
                     allow_zero: bool = False, dims_hint: str = "") -> np.ndarray:
    """``vectors`` as a float32 array of shape (count, dims), or a one-line BenchError
    ``"<source>: <what is wrong>; ..."``. ``dims_hint`` is appended to a wrong-length message (how to set the
    expected length)."""
    if not isinstance(vectors, np.ndarray):
        if len(vectors) != count:
            raise BenchError(f"{source}: returned {len(vectors)} vectors for {count} texts; nothing from it was "
                             "cached")
        lengths = _lengths(vectors)
        if any(n != dims for n in lengths):
            got = ", ".join(str(n) for n in sorted(set(lengths)))
            raise BenchError(f"{source}: returned vectors of length {got}, expected {dims}{dims_hint}")
    array = _as_float32(vectors, source)
    if array.ndim != 2 or array.shape[0] != count:
        raise BenchError(f"{source}: returned an array of shape {array.shape} for {count} texts; nothing from it "
                         "was cached")
    if array.shape[1] != dims:
        raise BenchError(f"{source}: returned vectors of length {array.shape[1]}, expected {dims}{dims_hint}")
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise BenchError(f"{source}: {bad.size} of {count} vectors hold NaN or infinite values (first: vector "
                         f"{bad[0]}); nothing from it was cached")
    if not allow_zero:
        zero = ~array.any(axis=1)
        if zero.any():
            bad = np.flatnonzero(zero)
            raise BenchError(f"{source}: {bad.size} of {count} vectors are all zeros (first: vector {bad[0]}); "
                             "nothing from it was cached")
    return array


def index_order(indices: Sequence[object], source: str) -> list[int]:
    """The ``index`` values of a reply of n items, checked to be a permutation of 0..n-1 (returned as ints), or
    a one-line BenchError naming the first fault."""
    count = len(indices)
    for value in indices:
        if not isinstance(value, int) or isinstance(value, bool):
            raise BenchError(f"{source}: sent index {value!r}, not an integer; nothing from it was cached")
    ints = [int(v) for v in indices]
    outside = [v for v in ints if not 0 <= v < count]
    if outside:
        raise BenchError(f"{source}: sent index {outside[0]} for a request of {count} texts (expected 0..{count - 1})"
                         "; nothing from it was cached")
    repeated = [(v, n) for v, n in Counter(ints).items() if n > 1]
    if repeated:
        value, times = repeated[0]
        raise BenchError(f"{source}: sent index {value} {times} times in one reply (each of 0..{count - 1} must "
                         "appear once); nothing from it was cached")
    return ints
