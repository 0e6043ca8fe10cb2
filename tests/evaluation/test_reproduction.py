"""memini's published LoCoMo numbers with all-MiniLM-L6-v2 (anchors.md), within 0.5 pp. Slow on a cold
embedding cache (~2 min of MiniLM on 2 cores): ``make test-all`` runs it, ``make test`` does not."""

from __future__ import annotations

import pytest

from memini_bench.embed.factory import EmbedSettings, build_encoder
from memini_bench.evaluation.metrics import score
from memini_bench.evaluation.runner import run_system
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import memini_systems

pytestmark = pytest.mark.slow

# (R@5, R@10, MRR) reproduced independently (anchors.md), which memini's published rows match within 0.5 pp.
EXPECTED = {
    "locomo": {"memini-vector": (41.5, 52.3, 28.4), "memini-hybrid": (59.8, 69.9, 42.6),
               "memini-keyword": (58.7, 67.1, 44.8)},
    "locomo-sessions": {"memini-vector": (64.5, 79.6, 45.3), "memini-hybrid": (90.9, 96.7, 74.2),
                        "memini-keyword": (92.6, 96.8, 79.4)},
}


def _figures(system, ds):
    result = run_system(system, ds, 10)
    s5, s10 = score(result, 5), score(result, 10)
    return s5["recall_any@{k}"] * 100, s10["recall_any@{k}"] * 100, s10["mrr"] * 100


@pytest.mark.parametrize("fixture", ["locomo", "locomo_sessions"])
def test_minilm_reproduces_published_locomo(fixture, request):
    ds = request.getfixturevalue(fixture)
    encoder = build_encoder(EmbedSettings(embedder="minilm"))
    for system in memini_systems(encoder):
        got = _figures(system, ds)
        assert got == pytest.approx(EXPECTED[ds.name][system.name], abs=0.5), system.name


def test_reinforcement_quirk_lowers_turn_level_hybrid(locomo):
    """With memini's access-count side effect simulated the turn-level hybrid reads 59.2 / 69.3 / 41.5 (anchors)."""
    hybrid = memini_systems(build_encoder(EmbedSettings(embedder="minilm")), HybridConfig(reinforce=True))[0]
    assert _figures(hybrid, locomo) == pytest.approx((59.2, 69.3, 41.5), abs=0.06)
