"""The scale block (docs/performance.md) from a results/bench/scale.json of hand-made runs: rows and target verdicts."""

from __future__ import annotations

import json

from docgen.bench_blocks import scale_block


def _run(label: str, run: str, wall: float, peak: float, p50: float, error: str = "") -> dict:
    report = {"items": 24000, "distinct_texts": 19451, "cpu_s": wall - 1, "phases_s": {"load": 3.0,
              "ingest+recall": 20.0, "score": 0.1}, "backend_s": {"keyword_index": 9.0, "dedup_keys": 1.5,
              "embed": 4.0}, "recall_s": {"memini-hybrid": 0.1, "memini-vector": 0.05},
              "p50_ms": {"memini-hybrid": p50, "memini-vector": 0.05, "memini-keyword": 0.06}}
    return {"label": label, "run": run, "wall_s": wall, "peak_gb": peak, "report": {} if error else report,
            "error": error}


def _write(tmp_path, runs) -> None:
    (tmp_path / "bench").mkdir()
    doc = {"config": {"mode": "scale", "embedder": "hash", "seed": 0, "cpus": 2, "load_average": [1.5, 1, 1],
                      "git_commit": "abc1234"}, "runs": runs}
    (tmp_path / "bench" / "scale.json").write_text(json.dumps(doc))


def test_missing_file_names_the_command(tmp_path):
    assert "make scale" in scale_block(tmp_path)


def test_rows_and_verdicts(tmp_path):
    _write(tmp_path, [_run("S", "cold", 31.0, 1.1, 0.12), _run("S", "warm", 24.5, 1.05, 0.121),
                      _run("M", "once", 150.0, 4.7, 0.24)])
    text = scale_block(tmp_path)
    assert "| S | warm | 24000 / 19451 | 24.5 | 23.5 | 1.05 | 3.0 | 9.0 | 1.5 | 4.0 | 19.9 | 0.2 | 0.121 |" in text
    assert "| S warm wall time | 30 | 24.50 | met |" in text
    assert "| S warm hybrid p50 (ms) | 0.5 | 0.121 | met |" in text
    assert "| M peak RSS (GB) | 24 | 4.70 | met |" in text
    assert "load average 1.5 when it started; commit abc1234" in text


def test_a_slow_s_run_and_a_stopped_m_run_are_not_met(tmp_path):
    _write(tmp_path, [_run("S", "warm", 35.0, 2.5, 0.6), _run("M", "once", 90.0, 22.1, 0.0,
                                                               error="stopped above 22 GB RSS")])
    text = scale_block(tmp_path)
    assert "| S warm wall time | 30 | 35.00 | **not met** |" in text
    assert "| S warm peak RSS (GB) | 2 | 2.50 | **not met** |" in text
    assert "| M peak RSS (GB) | 24 | 22.10 | **not met** (stopped above 22 GB RSS) |" in text
