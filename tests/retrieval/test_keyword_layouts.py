"""The keyword index's two layouts and its two ways of counting terms, against the plain reference.

``NumpyBM25`` keeps per-group term-major postings (``groups``) or, when the groups would repeat the same texts
many times over (LongMemEval's haystacks share their filler sessions), one copy of every distinct text's postings
(``texts``); it counts each text's terms with the compiled ``count_terms`` where built, else with a dict lookup per
token and ``np.unique``. Every combination must give the reference's ids and floats, bit for bit
(``retrieval.reference.ReferenceBM25``, itself checked against SQLite FTS5), and the same vocabulary.
"""

from __future__ import annotations

import numpy as np
import pytest

from memini_bench.retrieval import kernels
from memini_bench.retrieval.keyword import NumpyBM25
from memini_bench.retrieval.reference import ReferenceBM25

# Stems that merge (run/runs/running), case, digits, separators of every kind, non-ASCII letters and diacritics
# (folded by the tokenizer), a non-ASCII separator, a long token.
WORDS = ["run", "Runs", "RUNNING", "runner", "caf\u00e9", "CAFE", "na\u00efve", "\u00c5ngstr\u00f6m", "x",
         "42", "4o2", "co-op", "it's", "\u0394elta", "\u2014", "tab\there", "new\nline", "a" * 70, "\u00df",
         "Stra\u00dfe", "\U0001f600", "under_score", "e\u0301", "I\u2019m", "ab\u00e9cd\u2014ef",
         "\u00e9\u00e9ab\u00e9", "\u4e2d\u6587", "x\u0301y"]
# Characters for random strings: ASCII letters, digits and separators, Latin letters with diacritics, combining
# marks, a dash, CJK, an emoji, a non-BMP letter.
ALPHABET = list("aZ9 -_'.\n") + ["\u00e9", "\u00c5", "\u0301", "\u2014", "\u4e2d", "\U0001f600", "\U00010400", "\u00df"]


def _corpus(rng: np.random.Generator, n: int) -> list[str]:
    texts = [" ".join(rng.choice(WORDS, int(rng.integers(0, 15)))) for _ in range(max(1, n // 3))]
    return [texts[int(i)] for i in rng.integers(0, len(texts), n)]  # texts recur, within and across groups


def _bits(result: tuple[np.ndarray, np.ndarray]) -> tuple[list[int], bytes]:
    ids, scores = result
    return ids.tolist(), np.ascontiguousarray(scores, dtype=np.float64).tobytes()


@pytest.mark.parametrize("seed", range(8))
def test_layouts_and_counting_equal_the_reference(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    contents = _corpus(rng, n)
    groups = [f"g{int(g)}" for g in rng.integers(0, 1 + seed % 4, n)]
    queries = [" ".join(rng.choice(WORDS + ["zzz", "running"], int(rng.integers(0, 6)))) for _ in range(20)]
    ref = ReferenceBM25(contents, groups)
    want = [_bits(ref.search(g, q, k)) for g in (*sorted(set(groups)), "missing") for q in queries
            for k in (1, 3, 10, n + 2)]
    paths = [None] if kernels.KERNELS is None else [None, kernels.KERNELS]
    for built in paths:  # how the index is built (terms counted)
        for layout in ("groups", "texts"):
            monkeypatch.setattr(kernels, "KERNELS", built)
            index = NumpyBM25(contents, groups, layout=layout)
            assert index.layout == layout
            assert set(index.vocab) == set(ref.vocab)
            for searched in paths:  # how it is searched
                monkeypatch.setattr(kernels, "KERNELS", searched)
                got = [_bits(index.search(g, q, k)) for g in (*sorted(set(groups)), "missing") for q in queries
                       for k in (1, 3, 10, n + 2)]
                assert got == want, (built is not None, layout, searched is not None)


def test_compiled_counting_gives_the_same_term_ids(monkeypatch):
    """Not only the same rankings: the same vocabulary ids, postings and document frequencies."""
    if kernels.KERNELS is None:
        pytest.skip("the C kernels are not built here (or MEMINI_BENCH_KERNELS=0)")
    rng = np.random.default_rng(5)
    contents = _corpus(rng, 250) + ["".join(rng.choice(ALPHABET, int(rng.integers(0, 40)))) for _ in range(250)]
    groups = ["a"] * 250 + ["b"] * 250
    compiled = NumpyBM25(contents, groups)
    monkeypatch.setattr(kernels, "KERNELS", None)
    pure = NumpyBM25(contents, groups)
    assert compiled.vocab == pure.vocab  # the same ids, assigned in the same order
    assert compiled.doc_freq.tobytes() == pure.doc_freq.tobytes()
    for q in ["a", "z9", "\u00e9", "\u00e9a", "\u00c5", "x", "\u4e2d", "aa zz"]:
        for g in ("a", "b"):
            assert _bits(compiled.search(g, q, 20)) == _bits(pure.search(g, q, 20))


def test_auto_layout_shares_texts_only_when_groups_repeat_them():
    distinct = [f"text number {i} about topic {i % 7}" for i in range(40)]
    assert NumpyBM25(distinct, ["g"] * 40).layout == "groups"
    repeated = distinct * 5  # every text in five groups: five copies of its postings in the groups layout
    assert NumpyBM25(repeated, [f"g{i // 40}" for i in range(200)]).layout == "texts"
    with pytest.raises(ValueError, match="layout"):
        NumpyBM25(distinct, ["g"] * 40, layout="rows")


def test_auto_layout_shares_texts_past_the_postings_limit(monkeypatch):
    """Past ``GROUPS_MAX_POSTINGS`` the texts layout is taken however little the groups share (memory that follows
    the distinct texts), with the same rankings as the groups layout."""
    from memini_bench.retrieval import keyword

    distinct = [f"text number {i} about topic {i % 7}" for i in range(40)]
    contents, groups = distinct + distinct[:10], ["g"] * 40 + ["h"] * 10
    assert NumpyBM25(contents, groups).layout == "groups"
    monkeypatch.setattr(keyword, "GROUPS_MAX_POSTINGS", 100)
    index = NumpyBM25(contents, groups)
    assert index.layout == "texts"
    plain = NumpyBM25(contents, groups, layout="groups")
    for q in ("topic 3", "text number 12", "about"):
        for g in ("g", "h"):
            assert _bits(index.search(g, q, 7)) == _bits(plain.search(g, q, 7))


def test_compiled_counting_sorts_long_texts_like_the_numpy_path(monkeypatch):
    """Texts of hundreds to thousands of distinct terms (the compiled count sorts each text's terms itself): the
    same term ids, counts and sizes as the numpy path, text after text."""
    if kernels.KERNELS is None:
        pytest.skip("the C kernels are not built here (or MEMINI_BENCH_KERNELS=0)")
    rng = np.random.default_rng(11)
    words = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), int(rng.integers(2, 9))))
             for _ in range(3000)]
    contents = [" ".join(rng.choice(words, int(rng.integers(0, 4000)))) for _ in range(40)]
    contents += [" ".join(sorted(set(words))), " ".join(sorted(set(words), reverse=True)), "a1 " * 500]
    compiled = NumpyBM25(contents, ["g"] * len(contents))._distinct_texts(contents)
    monkeypatch.setattr(kernels, "KERNELS", None)
    pure = NumpyBM25(contents, ["g"] * len(contents))._distinct_texts(contents)
    for name in ("terms", "tf", "start", "length"):
        assert getattr(compiled[0], name).tolist() == getattr(pure[0], name).tolist(), name
    assert compiled[1].tolist() == pure[1].tolist()
