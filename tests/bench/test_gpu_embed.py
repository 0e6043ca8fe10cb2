"""`make gpu`'s script (cmd/devbench/gpu.py): its measurement end to end on the CPU at a tiny size, its
one-line refusals, and the README block it feeds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from docgen.bench_blocks import gpu_block

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "cmd/gpu_embed.py", *args], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}, timeout=600)


def test_a_tiny_cpu_run_writes_every_setting_and_the_recall(tmp_path):
    pytest.importorskip("sentence_transformers",
                        reason="the minilm extra is not installed: pip install 'memini-bench[minilm]'")
    out = tmp_path / "bench" / "gpu.json"
    run = _run("--device", "cpu", "--suite", "sample", "--data", "memini_bench/data/sample.json", "--lme", "",
               "--precisions", "fp32,fp16", "--batches", "2,4", "--rounds", "1", "--out", str(out))
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text())
    assert [(r["precision"], r["batch"]) for r in doc["rows"]] == [("fp32", 2), ("fp32", 4), ("fp16", 2), ("fp16", 4)]
    assert all(r["texts_per_s"] > 0 and r["set"] == "short" for r in doc["rows"])
    assert doc["rows"][0]["max_1_minus_cos"] == 0.0 and 0.0 <= doc["rows"][2]["max_1_minus_cos"] < 1e-2
    assert set(doc["recall"]) == {"fp32", "fp16"} and 0.0 < doc["recall"]["fp32"]["r5"] <= 1.0
    assert doc["config"]["device"] == "cpu" and doc["config"]["hardware"] and doc["config"]["torch"]
    block = gpu_block(tmp_path)
    speed, recall = block.split("| precision | recall_any@5 | recall_any@10 | mrr |")
    assert "| fp16 | 4 | " in speed and "`--device cpu`" in speed
    assert recall.count("\n| fp") == 2 and f"| fp32 | {doc['recall']['fp32']['r5']:.2%} |" in recall


def test_no_cuda_is_one_line_and_nothing_written(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed (the minilm extra): pip install "
                                        "'memini-bench[minilm]'")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the refusal is for machines without it")
    out = tmp_path / "gpu.json"
    run = _run("--device", "cuda", "--data", "memini_bench/data/sample.json", "--out", str(out))
    assert run.returncode == 2 and "Traceback" not in run.stderr and not out.exists()
    assert run.stderr.count("\n") == 1 and "--device cuda" in run.stderr and "sees no CUDA" in run.stderr


@pytest.mark.parametrize("flags, words", [(["--precisions", "fp8"], "--precisions 'fp8'"),
                                          (["--batches", "0,x"], "--batches '0,x'"),
                                          (["--rounds", "0"], "--rounds 0"),
                                          (["--data", "/nonexistent.json"], "/nonexistent.json: no such file")])
def test_bad_flags_are_one_line(tmp_path, flags, words):
    run = _run("--device", "cpu", "--data", "memini_bench/data/sample.json", *flags,
               "--out", str(tmp_path / "gpu.json"))
    assert run.returncode == 2 and "Traceback" not in run.stderr and words in run.stderr
    assert not (tmp_path / "gpu.json").exists()


def test_the_block_without_a_results_file_says_how_to_make_one(tmp_path):
    assert "`make gpu` on a CUDA machine writes `results/bench/gpu.json`" in gpu_block(tmp_path)
