"""The -device cuda path: where CUDA exists, MiniLM on the GPU gives the CPU's vectors (fp32 and bf16)."""

from __future__ import annotations

import numpy as np
import pytest

TEXTS = ["Where is the staging API key stored?", "We moved the staging secrets to the vault in March.",
         "Lunch is at noon on Fridays."]


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU (torch.cuda.is_available() is False here)")
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_cuda_vectors_match_cpu(precision):
    from memini_bench.embed.local import minilm

    cpu = minilm(device="cpu").encode(TEXTS)
    gpu = minilm(device="cuda", precision=precision).encode(TEXTS)
    cos = np.sum(cpu * gpu, axis=1) / (np.linalg.norm(cpu, axis=1) * np.linalg.norm(gpu, axis=1))
    assert gpu.shape == cpu.shape and float(cos.min()) > (0.9999 if precision == "fp32" else 0.999)


def test_device_flag_refuses_unknown_values():
    from memini_bench.embed.local import SentenceTransformerEmbedder
    from memini_bench.errors import BenchError

    with pytest.raises(BenchError, match="-device"):
        SentenceTransformerEmbedder("/nonexistent", device="tpu")
