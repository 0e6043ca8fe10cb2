"""The Ray estimate: the extrapolation formulas on hand-computed cases, and its block in docs/performance.md."""

from __future__ import annotations

import pytest

from devbench.ray_estimate import extrapolate, readme_block
from memini_bench.results.schema import bench_document
from memini_bench.results.write import write_results_file

MEASURED = {
    "embedding": {"local": {"long_texts_per_s": 5.0, "short_texts_per_s": 40.0},
                  "ray_1": {"startup_s": 9.0, "long_texts_per_s": 4.0, "short_texts_per_s": 30.0},
                  "ray_2": {"startup_s": 11.5, "long_texts_per_s": 6.0, "short_texts_per_s": 50.0},
                  "bitwise_equal": True, "model": "st:minilm|max_tokens=512"},
    "ray_call_overhead": {"sequential_ms": 1.25, "pipelined_ms": 0.5},
    "lme_m_shape": {"records": 500, "session_slots": 250000, "distinct_session_texts": 50000, "questions": 500,
                    "tokens": {"sample": 64, "mean_tokens": 511.5, "share_at_cap": 0.97, "cap": 512}},
}


def test_extrapolation_follows_the_stated_formulas():
    ext = extrapolate(MEASURED, 1000.0, (1, 8, 512))
    assert ext["dispatch_limit_texts_per_s"] == pytest.approx(64 / 0.0005)    # 128,000 texts/s
    assert ext["short_over_long_speed"] == pytest.approx(40.0 / 5.0)           # 8
    assert ext["cpu_scale_out_2_vs_1"] == pytest.approx(6.0 / 4.0)
    one, eight, many = ext["per_gpus"]
    assert one["embed_docs_s"] == pytest.approx(50000 / 1000)                  # 50 s
    assert eight["embed_docs_s"] == pytest.approx(50000 / 8000)                # 6.25 s
    assert eight["embed_queries_s"] == pytest.approx(500 / (8000 * 8))
    assert eight["total_s"] == pytest.approx(11.5 + 50000 / 8000 + 500 / 64000)
    assert many["cluster_texts_per_s"] == pytest.approx(128_000)               # the driver is the limit
    assert many["embed_docs_s"] == pytest.approx(50000 / 128_000)


def test_the_block_labels_measured_and_extrapolated_rows(tmp_path):
    assert "python cmd/ray_estimate.py" in readme_block(tmp_path)
    doc = {"config": {"mode": "ray-estimate", "cpus": 2, "gpus": 0},
           "measured": MEASURED, "inputs": {"gpu_texts_per_s": {"value": 1000.0, "source": "assumption"}},
           "extrapolated": extrapolate(MEASURED, 1000.0, (1, 8))}
    (tmp_path / "bench").mkdir()
    write_results_file(tmp_path / "bench" / "ray-estimate.json", bench_document(doc))
    text = readme_block(tmp_path)
    assert "| ray, 2 workers (measured) | 6.0 | 50.0 | 11.5 |" in text
    assert "| local (measured) | 5.0 | 40.0 | - |" in text
    assert "| 8 (extrapolated) | 6 | 0.0 | 11.5 | 18 |" in text and "| 1 (extrapolated) | 50 |" in text
    assert "50,000 distinct session texts" in text and "an assumption, not measured" in text
    assert "bit-identical" in text and "feeds at most 128,000 texts/s in pieces of 64 (extrapolated)" in text
    assert "2 workers vs 1 on our 2-core measuring machine, cores shared (measured): 1.50x" in text
