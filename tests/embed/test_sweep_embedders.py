"""MEMINI_SWEEP_EMBEDDERS: several endpoint embedders in one run of the scoreboard and the contradiction study,
each with its own cache, against one loopback /v1/embeddings server serving two models (hash vectors of the
model's own length, so each model's vectors are known independently)."""

from __future__ import annotations

import pytest
from loopback import ScriptedServer

from memini_bench.embed import endpoints
from memini_bench.embed.cache import cache_file
from memini_bench.embed.factory import EmbedSettings, build_encoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.errors import BenchError
from memini_bench.studies import contradiction
from quality import scoreboard

MODELS = {"small-model": HashEmbedder(16), "wide-model": HashEmbedder(48)}


def _embeddings(path, body):
    vectors = MODELS[body["model"]].encode(body["input"])
    return 200, {"data": [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]}


@pytest.fixture
def server(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMINI_BENCH_CACHE", str(tmp_path / "cache"))
    with ScriptedServer(_embeddings) as srv:
        monkeypatch.setenv(endpoints.ENV, f"{srv.url}/v1|small-model|16, {srv.url}/v1|wide-model|48")
        yield srv


def test_entries_parse_and_bad_ones_are_one_line(monkeypatch):
    got = endpoints.sweep_endpoints("http://a/v1|m|8,https://b/v1|n|1024,http://a/v1|m|8")
    assert got == [endpoints.Endpoint("http://a/v1", "m", 8), endpoints.Endpoint("https://b/v1", "n", 1024)]
    assert got[0].name == "endpoint:http://a/v1|m|8"
    for bad, fragment in [("http://a|m", "baseURL|model|dims"), ("a/v1|m|8", "http:// or https://"),
                          ("http://a|m|0", "positive whole number"), ("http://a|m|x", "positive whole number"),
                          ("http://a||8", "baseURL|model|dims")]:
        with pytest.raises(BenchError, match=fragment.replace("|", r"\|")):
            endpoints.sweep_endpoints(bad)
    monkeypatch.delenv(endpoints.ENV, raising=False)
    with pytest.raises(BenchError, match="set MEMINI_SWEEP_EMBEDDERS"):
        endpoints.expand(["hash", "sweep"])
    assert endpoints.expand(["hash", "minilm", "hash"]) == ["hash", "minilm"]


def test_each_endpoint_embeds_with_its_model_and_keeps_its_own_cache(server, tmp_path):
    names = endpoints.expand(["sweep", "hash"])
    assert names == [f"endpoint:{server.url}/v1|small-model|16", f"endpoint:{server.url}/v1|wide-model|48", "hash"]
    texts = ["the auth scheme", "Postgres with pgvector"]
    for name, model in zip(names, MODELS, strict=False):
        encoder = build_encoder(EmbedSettings(embedder=name))
        vectors = encoder.documents(texts)
        assert vectors.shape == (2, MODELS[model].dims)
        reference = MODELS[model].encode(texts)
        assert ((vectors - reference) ** 2).sum() < 1e-10
        assert encoder.embedder.identity == f"openai:{server.url}/v1|{model}"
        assert cache_file(tmp_path / "cache", encoder.embedder.identity, MODELS[model].dims).exists()
    before = len(server.requests)
    again = build_encoder(EmbedSettings(embedder=names[1])).documents(texts)   # served from its cache
    assert len(server.requests) == before and again.shape == (2, 48)


def test_scoreboard_and_contradiction_run_every_endpoint(server):
    names = endpoints.expand(["sweep"])
    doc, problems = scoreboard.run(names, emit=lambda text: None)
    rows = doc["results"]
    assert [r["embedder"] for r in rows] == [names[0]] * 3 + [names[1]] * 3
    assert set(doc["config"]["embedders"].values()) == {f"openai:{server.url}/v1|small-model",
                                                        f"openai:{server.url}/v1|wide-model"}
    models = {body["model"] for path, body, _ in server.requests}
    assert models == set(MODELS)
    found = contradiction.run(names, emit=lambda text: None)
    assert list(found["gate"]) == names and list(found["stale"]) == names


def test_the_cli_lists_expand_sweep(server, tmp_path, capsys):
    _, problems = scoreboard.run(endpoints.expand(["sweep"]), emit=lambda text: None)
    out = tmp_path / "q.json"
    with pytest.raises(SystemExit) as done:
        scoreboard.main(["-embedders", "sweep", "-out", str(out)])
    assert done.value.code == (1 if problems else 0)   # 1 only for memini's sanity check, named on stderr
    assert "wide-model" in capsys.readouterr().out and out.exists()
