"""The speed block of docs/performance.md: the embedding lines and the two bf16 targets, from a hand-made
results/bench/speed.json."""

from __future__ import annotations

import json

import pytest

from devbench.speed import merged
from docgen.bench_blocks import speed_block
from memini_bench.errors import BenchError


def _row(per_s: float, ratio: float, gap: float, precision: str) -> dict:
    return {"texts_per_s": per_s, "ratio": ratio, "max_1_minus_cos": gap, "precision": precision}


def _write(tmp_path, rows_short: dict, rows_long: dict, recall: dict) -> str:
    (tmp_path / "bench").mkdir()
    direct = {"texts_per_s": 100.0, "ratio": 1.0}
    sets = {"short": {"label": "LoCoMo turns", "texts": 2000, "rows": {"direct": direct, **rows_short}},
            "long": {"label": "LongMemEval sessions of 512+ tokens", "texts": 128,
                     "rows": {"direct": direct, **rows_long}}}
    doc = {"config": {"cpus": 2, "load_average": [1.0], "git_commit": "abc1234"},
           "embedding": {"rounds": 3, "sets": sets}, "precision_recall": recall}
    (tmp_path / "bench" / "speed.json").write_text(json.dumps(doc))
    return speed_block(tmp_path)


def test_openvino_bf16_is_the_target_variant_and_the_slowest_set_counts(tmp_path):
    text = _write(tmp_path,
                  {"fp32": _row(100, 1.0, 0.0, "fp32"), "bf16": _row(183, 1.83, 9.4e-5, "bf16"),
                   "openvino-bf16": _row(267, 2.32, 4.1e-5, "bf16")},
                  {"fp32": _row(7.5, 1.0, 0.0, "fp32"), "openvino-bf16": _row(20.6, 2.78, 2.3e-5, "bf16")},
                  {"fp32-torch": {"r5": 0.4147, "r10": 0.5227, "mrr": 0.2837},
                   "bf16-openvino": {"r5": 0.4157, "r10": 0.5202, "mrr": 0.2834}})
    assert "harness fp32 100.0/s = 1.00x (1 - cos 0.0e+00); bf16 183.0/s = 1.83x (1 - cos 9.4e-05)" in text
    assert "| -precision bf16 vs model.encode fp32 (x faster, at least) | 2 | 2.32 | met |" in text
    assert "| -precision bf16 LoCoMo vector R@5 vs fp32 (pp, absolute) | 0.3 | 0.10 | met |" in text
    assert "read from `openvino-bf16`" in text and "bf16-openvino R@5 41.57%" in text


def test_torch_bf16_below_2x_and_a_fallback_are_shown(tmp_path):
    text = _write(tmp_path, {"bf16": _row(183, 1.83, 0.0, "fp32")}, {"bf16": _row(14.3, 1.94, 0.0, "fp32")},
                  {"fp32-torch": {"r5": 0.4147, "r10": 0.5227, "mrr": 0.2837},
                   "bf16-torch": {"r5": 0.4107, "r10": 0.52, "mrr": 0.28}})
    assert "bf16 183.0/s = 1.83x (1 - cos 0.0e+00, fp32 in effect)" in text
    assert "| -precision bf16 vs model.encode fp32 (x faster, at least) | 2 | 1.83 | **not met** |" in text
    assert "| -precision bf16 LoCoMo vector R@5 vs fp32 (pp, absolute) | 0.3 | 0.40 | **not met** |" in text


def _overhead_block(tmp_path, **over) -> str:
    """The speed block of a speed.json holding only the overhead part ``over``."""
    (tmp_path / "bench").mkdir(exist_ok=True)
    doc = {"config": {"cpus": 2, "load_average": [1.0], "git_commit": "abc1234"},
           "overhead": {"queries": 1982, "rounds": 3, "embedder": "minilm", **over}}
    (tmp_path / "bench" / "speed.json").write_text(json.dumps(doc))
    return speed_block(tmp_path)


def test_the_harness_overhead_and_its_target(tmp_path):
    text = _overhead_block(tmp_path, harness_cpu_ms=0.03, hybrid_own_cpu_ms=0.12, harness_over_hybrid=0.25)
    assert "0.030 ms CPU against memini-hybrid's own 0.120 ms: **25.0%**" in text
    assert "| harness CPU per recall / memini-hybrid's own | 0.1 | 0.25 | **not met** |" in text
    text = _overhead_block(tmp_path, harness_cpu_ms=0.012, hybrid_own_cpu_ms=0.12, harness_over_hybrid=0.09)
    assert "| harness CPU per recall / memini-hybrid's own | 0.1 | 0.09 | met |" in text


def test_the_same_hybrid_guarded_as_a_plugin_is_shown_beside(tmp_path):
    text = _overhead_block(tmp_path, harness_cpu_ms=0.016, hybrid_own_cpu_ms=0.1, harness_over_hybrid=0.16,
                           plugin_harness_cpu_ms=0.019, plugin_hybrid_own_cpu_ms=0.105, plugin_harness_over_hybrid=0.18)
    assert "0.016 ms CPU against memini-hybrid's own 0.100 ms: **16.0%**; the same system guarded as a plugin" in text
    assert "0.019 ms against 0.105 ms, 18.0%" in text
    assert "| harness CPU per recall / memini-hybrid's own | 0.1 | 0.16 | **not met** |" in text


def test_the_figure_from_outside_has_its_own_target(tmp_path):
    text = _overhead_block(tmp_path, harness_cpu_ms=0.01, hybrid_own_cpu_ms=0.1, harness_over_hybrid=0.099,
                           harness_over_hybrid_iqr=[0.0912, 0.1043], outside_bare_cpu_ms=0.095,
                           outside_harness_over_hybrid=0.108, outside_harness_over_hybrid_iqr=[0.1, 0.125])
    outside = "| the same, from outside: run_system less a bare recall loop / that loop | 0.1 |"
    assert "**9.9%** (rounds' interquartile range 9.1-10.4%)" in text
    assert "From outside (a bare loop of the hybrid's recall" in text
    assert "**10.8%** (rounds' interquartile range 10.0-12.5%) of the bare loop's 0.095 ms" in text
    assert "| harness CPU per recall / memini-hybrid's own | 0.1 | 0.10 | met |" in text
    assert f"{outside} 0.11 | **not met** |" in text
    text = _overhead_block(tmp_path, harness_cpu_ms=0.01, hybrid_own_cpu_ms=0.1, harness_over_hybrid=0.099)
    assert "From outside" not in text and f"{outside} - | not measured |" in text


def test_merge_replaces_the_parts_that_ran_and_keeps_the_others(tmp_path):
    """``cmd/speed.py --merge`` (make speed-overhead): the overhead part and its own config replace the old one;
    the file's config and every other part stay as they were; anything but a speed results file is refused."""
    path = tmp_path / "speed.json"
    old = {"schema": "memini-bench.results", "schema_version": 3, "kind": "bench",
           "config": {"mode": "speed", "git_commit": "abc1234"}, "keyword": {"speedup_p50": 68.7},
           "overhead": {"harness_over_hybrid": 0.24}}
    path.write_text(json.dumps(old))
    doc = merged(str(path), {"overhead": {"harness_over_hybrid": 0.16}}, {"command": "python cmd/speed.py --merge"})
    assert doc == {"config": old["config"], "keyword": {"speedup_p50": 68.7},
                   "overhead": {"harness_over_hybrid": 0.16, "config": {"command": "python cmd/speed.py --merge"}}}
    path.write_text(json.dumps({**old, "config": {"mode": "scale"}}))
    with pytest.raises(BenchError, match="not a make speed results file"):
        merged(str(path), {}, {})
    with pytest.raises(BenchError, match="--merge needs the speed results file"):
        merged(str(tmp_path / "none.json"), {}, {})
