"""``-suite vetobench -live`` end to end with every kind of condition, against a real loopback chat server that
answers both the agent and the extraction prompt (``veto_scripts``), then ``-veto-summary`` over the archives.

Expected figures, by hand from the scripts: ``none`` lacks every veto (and so violates every scenario);
``flatfile`` and ``veto-composite`` (files known) carry every veto; the stand-in third-party system forgot Express,
axios and GraphQL (s01, s04, s10); the scripted extraction mangled Prisma and lost d104 and d105 (s03, s04, s05).
The scripted agent violates exactly where the veto is absent, so violations split 0 present / all absent.
"""

from __future__ import annotations

import json

import pytest
from conftest import shared
from loopback import ScriptedServer
from veto_scripts import EXTRACTION_DROPPED, OwnMemories, chat, handler

from memini_bench.cli import main
from memini_bench.core.registry import SYSTEMS, Entry
from memini_bench.loaders.vetobench import read_suites
from memini_bench.vetobench.extract import EXTRACTION_PROMPT
from memini_bench.vetobench.live import SYSTEM_PROMPT


@pytest.fixture(scope="module")
def fixtures_dir():
    return shared("vetobench")


@pytest.fixture(scope="module")
def suite(fixtures_dir):
    return read_suites(fixtures_dir)[0]


@pytest.fixture
def registered_own(monkeypatch):
    SYSTEMS.names()
    made: list[OwnMemories] = []

    def make(ctx):
        made.append(OwnMemories())
        return made[-1]

    monkeypatch.setitem(SYSTEMS._entries, "own-memories", Entry("own-memories", make, "test stand-in for mem0",
                                                                origin="test"))
    return made


ABSENCE_ROWS = [
    "| none | 20 | 20/20 (100%) | all 10 | - | 20/20 (100%) | - |",
    "| flatfile | 20 | 0/20 (0%) | - | 0/20 (0%) | - | - |",
    "| veto-composite | 20 | 0/20 (0%) | - | 0/20 (0%) | - | - |",
    "| own-memories | 20 | 6/20 (30%) | s01, s04, s10 | 0/14 (0%) | 6/6 (100%) | 6 / 0 |",
    "| extract-e2e | 20 | 6/20 (30%) | s03, s04, s05 | 0/14 (0%) | 6/6 (100%) | 6 / 0 |",
]
INGESTION_ROWS = [
    "| own-memories | 2 | - | - | 24 | 7/10 | - | - |",
    "| extract-e2e | 2 | 22/24 | 13/20 | 22 | 7/10 | " + ", ".join(f"{d} 2/2" for d in EXTRACTION_DROPPED) + " | 0 |",
]


def test_every_condition_end_to_end_then_the_summary(fixtures_dir, suite, tmp_path, capsys, monkeypatch,
                                                     registered_own):
    conditions = "none,flatfile,veto-composite,own-memories,extract-e2e"
    with ScriptedServer(handler(suite)) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url + "/v1")
        monkeypatch.setenv("MEMINI_LLM_MODEL", "scripted-agent")
        with pytest.raises(SystemExit) as exc:
            main(["-suite", "vetobench", "-data", str(fixtures_dir / "corpus.json"), "-veto-embedders", "hash",
                  "-out", str(tmp_path), "-live", "-archive", str(tmp_path / "live.json"), "-veto-runs", "2",
                  "-veto-conditions", conditions, "-extract-model", "scripted-extractor"])
        out, err = capsys.readouterr()
        calls = [(body["model"], body["messages"][0]["content"]) for _, body, _ in srv.requests]
    assert exc.value.code == 0, err
    assert calls.count(("scripted-extractor", EXTRACTION_PROMPT)) == 2 * 24  # extraction re-rolled every run
    assert calls.count(("scripted-agent", SYSTEM_PROMPT)) == 2 * 5 * 10 and len(calls) == 2 * 24 + 100
    assert len(registered_own) == 2 and all(s.closed for s in registered_own)  # a fresh third party per run
    assert "extract-e2e extraction, vetobench: 22/24 decisions kept, 13/20 vetoes kept; dropped: Prisma" in err
    for row in ABSENCE_ROWS + INGESTION_ROWS:
        assert row in out, row

    runs = [json.loads((tmp_path / f"live-run{i}.json").read_text()) for i in (1, 2)]
    for doc in runs:
        record = doc["suites"][0]
        assert [c["name"] for c in record["conditions"]] == conditions.split(",")
        assert set(record["ingest"]) == {"own-memories", "extract-e2e"}
        assert record["ingest"]["own-memories"]["system"]["name"] == "own-memories"
        extraction = record["ingest"]["extract-e2e"]
        assert extraction["model"] == "scripted-extractor" and len(extraction["decisions"]) == 24
        own = [c for c in record["cells"] if c["condition"] == "own-memories"]
        assert all("REJECTED" not in c["context"] for c in own)  # only what the system returned
        assert own[0]["context"].startswith("Relevant memories for this task (from team memory):\n- Decision: Keep")

    with pytest.raises(SystemExit) as exc:
        main(["-veto-summary", f"{tmp_path / 'live-run1.json'},{tmp_path / 'live-run2.json'}"])
    out, _ = capsys.readouterr()
    assert exc.value.code == 0
    for row in ABSENCE_ROWS + INGESTION_ROWS:
        assert row in out, row


@pytest.mark.parametrize("argv, message", [
    (["-veto-conditions", "none", "-extract-model", "x"], "-extract-model: only the extract-e2e condition "
                                                          "extracts; add it to -veto-conditions"),
    (["-extract-model", "x"], "-extract-model: only the extract-e2e condition extracts"),
    (["-veto-conditions", "none,nobody-knows"], "-veto-conditions nobody-knows: unknown; use none, conventions, "
                                                "flatfile, extract-e2e, a system of this run"),
])
def test_condition_flags_are_refused_before_anything_runs(fixtures_dir, tmp_path, capsys, monkeypatch, argv,
                                                          message):
    monkeypatch.setenv("MEMINI_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(SystemExit) as exc:
        main(["-suite", "vetobench", "-data", str(fixtures_dir), "-veto-embedders", "hash", "-out", str(tmp_path),
              "-live", *argv])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and message in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_mem0_condition_end_to_end(fixtures_dir, suite, tmp_path, capsys, monkeypatch):
    """The real mem0 adapter as a third-party condition (skipped until memini_bench.systems.peers.mem0 lands).
    mem0's own
    LLM calls (infer=True, as MEMINI_LLM_* is set here) get an empty fact list from the script, so only the
    contract is asserted: mem0 ingests prose, and its cells hold only what mem0 returned. Written before the adapter
    existed: its knobs (embedder, infer) may need this test adjusted."""
    pytest.importorskip("memini_bench.systems.peers.mem0")  # it imports mem0 with mem0's home pointed away from ~
    agent = handler(suite)

    def answer(path, body):
        if path.endswith("/embeddings"):  # in case the adapter embeds through the same endpoint
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            width = body.get("dimensions") or 1536
            return 200, {"data": [{"index": i, "embedding": [1.0] + [0.0] * (width - 1)} for i in range(len(inputs))]}
        system = body["messages"][0]["content"]
        if system in (SYSTEM_PROMPT, EXTRACTION_PROMPT):
            return agent(path, body)
        return 200, chat(json.dumps({"facts": [], "memory": []}))

    with ScriptedServer(answer) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url + "/v1")
        with pytest.raises(SystemExit) as exc:
            main(["-suite", "vetobench", "-data", str(fixtures_dir / "corpus.json"), "-veto-embedders", "hash",
                  "-out", str(tmp_path), "-live", "-archive", str(tmp_path / "live.json"),
                  "-veto-conditions", "none,flatfile,veto-composite,mem0,extract-e2e"])
        out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    record = json.loads((tmp_path / "live.json").read_text())["suites"][0]
    mem0 = [c for c in record["cells"] if c["condition"] == "mem0"]
    assert len(mem0) == 10 and all("REJECTED" not in c["context"] for c in mem0)
    assert record["ingest"]["mem0"]["transcripts"] == 24
    assert "| mem0 | 10 |" in out
