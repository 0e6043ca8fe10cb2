"""-rrf-k: RRF's k as a hybrid setting and a sweep axis, recorded in a results identity only when set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_opts import cli_options
from cli_run import run_cli

from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.errors import BenchError
from memini_bench.modes.sweep_grid import cells, parse_grid
from memini_bench.results.identity import identity, stem
from memini_bench.retrieval import reference
from memini_bench.retrieval.fusion import fuse_legs
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import HybridSystem, MeminiBackend

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "locomo.json"


def _r(ids, scores):
    return np.array(ids, dtype=np.int64), np.array(scores, dtype=np.float64)


def test_rrf_k_hand_computed_both_paths():
    vec, kw = _r([1, 2], [0.9, 0.1]), _r([2, 3], [5.0, 1.0])
    # k = 60, 0-based ranks: 1 -> 1/60 ; 2 -> 1/61 + 1/60 ; 3 -> 1/61
    for fuse in (fuse_legs, reference.fuse_legs):
        ids, fused = fuse(vec, kw, -1, 60.0)
        assert ids.tolist() == [2, 1, 3]
        np.testing.assert_allclose(fused, [1 / 61 + 1 / 60, 1 / 60, 1 / 61], rtol=0, atol=1e-15)
    # k = 0.5 is steep: rank 0 weighs 2, rank 1 weighs 2/3; a 300-long list takes the numpy path
    long_ids = np.arange(300, dtype=np.int64)
    ids, fused = fuse_legs(_r(long_ids, np.zeros(300)), _r([], []), -1, 0.5)
    np.testing.assert_allclose(fused[:2], [2.0, 2 / 3])


def test_default_identity_is_the_committed_one_and_a_set_rrf_k_names_its_file():
    committed = json.loads(COMMITTED.read_text())["config"]["identity"]["hybrid"]
    plain = cli_options()
    assert plain.hybrid.as_dict() == committed                  # no new key: committed files keep their identity
    assert "rrf_k" not in identity(plain.settings("minilm", []), systems=[])["hybrid"]
    opts = cli_options(fusion=-1.0, rrf_k=60.0)
    got = identity(opts.settings("minilm", []), systems=[])["hybrid"]
    assert got == {**committed, "fusion": -1.0, "rrf_k": 60.0}
    assert stem(opts.settings("minilm"), "locomo") == "locomo-fusion-1-rrfk60"


def test_rrf_k_needs_rrf_fusion_and_a_positive_value():
    with pytest.raises(BenchError, match="add -fusion -1"):
        HybridConfig(rrf_k=60.0)
    with pytest.raises(BenchError, match="must be above 0"):
        HybridConfig(fusion=-1.0, rrf_k=0.0)
    with pytest.raises(BenchError, match="below the allowed minimum 0"):
        parse_grid("rrf-k=0,5")


def test_the_hybrid_uses_rrf_k_and_matches_the_reference_path():
    items = [Item(f"d{i}", text, "g") for i, text in enumerate(
        ["the cat sat on the mat", "a dog and a cat", "stocks fell sharply today", "the mat is red",
         "cats chase mice", "dogs chase cats and mats"])]
    ranked = {}
    for ref in (False, True):
        backend = MeminiBackend(TextEncoder(HashEmbedder(64)), reference=ref)
        backend.ingest(items)
        for k in (5.0, 60.0):
            system = HybridSystem(backend, HybridConfig(fusion=-1.0, rrf_k=k))
            ranked[ref, k] = system.ranked("g", "cat on a mat", 5)
            vec = backend.vector_leg("g", "cat on a mat", 50)
            kw = backend.keyword_leg("g", "cat on a mat", 50)
            expect = reference.fuse_legs(vec, kw, -1.0, k)   # uniform quality: the composite keeps the fused order
            assert ranked[ref, k][0].tolist() == expect[0].tolist()
    for k in (5.0, 60.0):
        assert ranked[False, k][0].tolist() == ranked[True, k][0].tolist()
        np.testing.assert_allclose(ranked[False, k][1], ranked[True, k][1], rtol=0, atol=1e-12)


def test_sweep_over_rrf_k(tmp_path, capsys):
    axes = parse_grid("rrf-k=5,60")
    assert cells(axes) == [(("rrf_k", 5.0),), (("rrf_k", 60.0),)]
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-k", "1,3", "-out", str(tmp_path),
                           "-fusion", "-1", "-sweep", "rrf-k=5,60", "-resamples", "200"], capsys)
    assert code == 0, err
    folder = tmp_path / "memini-sample-emb-hash-fusion-1-sweep-rrf-k"
    cell = json.loads((folder / "rrf-k60.json").read_text())
    assert cell["config"]["identity"]["hybrid"]["rrf_k"] == 60.0
    assert "rrf_k" not in json.loads((folder / "rrf-k5.json").read_text())["config"]["identity"]["hybrid"]
    code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-rrf-k", "60", "-no-write"], capsys)
    assert code == 2 and "add -fusion -1" in err and "Traceback" not in err
