"""The compiled kernels (``retrieval/_kernels.c``): built at install, the same floats as the numpy and Python paths
they replace on adversarial inputs, and a clear error, never a crash, on arrays that break their contract."""

from __future__ import annotations

import os

import numpy as np
import pytest

from memini_bench.retrieval import fusion, kernels
from memini_bench.retrieval.keyword import NumpyBM25


def _compiled():
    if kernels.KERNELS is None:
        pytest.skip("the C kernels are not built here (or MEMINI_BENCH_KERNELS=0)")
    return kernels.KERNELS


def test_kernels_are_built():
    """``make install`` compiles them (setup.py); a machine without a C compiler runs the pure paths, and says so
    by setting MEMINI_BENCH_KERNELS=0 for this test suite."""
    if os.environ.get("MEMINI_BENCH_KERNELS") == "0":
        pytest.skip("MEMINI_BENCH_KERNELS=0: the pure paths are under test")
    assert kernels.KERNELS is not None, (
        "memini_bench/retrieval/_kernels.c was not built: reinstall with a C compiler (make install), or set "
        "MEMINI_BENCH_KERNELS=0 to run without it")


def test_the_switch_turns_them_off(monkeypatch):
    monkeypatch.setenv("MEMINI_BENCH_KERNELS", "0")
    assert kernels.load() is None


def test_a_run_without_them_says_so_once(monkeypatch, capsys):
    """A clone used without building the kernels: one line on stderr per process, none with -quiet or when the
    switch asked for the pure paths."""
    from memini_bench import progress

    monkeypatch.setattr(kernels, "KERNELS", None)
    monkeypatch.setattr(kernels, "_noted", [False])
    monkeypatch.setenv("MEMINI_BENCH_KERNELS", "1")
    monkeypatch.setitem(progress._state, "quiet", False)  # an earlier in-process run with -quiet leaves it set
    NumpyBM25(["a b"], ["g"])
    NumpyBM25(["a b"], ["g"])
    assert capsys.readouterr().err.splitlines() == [kernels.SLOW_PATH_NOTE]
    assert "pip install -e ." in kernels.SLOW_PATH_NOTE
    monkeypatch.setattr(kernels, "_noted", [False])
    monkeypatch.setenv("MEMINI_BENCH_KERNELS", "0")
    NumpyBM25(["a b"], ["g"])
    monkeypatch.setenv("MEMINI_BENCH_KERNELS", "1")
    progress.set_quiet(True)
    try:
        NumpyBM25(["a b"], ["g"])
    finally:
        progress.set_quiet(False)
    assert capsys.readouterr().err == ""


def _bits(result: tuple[np.ndarray, np.ndarray]) -> tuple[list[int], bytes]:
    ids, scores = result
    return ids.tolist(), np.ascontiguousarray(scores, dtype=np.float64).tobytes()


def test_bm25_kernel_equals_the_numpy_path(monkeypatch):
    """Tiny vocabularies (ties everywhere, repeated documents), repeated and unknown query terms, every k."""
    compiled = _compiled()
    rng = np.random.default_rng(21)
    words = ["apple", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi"]
    for case in range(60):
        n = int(rng.integers(1, 400))
        contents = [" ".join(rng.choice(words[: int(rng.integers(1, 9))], int(rng.integers(0, 12))))
                    for _ in range(n)]
        if case % 4 == 0:
            contents[n // 2:] = contents[: n - n // 2]  # whole documents repeated: equal scores
        groups = [f"g{int(g)}" for g in rng.integers(0, 1 + case % 5, n)]
        queries = [" ".join(rng.choice(words + ["zzz", "apples"], int(rng.integers(0, 7)))) for _ in range(25)]
        monkeypatch.setattr(kernels, "KERNELS", compiled)
        index = NumpyBM25(contents, groups)  # built with the kernel: no per-group term dicts, searchsorted instead
        got = {}
        for name in ("compiled", "pure"):
            monkeypatch.setattr(kernels, "KERNELS", compiled if name == "compiled" else None)
            got[name] = [_bits(index.search(g, q, k)) for g in (*set(groups), "missing") for q in queries
                         for k in (0, 1, 2, 7, 50, n, n + 3)]
        assert got["compiled"] == got["pure"]


def test_fuse_kernel_equals_the_python_floats():
    """Repeated ids within a list, signed zeros, equal scores, zero weights: the dict loop's floats and order."""
    compiled = _compiled()
    rng = np.random.default_rng(22)
    for case in range(3000):
        n1, n2 = (int(x) for x in rng.integers(0, 40, 2))
        a, b = rng.integers(0, 30, n1), rng.integers(0, 30, n2)
        va, vb = np.round(rng.random(n1) * 2, 1), np.round(rng.random(n2) * 2, 1)
        if case % 5 == 0:
            va = -va  # -0.0 among them
        if case % 7 == 0 and n2:
            vb[:] = vb[0]
        wa, wb = [(0.5, 0.5), (0.0, 1.0), (1.0, 0.0), (0.3, 0.7), (-0.5, 1.5)][case % 5]
        ids, totals = np.empty(n1 + n2, np.int64), np.empty(n1 + n2)
        n = compiled.fuse_min_max(a, va, wa, b, vb, wb, ids, totals)
        want = fusion._fuse_short([(a.tolist(), fusion._scaled_short(va.tolist(), wa)),
                                   (b.tolist(), fusion._scaled_short(vb.tolist(), wb))])
        assert ids[:n].tolist() == want[0].tolist()
        assert totals[:n].tobytes() == want[1].tobytes()


def test_fuse_kernel_declines_nan():
    compiled = _compiled()
    ids, totals = np.empty(4, np.int64), np.empty(4)
    a, b = np.array([1, 2]), np.array([2, 3])
    assert compiled.fuse_min_max(a, np.array([1.0, np.nan]), 0.5, b, np.array([1.0, 0.5]), 0.5, ids, totals) == -1
    assert compiled.fuse_min_max(a, np.array([np.inf, 1.0]), 0.5, b, np.array([1.0, 0.5]), 0.5, ids, totals) == -1


def test_kernels_refuse_arrays_outside_their_contract():
    compiled = _compiled()
    out_ids, out = np.empty(4, np.int64), np.empty(4)
    a, va = np.array([1, 2]), np.array([1.0, 0.5])
    with pytest.raises(TypeError, match="a_ids must be a C-contiguous int64"):
        compiled.fuse_min_max(a.astype(np.int32), va, 0.5, a, va, 0.5, out_ids, out)
    with pytest.raises(TypeError, match="b_scores must be a C-contiguous float64"):
        compiled.fuse_min_max(a, va, 0.5, a, va.astype(np.float32), 0.5, out_ids, out)
    with pytest.raises((TypeError, ValueError, BufferError)):
        compiled.fuse_min_max(a, np.array([1.0, 9.0, 0.5])[::2], 0.5, a, va, 0.5, out_ids, out)  # strided
    read_only = np.empty(4)
    read_only.setflags(write=False)
    with pytest.raises((TypeError, ValueError, BufferError)):
        compiled.fuse_min_max(a, va, 0.5, a, va, 0.5, out_ids, read_only)
    with pytest.raises(ValueError, match="inconsistent"):
        compiled.fuse_min_max(a, va[:1], 0.5, a, va, 0.5, out_ids, out)
    with pytest.raises(ValueError, match="inconsistent"):
        compiled.fuse_min_max(a, va, 0.5, a, va, 0.5, out_ids[:3], out)

    terms = np.array([3, 7, np.iinfo(np.int32).max], np.int32)
    spans = np.array([[0, 2], [2, 3], [3, 3]], np.int64)
    postings = np.array([[0, 1.0], [1, 2.0], [1, 0.5]])
    members = np.array([10, 11], np.int64)
    query = np.array([3, 7, 3], np.int64)
    got_ids, got = np.empty(2, np.int64), np.empty(2)
    assert compiled.bm25_top_k(terms, spans, postings, query, members, 5, got_ids, got) == 2
    assert got_ids.tolist() == [11, 10] and got.tolist() == [2.0 + 0.5 + 2.0, 2.0]  # 0.0 + 2.0 + 0.5 + 2.0
    bad_doc = postings.copy()
    bad_doc[2, 0] = 2.0  # the group has documents 0 and 1
    with pytest.raises(ValueError, match="names no document"):
        compiled.bm25_top_k(terms, spans, bad_doc, query, members, 5, got_ids, got)
    with pytest.raises(ValueError, match="outside the postings"):
        compiled.bm25_top_k(terms, np.array([[0, 2], [2, 9], [3, 3]], np.int64), postings, query, members, 5,
                            got_ids, got)
    with pytest.raises(ValueError, match="inconsistent"):
        compiled.bm25_top_k(terms, spans[:2], postings, query, members, 5, got_ids, got)
    with pytest.raises(ValueError, match="inconsistent"):
        compiled.bm25_top_k(terms, spans, postings, query, members, 5, got_ids[:1], got)
    with pytest.raises(TypeError, match="terms must be a C-contiguous int32"):
        compiled.bm25_top_k(terms.astype(np.int64), spans, postings, query, members, 5, got_ids, got)


def test_vector_kernel_scores_and_ranks_like_numpy():
    """1 / (1 + float64(sqrt_f32(e))) and a stable top k, NaN last, on random squared distances with many ties."""
    compiled = _compiled()
    rng = np.random.default_rng(23)
    for case in range(2000):
        m = int(rng.integers(0, 120))
        squared = (np.round(rng.random(m) * 4, int(rng.integers(0, 3))) ** 2).astype(np.float32)
        if case % 9 == 0 and m:
            squared[rng.integers(0, m, 3)] = [np.nan, np.inf, 0.0][case % 3]
        positions = np.sort(rng.choice(500, m, replace=False)).astype(np.int64)
        ids = rng.permutation(500).astype(np.int64) + 1000
        k = int(rng.integers(1, 130))
        dist = np.sqrt(squared).astype(np.float64)
        dist += 1.0
        scores = np.divide(1.0, dist, out=dist)
        order = np.argsort(-scores, kind="stable")[:k]  # NaN sorts last
        out_ids, out = np.empty(min(k, m), np.int64), np.empty(min(k, m))
        n = compiled.vector_top_k(squared, positions, ids, k, out_ids, out)
        assert out_ids[:n].tolist() == ids[positions[order]].tolist()
        assert out[:n].tobytes() == scores[order].tobytes()
    with pytest.raises(ValueError, match="outside the group"):
        compiled.vector_top_k(np.zeros(2, np.float32), np.array([0, 9]), np.arange(3), 2, np.empty(2, np.int64),
                              np.empty(2))
    with pytest.raises(TypeError, match="squared must be a C-contiguous float32"):
        compiled.vector_top_k(np.zeros(2), np.array([0, 1]), np.arange(3), 2, np.empty(2, np.int64), np.empty(2))
