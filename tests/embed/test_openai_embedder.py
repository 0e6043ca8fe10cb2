"""The OpenAI-compatible embedder against a real HTTP server on loopback (vectors from the hash embedder)."""

from __future__ import annotations

import numpy as np
import pytest
from loopback import ScriptedServer, closed_port_url

from memini_bench.embed.hashing import HashEmbedder
from memini_bench.embed.openai import OpenAIEmbedder, batches
from memini_bench.errors import BenchError

HASH = HashEmbedder(32)


def _embeddings(path, body):
    assert path == "/v1/embeddings"
    vectors = HASH.encode(body["input"])
    data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
    return 200, {"object": "list", "data": data[::-1], "model": body["model"]}  # any order: sorted by index


def _client(url, **kw):
    return OpenAIEmbedder(url + "/v1", "test-model", dims=kw.pop("dims", 32), api_key="secret", backoff=0.01, **kw)


def test_vectors_batches_and_headers():
    texts = [f"text number {i} " * (i % 4 + 1) for i in range(45)] + ["x" * 9000]
    with ScriptedServer(_embeddings) as srv:
        got = _client(srv.url).encode(texts)
    cut = [t[:8000] for t in texts]
    np.testing.assert_allclose(got, HASH.encode(cut), rtol=1e-6)
    # windows go out in parallel (MEMINI_EMBED_CONCURRENCY), so they may arrive in any order
    windows = sorted((body["input"] for _, body, _ in srv.requests), key=lambda w: cut.index(w[0]))
    assert windows == [cut[r.start:r.stop] for r in batches(cut)] and max(map(len, windows)) <= 20
    _, body, headers = srv.requests[0]
    assert body["model"] == "test-model" and body["encoding_format"] == "float" and "dimensions" not in body
    assert headers["Authorization"] == "Bearer secret"


def test_batches_respect_item_and_byte_caps():
    assert [len(r) for r in batches(["a"] * 45)] == [20, 20, 5]
    assert [len(r) for r in batches(["x" * 10_000] * 5)] == [2, 2, 1]  # 24,000-byte cap
    assert [len(r) for r in batches(["x" * 30_000, "y"])] == [1, 1]  # an oversized text still goes alone


def test_retries_server_errors_then_succeeds():
    calls = {"n": 0}

    def flaky(path, body):
        calls["n"] += 1
        return (503, {"error": "busy"}) if calls["n"] <= 2 else _embeddings(path, body)

    with ScriptedServer(flaky) as srv:
        out = _client(srv.url).encode(["hello"])
    assert out.shape == (1, 32) and calls["n"] == 3


@pytest.mark.parametrize("handler, message", [
    (lambda p, b: (500, {"error": "boom"}), r"failed after 3 tries in [0-9.]+ s \(timeout 60 s per try, "
                                            r"deadline 120 s\): HTTP 500"),
    (lambda p, b: (401, {"error": "bad key"}), "answered HTTP 401"),
    (lambda p, b: (200, b"{not json"), "not JSON"),
    (lambda p, b: (200, {"data": [{"index": 0, "embedding": [0.1] * 7}]}), "length 7, expected 32"),
    (lambda p, b: (200, {"unexpected": True}), "no data"),
])
def test_misbehaving_server_is_one_clear_error(handler, message):
    with ScriptedServer(handler) as srv, pytest.raises(BenchError, match=message) as exc:
        _client(srv.url, retries=2).encode(["hello"])
    assert srv.url in str(exc.value) and "\n" not in str(exc.value)


def test_connection_refused_names_the_url():
    url = closed_port_url()
    with pytest.raises(BenchError, match="unreachable") as exc:
        _client(url, retries=1).encode(["hello"])
    assert url in str(exc.value)


def test_cli_uses_the_endpoint_from_memini_env(tmp_path, monkeypatch, capsys):
    from memini_bench.cli import main

    with ScriptedServer(_embeddings) as srv:
        monkeypatch.setenv("MEMINI_EMBED_BASE_URL", srv.url + "/v1")
        monkeypatch.setenv("MEMINI_EMBED_MODEL", "test-model")
        monkeypatch.setenv("MEMINI_EMBED_DIMS", "32")
        monkeypatch.setenv("MEMINI_EMBED_QUERY_PREFIX", "query: ")
        with pytest.raises(SystemExit) as exc:
            main(["-suite", "sample", "-out", str(tmp_path), "-cache-dir", str(tmp_path / "cache")])
    assert exc.value.code == 0
    inputs = [t for _, body, _ in srv.requests for t in body["input"]]
    assert "query: Where is the staging API key stored?" in inputs
    doc = (tmp_path / "memini-sample-emb-openai.json").read_text()
    assert '"embed_model": "openai:' in doc and '"query_prefix": "query: "' in doc
