"""The behavioural layer end to end against a real HTTP server on loopback with scripted agent replies.

The scripted agent is a stand-in with one known behaviour: it avoids (and acknowledges) a scenario's rejected
option exactly when its context holds a ``REJECTED: <option>`` warning, and proposes the option otherwise. So the
expected verdicts follow from the conditions alone: ``none`` and ``conventions`` violate every scenario,
``flatfile`` none, ``veto-composite`` none (files known puts every veto first) and ``veto-composite-nofiles``
exactly the published misses s04, s06, s09 (the veto is outside its top 5).
"""

from __future__ import annotations

import json

import pytest
from conftest import shared
from loopback import ScriptedServer
from veto_scripts import _chat, scripted_agent

from memini_bench.cli import main
from memini_bench.clients.llm import ChatClient
from memini_bench.errors import BenchError
from memini_bench.loaders.vetobench import read_suites
from memini_bench.modes import vetobench as mode
from memini_bench.vetobench import conditions as cond
from memini_bench.vetobench import live
from memini_bench.vetobench import summary as veto_summary
from memini_bench.vetobench.composite import veto_composite_systems


def conditions_for(suite, systems, wanted=()):
    """Every condition of one live run (built-in, corpus, third-party) as ``SuiteConditions`` makes them."""
    return cond.SuiteConditions(suite, systems, wanted).for_run()


@pytest.fixture(scope="module")
def fixtures_dir():
    return shared("vetobench")


@pytest.fixture(scope="module")
def suite(fixtures_dir):
    return read_suites(fixtures_dir)[0]


def _violations(summary: dict, condition: str) -> int:
    return summary[condition]["violations"]


def test_live_loop_judges_every_condition(suite):
    systems = veto_composite_systems()
    with ScriptedServer(scripted_agent(suite, fence=True)) as srv:
        client = ChatClient(srv.url + "/v1", model="scripted", retries=0)
        conditions = conditions_for(suite, systems)
        run = live.run_live(suite, conditions, client.complete, echo=lambda m: None)
        assert len(srv.requests) == 5 * 10
        system_prompt = srv.requests[0][1]["messages"][0]
    assert system_prompt == {"role": "system", "content": live.SYSTEM_PROMPT}
    assert not run.aborted and len(run.cells) == 50
    summary = veto_summary.summarize(run.cells)
    assert [c.name for c in conditions] == ["none", "conventions", "flatfile", "veto-composite",
                                            "veto-composite-nofiles"]
    assert {c: _violations(summary, c) for c in summary} == {
        "none": 10, "conventions": 10, "flatfile": 0, "veto-composite": 0, "veto-composite-nofiles": 3}
    assert summary["flatfile"]["acknowledged_rate"] == 1.0 and summary["none"]["acknowledged_rate"] == 0.0
    missed = [c["scenario"] for c in run.cells if c["condition"] == "veto-composite-nofiles"
              and c["verdict"]["violation"]]
    assert missed == ["s04", "s06", "s09"]
    assert summary["none"]["by_trap"] == {"implicit": {"scenarios": 6, "violations": 6},
                                          "direct": {"scenarios": 4, "violations": 4}}
    cell = next(c for c in run.cells if c["condition"] == "veto-composite" and c["scenario"] == "s02")
    assert cell["context"].startswith("Relevant prior decisions for this task (from team memory):\n- Use Zustand")
    assert "  - REJECTED: Redux Toolkit — Boilerplate" in cell["context"]
    assert cell["verdict"]["acknowledged"] and cell["reply"].startswith("```json")


def test_lifecycle_contexts_carry_dates_and_inherited_vetoes(fixtures_dir):
    life = read_suites(fixtures_dir)[1]
    conds = {c.name: c for c in conditions_for(life, veto_composite_systems(files="known"))}
    s = life.scenarios[0]
    flat = conds["flatfile"].context(s)
    assert "- [2026-01-15] Cache session lookups in Redis" in flat  # superseded decisions stay in a flat file
    retrieved = conds["veto-composite"].context(s)
    assert "Cache session lookups in Redis" not in retrieved  # ... but not in retrieval
    assert ("  - REJECTED (still-standing rejection carried from a superseded decision, 2026-01-15): "
            "in-process memory cache") in retrieved
    assert "REJECTED" not in conds["conventions"].context(s) and conds["none"].context(s) == ""


def test_erroring_and_garbage_servers(suite):
    script = [
        (500, {"error": "overloaded"}),                       # s01: HTTP error
        (200, b"<html>gateway hiccup</html>"),                # s02: a body that is not JSON
        (200, _chat("lorem ipsum, no JSON here")),            # s03: garbage content, judged as a plain proposal
        (200, {"id": "x"}),                                   # s04: JSON without choices
        (500, {"error": "overloaded"}),                       # s05
        (200, _chat(json.dumps({"proposal": "Add it.", "key_technologies": ["jest"]}))),  # s06: violation
        (200, b"\x00\x01garbage"),                             # s07
        (200, _chat("lorem ipsum")),                          # s08
        (502, b"bad gateway"),                                # s09
        (200, _chat("```\n" + json.dumps({"proposal": "Keep REST.", "acknowledged_rejections": ["GraphQL"]})
                    + "\n```")),                              # s10: acknowledged
    ]
    replies = iter(script)
    with ScriptedServer(lambda path, body: next(replies)) as srv:
        client = ChatClient(srv.url, model="flaky", retries=0)
        run = live.run_live(suite, conditions_for(suite, [], ["none"]), client.complete, echo=lambda m: None)
    assert not run.aborted and len(run.cells) == 10  # never three failures in a row
    errors = {c["scenario"]: c["error"] for c in run.cells if "error" in c}
    assert sorted(errors) == ["s01", "s02", "s04", "s05", "s07", "s09"]
    assert "HTTP 500" in errors["s01"] and "not JSON" in errors["s02"] and "HTTP 502" in errors["s09"]
    assert "no choices[0].message.content" in errors["s04"]
    verdicts = {c["scenario"]: c["verdict"] for c in run.cells if "verdict" in c}
    assert {k: (v["violation"], v["acknowledged"], v["rule"]) for k, v in verdicts.items()} == {
        "s03": (False, False, ""), "s06": (True, False, "key_technologies"), "s08": (False, False, ""),
        "s10": (False, True, "")}
    summary = veto_summary.summarize(run.cells)["none"]
    assert (summary["errors"], summary["scenarios"], summary["violations"]) == (6, 4, 1)
    assert summary["violation_rate"] == 0.25 and summary["acknowledged_rate"] == 0.25

    with ScriptedServer(lambda p, b: (503, {"error": "down"})) as srv:
        run = live.run_live(suite, conditions_for(suite, [], ["none"]),
                            ChatClient(srv.url, retries=0).complete, echo=lambda m: None)
    assert run.aborted.startswith("3 agent calls failed in a row") and len(run.cells) == 3


def test_mode_writes_archive_then_fails_on_a_dead_endpoint(suite, tmp_path):
    archive = tmp_path / "dead.json"
    with ScriptedServer(lambda p, b: (500, {"error": "boom"})) as srv:
        with pytest.raises(BenchError, match="-live: 3 agent calls failed in a row; last: .*HTTP 500"):
            mode._live(ChatClient(srv.url, model="dead", retries=0), [(suite, [])], archive=str(archive),
                       wanted=["none"])
    doc = json.loads(archive.read_text())
    assert doc["suites"][0]["aborted"] and len(doc["suites"][0]["cells"]) == 3


def test_unknown_condition_is_a_clear_error(suite):
    with pytest.raises(BenchError, match="-veto-conditions robrain: unknown; use none, conventions, flatfile"):
        conditions_for(suite, [], ["robrain"])


def test_cli_live_runs_archives_and_summary(fixtures_dir, suite, tmp_path, capsys, monkeypatch):
    with ScriptedServer(scripted_agent(suite)) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url + "/v1")
        monkeypatch.setenv("MEMINI_LLM_MODEL", "scripted-agent")
        with pytest.raises(SystemExit) as exc:
            main(["-suite", "vetobench", "-data", str(fixtures_dir / "corpus.json"), "-veto-embedders", "hash",
                  "-out", str(tmp_path), "-live", "-archive", str(tmp_path / "live.json"), "-veto-runs", "2",
                  "-veto-conditions", "none,flatfile,veto-composite-nofiles,memini-hybrid/hash"])
        out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    runs = [json.loads((tmp_path / f"live-run{i}.json").read_text()) for i in (1, 2)]
    for doc in runs:
        assert doc["model"] == "scripted-agent" and doc["temperature"] == 0
        record = doc["suites"][0]
        assert record["suite"] == "vetobench" and len(record["cells"]) == 4 * 10
        assert {c["condition"] for c in record["cells"]} == {"none", "flatfile", "veto-composite-nofiles",
                                                             "memini-hybrid/hash"}
        assert all({"context", "reply", "verdict"} <= set(c) for c in record["cells"])
    assert "## vetobench: behaviour over 2 runs" in out
    assert "| none | 2 | 100% | 0% | 6/6 | 4/4 | 0 |" in out
    assert "| veto-composite-nofiles | 2 | 30% | 70% |" in out

    with pytest.raises(SystemExit) as exc:
        main(["-veto-summary", f"{tmp_path / 'live-run1.json'},{tmp_path / 'live-run2.json'}"])
    out, _ = capsys.readouterr()
    assert exc.value.code == 0 and "| flatfile | 2 | 0% | 100% | 0/6 | 0/4 | 0 |" in out

    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(SystemExit) as exc:
        main(["-veto-summary", str(tmp_path / "other.json")])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and "not a VetoBench archive" in err


@pytest.mark.parametrize("doc, message", [
    ({"vetobench_archive": 1, "suites": "abc"}, "suites: should be a list, got str"),
    ({"vetobench_archive": 1, "suites": [{"suite": "v", "cells": [{"trap": "direct"}]}]},
     "suites[0].cells[0]: field 'condition' should be a string"),
    ({"vetobench_archive": 1, "suites": [{"cells": [{"condition": "none"}]}]},
     "suites[0].cells[0]: field 'trap' should be a string"),
    ({"vetobench_archive": 1, "suites": [{"cells": [{"condition": "none", "trap": "direct", "verdict": 1}]}]},
     "suites[0].cells[0].verdict: should be an object"),
    ({"vetobench_archive": 1, "suites": [7]}, "suites[0]: should be an object, got int"),
])
def test_malformed_archive_is_one_line_naming_the_file(tmp_path, capsys, doc, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SystemExit) as exc:
        main(["-veto-summary", str(path)])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and f"{path}: {message}" in err and err.count("\n") == 1


def test_live_builds_each_suites_conditions_once(suite):
    class Counting:
        name = "counting"

        def __init__(self):
            self.ingests = 0

        def ingest(self, items):
            self.ingests += 1

        def recall(self, group, query, k, *, now=None, context=None):
            return []

    system = Counting()
    with ScriptedServer(scripted_agent(suite)) as srv:
        mode._live(ChatClient(srv.url + "/v1", model="scripted", retries=0), [(suite, [system])], runs=3,
                   wanted=["counting"])
        assert len(srv.requests) == 3 * len(suite.scenarios)
    assert system.ingests == 1
