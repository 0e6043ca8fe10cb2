"""The scoreboard's cross-encoder rows: the same top k reordered by a /rerank server on loopback."""

from __future__ import annotations

import orjson
import pytest

from quality import scoreboard as sb
from tests.loopback import ScriptedServer


def overlap_scorer(path, body):
    """A fake cross-encoder: score = query words found in the document (Cohere reply shape)."""
    words = set(body["query"].lower().split())
    return 200, {"results": [{"index": i, "relevance_score": float(len(words & set(d.lower().split())))}
                             for i, d in enumerate(body["documents"])]}


def test_rerank_rows_keep_the_set_and_reorder_it(tmp_path, capsys, monkeypatch):
    out = tmp_path / "quality.json"
    with ScriptedServer(overlap_scorer) as srv:
        monkeypatch.setenv("MEMINI_RERANK_URL", srv.url)
        monkeypatch.setenv("MEMINI_RERANK_MODEL", "fake-ce")
        with pytest.raises(SystemExit) as done:
            sb.main(["-embedders", "hash", "-out", str(out)])
        assert done.value.code == 0
        requests = list(srv.requests)
    printed = capsys.readouterr().out
    assert "## quality — hash-fnv1a32-256 · comp" in printed and "· rerank (fake-ce)" in printed
    doc = orjson.loads(out.read_bytes())
    assert doc["config"]["reranker"] == "fake-ce"
    rows = {(r["mode"], r["label"]): r for r in doc["results"]}
    assert sorted(rows) == sorted((m, c.label) for m in ("comp", "rerank") for c in sb.CONFIGS)
    assert len(requests) == 3 * 40 and requests[0][0] == "/rerank" and requests[0][1]["model"] == "fake-ce"
    moved = 0
    for config in sb.CONFIGS:
        comp, rer = rows[("comp", config.label)], rows[("rerank", config.label)]
        for a, b in zip(comp["queries"], rer["queries"], strict=True):
            assert sorted(a["returned"]) == sorted(b["returned"])  # the reranker sees the top k only
            moved += a["returned"] != b["returned"]
        assert (comp["p5"], comp["inj_n"], comp["dur_recall"]) == (rer["p5"], rer["inj_n"], rer["dur_recall"])
    assert moved > 0


def test_reranked_order_follows_the_server_scores():
    with ScriptedServer(overlap_scorer) as srv:
        from memini_bench.embed.encoder import TextEncoder
        from memini_bench.embed.factory import build_embedder
        from memini_bench.rerankers.crossencoder import HttpCrossEncoder

        system = sb.Reranked(sb.hybrid(TextEncoder(build_embedder("hash")), sb.CONFIGS[0]), HttpCrossEncoder(srv.url))
        ds = sb.corpus.build()
        system.ingest(ds.items)
        q = ds.questions[0]
        hits = system.recall(q.group, q.query, 5, now=q.now)
    words = set(q.query.lower().split())
    overlaps = [len(words & set(h.content.lower().split())) for h in hits]
    assert overlaps == sorted(overlaps, reverse=True)


def test_no_reranker_no_rerank_rows(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMINI_RERANK_URL", raising=False)
    monkeypatch.delenv("MEMINI_RERANK_MODEL", raising=False)
    doc, problems = sb.run(["hash"], emit=lambda text: None)
    assert {r["mode"] for r in doc["results"]} == {"comp"} and doc["config"]["reranker"] == ""
    assert problems == []
