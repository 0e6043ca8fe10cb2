"""-temporal-extractor llm: the with-LLM anchor extractor through the chat client, against a loopback server.

The scripted LLM answers each prompt with what the ``extended`` extractor finds in its question on its "today", so
a run with ``llm`` must reproduce the ``extended`` run's anchors and ranks exactly (the extended extractor is
the oracle of the plumbing: prompt, parsing, caching, the re-rank table's row and the hybrid's boost)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_run import run_cli
from loopback import ScriptedServer

from memini_bench.clients.llm import ChatClient
from memini_bench.errors import BenchError
from memini_bench.results.schema import Score
from memini_bench.retrieval import temporal
from memini_bench.retrieval.temporal import Anchor, extended_anchor
from memini_bench.retrieval.temporal_llm import SYSTEM, LLMAnchorExtractor, parse_anchor

LME = Path(__file__).resolve().parents[3] / "shared" / "data" / "longmemeval" / "longmemeval_oracle_sample97.json"
_PROMPT = re.compile(r"Today: (\d{4}-\d{2}-\d{2}) \(\w+\)\nQuestion: (.*)", re.DOTALL)


def _chat(content: str) -> tuple[int, dict]:
    return 200, {"choices": [{"message": {"content": content}}]}


def oracle(path: str, body: object) -> tuple[int, dict]:
    """The extended extractor as an LLM: JSON (fenced every other time), null when it finds no time."""
    assert isinstance(body, dict) and body["messages"][0]["content"] == SYSTEM and body["temperature"] == 0.0
    today, query = _PROMPT.fullmatch(body["messages"][1]["content"]).groups()
    anchor = extended_anchor(query, datetime.fromisoformat(today).replace(tzinfo=UTC))
    reply = json.dumps({"days_ago": None} if anchor is None else
                       {"days_ago": anchor.days, "tolerance_days": anchor.tolerance})
    return _chat(f"```json\n{reply}\n```" if len(query) % 2 else reply)


def test_replies_are_read_tolerantly_and_bad_ones_are_flagged():
    assert parse_anchor('{"days_ago": 7, "tolerance_days": 3}') == (True, Anchor(7, 3))
    assert parse_anchor('```json\n{"days_ago": 30.0, "tolerance_days": 7}\n```') == (True, Anchor(30, 7))
    assert parse_anchor('Sure! {"days_ago": null}') == (True, None)
    for bad in ("about a week", '{"days_ago": 2.5, "tolerance_days": 1}', '{"days_ago": 3}', '{"days": 3}',
                '{"days_ago": true, "tolerance_days": 1}', '{"days_ago": 99999999, "tolerance_days": 1}', "{oops}"):
        assert parse_anchor(bad) == (False, None), bad


def test_one_call_per_query_and_day_and_unusable_replies_counted():
    replies = iter(['{"days_ago": 1, "tolerance_days": 1}', "no idea", '{"days_ago": null}'])
    with ScriptedServer(lambda path, body: _chat(next(replies))) as srv:
        extract = LLMAnchorExtractor(ChatClient(srv.url + "/v1", model="m"))
        now = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
        assert extract("what did I do yesterday?", now) == Anchor(1, 1)
        assert extract("what did I do yesterday?", now.replace(hour=20)) == Anchor(1, 1)   # same day: cached
        assert extract("what did I do yesterday?", None) is None                          # no today: no call
        assert extract("what did I do yesterday?", datetime(2023, 5, 9, tzinfo=UTC)) is None  # another day
        assert extract("anything else?", now) is None
        assert len(srv.requests) == 3 and srv.requests[0][0] == "/v1/chat/completions"
        user = srv.requests[0][1]["messages"][1]["content"]
        assert user == "Today: 2023-05-08 (Monday)\nQuestion: what did I do yesterday?"
    info = extract.describe()
    assert info["calls"] == 3 and info["unusable_replies"] == 1 and info["first_unusable_reply"] == "no idea"
    assert info["model"] == "m" and "key" not in json.dumps(info)
    assert "1 of 3 LLM replies" in extract.note()


def test_the_llm_extractor_needs_the_llm_settings(monkeypatch):
    monkeypatch.delenv("MEMINI_LLM_BASE_URL", raising=False)
    with pytest.raises(BenchError, match="MEMINI_LLM_BASE_URL is not set"):
        temporal.extractor("llm")


@pytest.mark.skipif(not LME.exists(), reason="needs ../shared/data/longmemeval/longmemeval_oracle_sample97.json")
def test_rerank_row_and_hybrid_boost_match_the_oracle_extractor(tmp_path, capsys, monkeypatch):
    base = ["-suite", "longmemeval", "-data", str(LME), "-shared-haystack", "-embedder", "hash", "-limit", "40",
            "-out", str(tmp_path)]
    code, _, err = run_cli([*base, "-rerank", "-temporal-extractor", "extended"], capsys)
    assert code == 0, err
    with ScriptedServer(oracle) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url + "/v1")
        monkeypatch.setenv("MEMINI_LLM_MODEL", "oracle-extended")
        code, out, err = run_cli([*base, "-rerank", "-temporal-extractor", "llm"], capsys)
        assert code == 0, err
        rerank_calls = len(srv.requests)
        code, _, err = run_cli([*base, "-k", "5", "-systems", "hybrid", "-temporal-boost", "0.4",
                             "-temporal-extractor", "llm"], capsys)
        assert code == 0, err
    assert "| temporal0.40-llm |" in out
    ext = json.loads((tmp_path / "longmemeval-shared-limit40-rerank-emb-hash-tx-extended.json").read_text())
    llm = json.loads((tmp_path / "longmemeval-shared-limit40-rerank-emb-hash-tx-llm.json").read_text())
    rows = {(r["system"], r["category"]): r for r in ext["results"]}
    assert len(rows) == len(llm["results"]) > 5
    for row in llm["results"]:
        other = rows[row["system"].replace("-llm", "-extended"), row["category"]]
        assert {k: v for k, v in row.items() if k != "system"} == {k: v for k, v in other.items() if k != "system"}
    assert llm["config"]["anchored_questions"] == ext["config"]["anchored_questions"] > 0
    assert llm["config"]["identity"]["mode_settings"]["temporal_llm_model"] == "oracle-extended"
    assert llm["config"]["temporal_llm"]["unusable_replies"] == 0
    assert rerank_calls == llm["config"]["scored_questions"] == llm["config"]["temporal_llm"]["calls"]
    # the hybrid's boost through the llm extractor equals the extended one's, question for question
    capsys.readouterr()
    code, _, err = run_cli([*base, "-k", "5", "-systems", "hybrid", "-temporal-boost", "0.4",
                         "-temporal-extractor", "extended"], capsys)
    assert code == 0, err
    a = json.loads((tmp_path / "longmemeval-shared-limit40-emb-hash-tboost0.4-tx-llm-sys-hybrid.json").read_text())
    b = json.loads((tmp_path / "longmemeval-shared-limit40-emb-hash-tboost0.4-tx-extended-sys-hybrid.json")
                   .read_text())
    keys = ("recall_any@{k}", "recall_all@{k}", "mrr", "ndcg@{k}")
    rows_a, rows_b = ([Score.from_row(r) for r in doc["results"]] for doc in (a, b))
    assert [[r[k] for k in keys] for r in rows_a] == [[r[k] for k in keys] for r in rows_b]
    assert a["config"]["systems"][0]["temporal_llm"]["model"] == "oracle-extended"
