"""The scale block (docs/performance.md) from a results/bench/scale.json of hand-made runs: rows and target verdicts."""

from __future__ import annotations

import json
import os
import time

from docgen.bench_blocks import scale_block


def _run(label: str, run: str, wall: float, peak: float, p50: float, error: str = "", distinct: int = 19451,
         tree: float = 0.0) -> dict:
    report = {"items": 24000, "distinct_texts": distinct, "cpu_s": wall - 1, "phases_s": {"load": 3.0,
              "ingest+recall": 20.0, "score": 0.1}, "backend_s": {"keyword_index": 9.0, "dedup_keys": 1.5,
              "embed": 4.0}, "recall_s": {"memini-hybrid": 0.1, "memini-vector": 0.05},
              "p50_ms": {"memini-hybrid": p50, "memini-vector": 0.05, "memini-keyword": 0.06},
              "peak_gb_with_children": tree}
    return {"label": label, "run": run, "wall_s": wall, "peak_gb": peak, "report": {} if error else report,
            "error": error}


def _write(tmp_path, runs) -> None:
    (tmp_path / "bench").mkdir(exist_ok=True)
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


def test_the_less_shared_m_run_is_held_to_the_shared_rate_and_the_samples_are_shown(tmp_path):
    """M-less's memory past M's per extra distinct text against the shared file's rate (3.24 GB / 50,685 texts);
    each run's sampled tree PSS and its load average before and after."""
    m = _run("M", "once", 40.0, 1.7, 0.2, distinct=50_000, tree=2.5) | {"tree_pss_peak_gb": 2.0,
                                                                         "load_average": [1.0, 2.5]}
    runs = [m, _run("M-less", "once", 80.0, 4.0, 0.3, distinct=150_000, tree=6.0)]
    _write(tmp_path, runs)
    text = scale_block(tmp_path)
    assert "| M-less: run + child processes peak per distinct text past M's (KB) | 63.9 | 35.00 | met |" in text
    assert "M once 2.00 GB." in text and "M once 1.0 / 2.5." in text
    runs[1] = _run("M-less", "once", 80.0, 4.0, 0.3, distinct=150_000, tree=9.0)
    _write(tmp_path, runs)
    assert "| M-less: run + child processes peak per distinct text past M's (KB) | 63.9 | 65.00 | **not met** |" in \
        scale_block(tmp_path)


def test_the_tree_pss_sums_a_process_and_its_children():
    import subprocess
    import sys

    from devbench.scale import _tree_pss_gb

    alone = _tree_pss_gb(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(200 << 20); time.sleep(30)"])
    try:
        for _ in range(100):  # until the child holds its 200 MB
            if _tree_pss_gb(os.getpid()) > alone + 0.15:
                break
            time.sleep(0.1)
        assert _tree_pss_gb(os.getpid()) > alone + 0.15
    finally:
        child.kill()
        child.wait()
    assert _tree_pss_gb(-1) == 0.0
