"""The fast hot path against the reference path (``retrieval.reference``): every ranking and every score equal.

The oracle is the plain implementation the fast one replaced (dict fusion, full quality maths, regex dedup keys,
the whole-group difference array, per-phrase postings sums), itself checked against SQLite FTS5 and hand-computed
cases elsewhere. Compared on all LoCoMo questions at turn and session level and on a generated
LongMemEval-S-shaped slice, for memini's three systems, score fusion and RRF, and with reinforcement (access counts
change, so the quality maths runs). Each comparison runs with the compiled kernels and without them.
"""

from __future__ import annotations

from conftest import SHARED_DATA, shared

from memini_bench.core.dataset import Dataset
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.evaluation.runner import run_system
from memini_bench.loaders import load
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import HybridSystem, KeywordSystem, MeminiBackend, VectorSystem

CONFIGS = (HybridConfig(), HybridConfig(fusion=-1.0), HybridConfig(reinforce=True))


def _runs(backend: MeminiBackend, ds: Dataset, depth: int) -> list:
    out = []
    systems = [VectorSystem(backend), KeywordSystem(backend)] + [HybridSystem(backend, c) for c in CONFIGS]
    for system in systems:
        backend.access[:] = 0  # reinforcement changes them
        result = run_system(system, ds, depth)
        out.append((system.name, [(q.question.id, q.ranked_ids, q.scores) for q in result.questions]))
    return out


def _assert_identical(ds: Dataset, depth: int = 10, dims: int = 384) -> None:
    encoder = TextEncoder(HashEmbedder(dims))
    fast, ref = MeminiBackend(encoder), MeminiBackend(encoder, reference=True)
    for (name, got), (_, want) in zip(_runs(fast, ds, depth), _runs(ref, ds, depth), strict=True):
        assert len(got) == len(want) == len(ds.questions)
        for g, w in zip(got, want, strict=True):
            assert g == w, (name, g[0])  # ids and scores, exactly


def test_fast_path_identical_locomo_turns(locomo, kernel_path):
    assert len(locomo.questions) == 1982
    _assert_identical(locomo)


def test_fast_path_identical_locomo_sessions(locomo_sessions, kernel_path):
    _assert_identical(locomo_sessions)


def test_fast_path_identical_longmemeval_s_shaped(tmp_path, kernel_path):
    from devbench import synth

    shared("locomo/locomo10.json")
    path = tmp_path / "lme-s-slice.json"
    synth.write(path, synth.load_source(SHARED_DATA), synth.Shape(records=12))
    ds = load("longmemeval", str(path))
    assert len(ds.items) == 12 * 48
    _assert_identical(ds, depth=10, dims=256)  # vector depth 10 < 48 sessions: the shortlist runs
    _assert_identical(ds, depth=50, dims=256)  # pool 50 >= a haystack: the whole-group path
