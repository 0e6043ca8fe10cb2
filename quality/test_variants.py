"""The scoreboard's variants: memini's pre-fix baseline (additive composite, gate 0.6 x evictee) and the two gate
probes (ratio 0.4; the top anchor alone), on hand-computed cases, and the default run left as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest

from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.errors import BenchError
from memini_bench.retrieval import composite
from memini_bench.retrieval.reserve import reserve_order
from memini_bench.systems import memini
from memini_bench.systems.config import HybridConfig
from quality import scoreboard as sb
from quality import variants

RESULTS = Path(__file__).resolve().parents[1] / "results"
BOARD_KEYS = ("dur_recall", "dur_mrr", "epi_recall", "epi_mrr", "p3", "p5", "spray_q", "spray_n", "inj_q", "inj_n")


def test_additive_composite_hand_computed():
    scores = np.array([1.0, 0.5, 0.2])
    quality = np.array([0.55, 0.9, 0.0])        # qhat: 0.55/0.9, 1, 0
    got = variants.additive_composite(scores, quality)
    np.testing.assert_allclose(got, [0.8 + 0.2 * 0.55 / 0.9, 0.8 * 0.5 + 0.2, 0.8 * 0.2], rtol=0, atol=1e-15)
    fixed = composite.composite(scores, quality)   # the fixed composite modulates: 0.5 * (0.8 + 0.2) = 0.5
    assert fixed[1] == pytest.approx(0.5) and got[1] == pytest.approx(0.6)
    np.testing.assert_allclose(variants.additive_composite(np.zeros(2), np.zeros(2)), [0.2, 0.2])  # qhat all 1


def test_each_variants_gate_on_a_hand_built_window():
    # window of 3 (episodic), then a durable at 0.45 of the top: the evictee (pos 2) scores 0.95.
    scores, durable = [1.0, 0.96, 0.95, 0.45], [False, False, False, True]
    bars = {"fixed": max(0.5 * 0.95, 0.4), "pre-fix": 0.6 * 0.95, "ratio0.4": max(0.4 * 0.95, 0.4),
            "anchor-only": 0.4}
    for name, bar in bars.items():
        v = variants.VARIANTS[name]
        order = reserve_order(scores, durable, 3, 1, ratio=v.ratio, top_anchor=v.top_anchor)
        assert (order[:3] == [0, 3, 1]) == (0.45 >= bar), name   # promoted below the top hit exactly when it clears
    assert variants.VARIANTS["pre-fix"].top_anchor == 0.0 and variants.VARIANTS["anchor-only"].ratio == 0.0


def test_the_hybrid_gets_the_variants_composite_and_gate(monkeypatch):
    seen = []

    def spy(scores, durable, limit, reserve, *, ratio, top_anchor):
        seen.append((ratio, top_anchor))
        return list(range(len(scores)))

    monkeypatch.setattr(memini, "reserve_order", spy)
    ds = sb.corpus.build()
    for name, backend in (("pre-fix", variants.AdditiveBackend), ("anchor-only", memini.MeminiBackend)):
        system = variants.hybrid(variants.VARIANTS[name], TextEncoder(HashEmbedder(64)),
                                 HybridConfig(semantic_reserve=2, reinforce=True), "h")
        assert type(system.backend) is backend
        system.ingest(ds.items)
        system.recall(ds.questions[0].group, ds.questions[0].query, 5, now=ds.questions[0].now)
    assert seen == [(0.6, 0.0), (0.0, 0.4)]


def test_variant_names_are_checked():
    assert [v.name for v in variants.parse("pre-fix, fixed,pre-fix")] == ["pre-fix", "fixed"]
    with pytest.raises(BenchError, match="-variants 'post': unknown"):
        variants.parse("post")
    with pytest.raises(BenchError, match="name at least one"):
        variants.parse(" , ")


def test_the_default_run_is_unchanged_and_tags_only_other_variants():
    doc, problems = sb.run(["hash"], emit=lambda text: None)
    assert not problems and "variants" not in doc["config"]
    committed = [r for r in orjson.loads((RESULTS / "quality.json").read_bytes())["results"] if r["embedder"] == "hash"]
    assert [[r[k] for k in BOARD_KEYS] for r in doc["results"]] == [[r[k] for k in BOARD_KEYS] for r in committed]
    assert all("variant" not in r for r in doc["results"])
    doc, _ = sb.run(["hash"], emit=lambda text: None, variant_list=variants.parse("fixed,pre-fix"))
    assert [r.get("variant", "fixed") for r in doc["results"]] == ["fixed"] * 3 + ["pre-fix"] * 3
    assert doc["config"]["variants"]["pre-fix"] == {"composite": "additive", "ratio": 0.6, "top_anchor": 0.0}


def test_the_committed_variant_files_fixed_rows_are_the_scoreboards():
    path = RESULTS / "quality-variants.json"
    if not path.exists():
        pytest.skip("results/quality-variants.json is not committed")
    rows = orjson.loads(path.read_bytes())["results"]
    fixed = [r for r in rows if "variant" not in r]
    committed = orjson.loads((RESULTS / "quality.json").read_bytes())["results"]
    assert [[r[k] for k in BOARD_KEYS] for r in fixed] == [[r[k] for k in BOARD_KEYS] for r in committed]
    assert {r.get("variant", "fixed") for r in rows} == set(variants.VARIANTS)
