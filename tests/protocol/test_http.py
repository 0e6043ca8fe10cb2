"""The HTTP adapter against loopback services in mem0's and Zep's shapes (``shapes.py``: real HTTP, an SQLite FTS5
store): the requests it sends (routes, bodies, batches, concurrency), the hits it reads back (checked against the
same FTS5 query run directly), and one line, exit 2, nothing written for every bad reply."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest

from tests.cli_run import run_cli
from tests.loopback import ScriptedServer, closed_port_url
from tests.protocol.common import ITEMS, QUESTIONS, two_groups
from tests.protocol.shapes import MemoryShape, fts_query


def _run(tmp_path, capsys, monkeypatch, url: str, system: str, *extra: str) -> tuple[int, str, str]:
    monkeypatch.setenv("MEM0_URL", url)
    monkeypatch.setenv("ZEP_URL", url)
    data = two_groups(tmp_path)
    return run_cli(["run", "-suite", "file", "-data", str(data), "-systems", system, "-k", "1,2",
                    "-out", str(tmp_path / "out"), "-per-question", str(tmp_path / "pq.jsonl"), *extra], capsys)


def _oracle() -> dict[str, list[str]]:
    """Each question's top 2 by FTS5 BM25 over its group, run directly (the store's own query, no HTTP)."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, grp UNINDEXED, content, tokenize='porter')")
    db.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, g, c) for i, c, g in ITEMS])
    return {qid: [r[0] for r in db.execute("SELECT id FROM t WHERE t MATCH ? AND grp = ? ORDER BY bm25(t), rowid "
                                           "LIMIT 2", (fts_query(q), g))]
            for qid, q, _, g in QUESTIONS}


@pytest.mark.parametrize("kind", ["mem0", "zep"])
def test_the_shipped_mapping_round_trips_through_real_http(tmp_path, capsys, monkeypatch, kind):
    shape = MemoryShape(kind)
    with ScriptedServer(shape.handler) as srv:
        code, out, err = _run(tmp_path, capsys, monkeypatch, srv.url, f"http:{kind}")
    assert code == 0, err
    assert f"| http:{kind} |" in out
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    assert {r["id"]: [ids[0] for ids in r["ranked"]] for r in rows} == _oracle()
    assert shape.writes == len(ITEMS)
    writes = [(p, b) for p, b, _ in srv.requests if p.endswith(("/memories", "/memory"))]
    if kind == "mem0":
        assert len(writes) == len(ITEMS)  # batch 1: one POST per item
        assert all(b["infer"] is False and b["user_id"] in ("g0", "g1") for _, b in writes)
        searches = [b for p, b, _ in srv.requests if p == "/search"]
        assert {b["top_k"] for b in searches} == {2}
    else:
        assert len(writes) == 2  # batch 30: one POST per session here (3 items each)
        assert sorted(p for p, _ in writes) == ["/api/v1/sessions/g0/memory", "/api/v1/sessions/g1/memory"]
    described = json.loads(next((tmp_path / "out").glob("*.json")).read_text())["config"]["systems"][0]
    assert described["protocol"] == "http" and described["transport"]["recall_calls"] == len(QUESTIONS)


def test_batches_respect_the_limit_and_concurrency_the_flag(tmp_path, capsys, monkeypatch):
    shape = MemoryShape("zep")
    with ScriptedServer(shape.handler) as srv:
        code, _, err = _run(tmp_path, capsys, monkeypatch, srv.url, "http:zep?batch=2&concurrency=2")
    assert code == 0, err
    sizes = [len(b["messages"]) for p, b, _ in srv.requests if p.endswith("/memory")]
    assert sorted(sizes) == [1, 1, 2, 2] and sum(sizes) == len(ITEMS)
    assert srv.max_in_flight <= 2
    shape = MemoryShape("mem0")
    with ScriptedServer(shape.handler) as srv:
        code, _, err = _run(tmp_path, capsys, monkeypatch, srv.url, "http:mem0")
    assert code == 0 and srv.max_in_flight == 1  # the default: one call at a time


@pytest.mark.parametrize(("fault", "said"), [
    ("garbage", "sent a reply that is not JSON: '<html>upstream timed out</html>'"),
    ("error", "answered HTTP 400"),
    ("unknown", "the server returned 'm999999', which is no item this run ingested"),
    ("leak", "the server leaks across groups"),
])
def test_a_bad_reply_is_one_line_exit_2_nothing_written(tmp_path, capsys, monkeypatch, fault, said):
    with ScriptedServer(MemoryShape("mem0", fault).handler) as srv:
        code, _, err = _run(tmp_path, capsys, monkeypatch, srv.url, "http:mem0")
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert code == 2 and len(lines) == 1 and said in lines[0], err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_silent_or_absent_service_is_one_line(tmp_path, capsys, monkeypatch):
    with ScriptedServer(MemoryShape("mem0", "slow").handler) as srv:
        code, _, err = _run(tmp_path, capsys, monkeypatch, srv.url, "http:mem0?timeout=0.5")
    assert code == 2 and "no reply within 0.5 s" in err and "?timeout=SECONDS" in err
    code, _, err = _run(tmp_path, capsys, monkeypatch, closed_port_url(), "http:mem0")
    assert code == 2 and "unreachable" in err and err.count("error") == 1


def test_scores_are_the_services_own(tmp_path, capsys, monkeypatch):
    with ScriptedServer(MemoryShape("mem0").handler) as srv:
        code, _, err = _run(tmp_path, capsys, monkeypatch, srv.url, "http:mem0")
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    scores = [s for r in rows for s in r["scores"]]
    assert scores and all(math.isfinite(s) and s > 0 for s in scores)  # -bm25 as the shape returns it
    assert all(r["scores"] == sorted(r["scores"], reverse=True) for r in rows)
