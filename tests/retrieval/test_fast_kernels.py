"""Each fast kernel against its reference on adversarial inputs (ties, repeats, zeros, Unicode), exact equality."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter

import numpy as np
import pytest

from memini_bench.retrieval import composite as comp
from memini_bench.retrieval import fusion, reference
from memini_bench.retrieval.keyword import top_k, top_k_ascending, top_k_positive
from memini_bench.retrieval.vector import VectorIndex
from memini_bench.text import folded_tokens, porter_stem, tokenize
from memini_bench.text.unicode61 import _fold_token, _token_re


def _same(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> None:
    assert a[0].tolist() == b[0].tolist()
    assert a[1].tolist() == b[1].tolist()


def test_top_k_variants_match_top_k():
    rng = np.random.default_rng(3)
    for _ in range(400):
        n, k = int(rng.integers(0, 3000)), int(rng.integers(1, 120))
        scores = np.round(rng.random(n) * 4, int(rng.integers(0, 3)))  # many ties
        ref = top_k(np.arange(n), scores, k)
        _same(top_k_ascending(np.arange(n), scores, k), ref)
        positive = np.flatnonzero(scores > 0)
        _same(top_k_positive(scores, k), top_k(positive, scores[positive], k))


def test_vector_shortlist_is_exact_with_ties_and_uneven_norms(kernel_path):
    rng = np.random.default_rng(7)
    base = rng.standard_normal((300, 48)).astype(np.float32) * rng.uniform(0.1, 5, (300, 1)).astype(np.float32)
    base[100:140] = base[0]  # exact ties
    base[140:160] = base[1] + np.float32(1e-7)  # near ties, below the float32 resolution of some distances
    base[160] = 0.0
    queries = [base[0], base[1], base[160], np.zeros(48, np.float32)] + list(rng.standard_normal((40, 48)))
    # groups stored together (each group's matrix a view of the rows) and interleaved (a copy of its rows)
    for groups in (["a"] * 250 + ["b"] * 50, ["a", "a", "b", "a", "a", "a"] * 50):
        fast, ref = VectorIndex(base, groups), reference.ReferenceVectorIndex(base, groups)
        for q in queries:
            q = np.asarray(q, dtype=np.float32)
            for k in (1, 3, 10, 50, 124, 125, 249, 300):
                for group in ("a", "b", "missing"):
                    _same(fast.search(group, q, k), ref.search(group, q, k))


def test_vector_shortlist_handles_non_finite_vectors(kernel_path):
    vectors = np.ones((40, 4), dtype=np.float32)
    vectors[3] = np.inf
    q = np.zeros(4, np.float32)
    _same(VectorIndex(vectors, ["g"] * 40).search("g", q, 5),
          reference.ReferenceVectorIndex(vectors, ["g"] * 40).search("g", q, 5))


def test_fusion_matches_the_dict_version(kernel_path):
    rng = np.random.default_rng(11)
    for _ in range(1500):
        n1, n2 = rng.integers(0, 60, 2)
        a, b = rng.choice(150, n1, replace=False), rng.choice(150, n2, replace=False)
        va, vb = np.round(rng.random(n1), 2), np.round(rng.random(n2), 2)
        for alpha in (0.5, 0.3, 0.0, 1.0, -1.0):
            _same(fusion.fuse_legs((a, va), (b, vb), alpha), reference.fuse_legs((a, va), (b, vb), alpha))
        # lists that repeat ids, and three lists: the general path
        c = rng.integers(0, 20, int(rng.integers(0, 30)))
        vc = np.round(rng.random(len(c)), 1)
        lists = [(c, vc), (a, va), (c[::-1], vc)]
        _same(fusion._accumulate(lists), reference._accumulate(lists))
        _same(fusion._accumulate(lists[:2]), reference._accumulate(lists[:2]))


@pytest.mark.parametrize("short", [0, fusion.SHORT])
def test_both_fusion_paths_match_the_dict_version(monkeypatch, short, kernel_path):
    """The Python-float path (short lists) and the array path (forced with SHORT = 0), long lists, ties, equal
    scores, infinities and NaN included, against the reference dict, float for float."""
    monkeypatch.setattr(fusion, "SHORT", short)
    rng = np.random.default_rng(13)
    for case in range(600):
        n1, n2 = (int(x) for x in rng.integers(0, 200 if case % 3 == 0 else 60, 2))
        a, b = rng.choice(400, n1, replace=False), rng.choice(400, n2, replace=False)
        va, vb = np.round(rng.random(n1) * 3, 1), np.round(rng.random(n2) * 3, 1)
        if case % 7 == 0 and n1:
            va[:] = va[0]  # every score equal: min_max gives ones
        if case % 11 == 0 and n2:
            vb[int(rng.integers(0, n2))] = [np.inf, -np.inf, np.nan][case % 3]
        for alpha in (0.5, 0.25, 0.0, 1.0, -1.0):
            got, want = fusion.fuse_legs((a, va), (b, vb), alpha), reference.fuse_legs((a, va), (b, vb), alpha)
            assert got[0].tolist() == want[0].tolist()
            np.testing.assert_array_equal(got[1], want[1])  # exact, NaN equal to NaN


def test_rerank_uniform_equals_rerank_with_equal_qualities():
    rng = np.random.default_rng(5)
    for _ in range(500):
        n = int(rng.integers(0, 120))
        scores = np.round(rng.random(n) * 3, 1) * (rng.random() < 0.9)  # ties; sometimes all zero
        if rng.random() < 0.5:
            scores = np.sort(scores)[::-1].copy()  # the fused order (descending), the common case
        ids = rng.permutation(n)
        quality = np.full(n, [0.0, 0.45, 0.9, 1.7][int(rng.integers(0, 4))])
        _same(comp.rerank_uniform(ids, scores), comp.rerank(ids, scores, quality))
        weights = comp.RerankWeights(relevance=0.6, quality=0.3)
        _same(comp.rerank_uniform(ids, scores, weights), comp.rerank(ids, scores, quality, weights))


def test_dedup_key_numbers_equal_the_string_keys():
    """The key numbers made once at ingest dedup exactly as the keys themselves, on whitespace of every kind
    (Go's and the separators only Python counts), case and Unicode."""
    rng = random.Random(2)
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    pieces = spaces * 3 + list("aAbB.é İΣσς") + ["ǅ", "ß", "\u0301", "x"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(5000)]
    keys = comp.dedup_key_ids(texts)
    for _ in range(300):
        pick = rng.sample(range(len(texts)), 40)
        for k in (1, 5, 40, 0):
            want = comp.dedup([comp.normalize_content(texts[i]) for i in pick], k)
            assert comp.dedup_ids(keys[pick], k).tolist() == want


def _fnv64(text: str) -> int:
    h = 1469598103934665603
    for c in text:
        h = ((h ^ ord(c)) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def test_normalized_hashes_hash_the_dedup_key_itself():
    """The compiled hash of a text's dedup key is FNV-1a of ``normalize_content``'s code points, over every code
    point (Go's spaces and lowercase, İ and Σ included): equal keys give equal hashes."""
    from memini_bench.text import go_strings

    if go_strings.WORDS is None:
        pytest.skip("the compiled _words is not built here (or MEMINI_BENCH_KERNELS=0)")
    every = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    texts = ["".join(every[i:i + 4096]) for i in range(0, len(every), 4096)]
    texts += ["", "   ", " a\u3000B\x1cC\n", "İΣ ΣΑΣ", "\x85x\xa0", "ǅ ß"]
    got = np.frombuffer(go_strings.WORDS.normalized_hashes(texts), dtype=np.uint64).tolist()
    assert got == [_fnv64(comp.normalize_content(t)) for t in texts]


def test_dedup_key_ids_equal_the_reference_numbers(monkeypatch):
    """The hashed path numbers keys exactly as the path making every key, on texts that differ in case and
    spacing alone (their hashes collide on purpose) and on forced hash collisions between different keys."""
    from memini_bench.text import go_strings

    rng = random.Random(5)
    base = ["".join(rng.choice("abAB .\tΣσİi\u3000\x1c") for _ in range(rng.randint(0, 9))) for _ in range(400)]
    texts = [rng.choice(base) for _ in range(3000)] + [t.upper() for t in base[:50]] + \
        [" " + t.replace(" ", "  ") + "\n" for t in base[50:100]]
    want = comp.reference_key_ids(texts)
    assert comp.dedup_key_ids(texts).tolist() == want.tolist()
    if go_strings.WORDS is not None:  # every text in one of three hashes: the keys themselves decide
        class Colliding:
            fields_joined = staticmethod(go_strings.WORDS.fields_joined)

            @staticmethod
            def normalized_hashes(distinct):
                return np.array([len(comp.normalize_content(t)) % 3 for t in distinct], dtype=np.uint64).tobytes()

        monkeypatch.setattr(go_strings, "WORDS", Colliding)
        assert comp.dedup_key_ids(texts).tolist() == want.tolist()
    monkeypatch.setattr(go_strings, "WORDS", None)
    assert comp.dedup_key_ids(texts).tolist() == want.tolist()


def _texts(lme_dir, locomo_path) -> list[str]:
    out = []
    for name in ("longmemeval_oracle_sample97.json", "longmemeval_s_single.json"):
        out += [t["content"] for r in json.loads((lme_dir / name).read_text()) for s in r["haystack_sessions"]
                for t in s]
    for conv in json.loads(locomo_path.read_text()):
        out += [t["text"] for key, turns in conv["conversation"].items() if key.startswith("session_")
                and isinstance(turns, list) for t in turns]
    return out


def test_folded_tokens_are_the_tokenizer_tokens(lme_dir, locomo_path):
    rng = random.Random(0)
    alphabet = list("ab1Z _-.'\n\t") + ["é", "\u0301", "\u0300", "’", "😀", "\U0001F923", "ß", "İ", "\u00a0",
                                        "ǅ", "\u2028", "中", "\U00100000", "\ufffe", "x\u0301", "\u0301x"]
    texts = _texts(lme_dir, locomo_path)
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(20000)]
    assert sum(not t.isascii() for t in texts) > 10000
    for t in texts:
        tokens = folded_tokens(t)
        assert Counter(tokens) == Counter(_fold_token(tok) for tok in _token_re().findall(t)), t
        assert Counter(map(porter_stem, tokens)) == Counter(tokenize(t)), t


@pytest.mark.parametrize("k", [1, 10])
def test_dedup_ids_without_repeats_is_the_first_k(k):
    assert comp.dedup_ids(np.array([5, 3, 9]), k).tolist() == [0, 1, 2][:k]
    assert comp.dedup_ids(np.array([5, 3, 5, 9]), k).tolist() == [0, 1, 3][:k]
