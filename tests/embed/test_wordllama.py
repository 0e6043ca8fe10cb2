"""The ``wordllama`` built-in embedder: offline weights from the wheel, unit vectors, identity naming model + dims."""

from __future__ import annotations

import numpy as np
import pytest

from memini_bench.embed.factory import EmbedSettings, build_embedder, build_encoder
from memini_bench.errors import BenchError

pytest.importorskip("wordllama")


def test_vectors_are_unit_length_and_rank_paraphrases_first():
    e = build_embedder("wordllama")
    assert (e.dims, e.identity) == (256, "wordllama:l2_supercat-256d-l2norm")
    v = e.encode(["The cache entries expire after ten minutes.", "Cached items live for ten minutes.",
                  "The summer team offsite is in Lisbon.", ""])
    assert v.shape == (4, 256) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[3].tolist() == [1.0] + [0.0] * 255  # no token: e0, never a zero vector
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])


def test_truncated_dimensions_are_a_prefix_renormalized():
    full, small = build_embedder("wordllama"), build_embedder("wordllama:128")
    assert (small.dims, small.identity) == (128, "wordllama:l2_supercat-128d-l2norm")
    text = ["Background jobs run on NATS JetStream."]
    head = full.model.embed(text, norm=False)[0][:128]
    assert np.allclose(small.encode(text)[0], head / np.linalg.norm(head), atol=1e-5)


@pytest.mark.parametrize("name", ["wordllama:100", "wordllama:big"])
def test_bad_argument_is_one_line(name):
    with pytest.raises(BenchError, match="wordllama"):
        build_embedder(name)


def test_encoder_caches_under_the_identity(tmp_path):
    encoder = build_encoder(EmbedSettings(embedder="wordllama", cache_dir=str(tmp_path)))
    first = encoder.documents(["a", "b"])
    again = build_encoder(EmbedSettings(embedder="wordllama", cache_dir=str(tmp_path)))
    assert np.array_equal(again.documents(["a", "b"]), first) and again.embedded == 0
    assert encoder.describe()["embed_model"] == "wordllama:l2_supercat-256d-l2norm"
