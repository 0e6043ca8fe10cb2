"""extract-e2e offline: the extraction prompt's replies parsed defensively, the per-decision records (veto kept /
dropped / decision lost) against hand-computed figures, and the condition through a real loopback chat server."""

from __future__ import annotations

import json

import pytest
from conftest import shared
from loopback import ScriptedServer
from veto_scripts import EXTRACTION_ABSENT, EXTRACTION_DROPPED, EXTRACTION_TOTALS, chat, handler

from memini_bench.clients.llm import ChatClient
from memini_bench.errors import BenchError
from memini_bench.loaders.vetobench import Rejection, read_suites
from memini_bench.vetobench import conditions as cond
from memini_bench.vetobench.absence import veto_present
from memini_bench.vetobench.extract import EXTRACTION_PROMPT, extract_suite, parse_extraction
from memini_bench.vetobench.transcripts import transcript_items


@pytest.fixture(scope="module")
def suites():
    return read_suites(shared("vetobench"))


@pytest.mark.parametrize("reply, decision, rationale, rejected", [
    ('{"decision": "Use X", "rationale": "fast", "rejected": [{"option": "Y", "reason": "slow"}]}',
     "Use X", "fast", (Rejection("Y", "slow"),)),
    ('```json\n{"decision": " Use X ", "rejected": []}\n```', "Use X", "", ()),
    ('Sure! {"decision": "Use X", "rationale": 3, "rejected": {"option": "Y"}} -- done', "Use X", "",
     (Rejection("Y", ""),)),
    ('{"decision": "Use X", "rejected": ["Y", "", 4, null, {"reason": "r"}, {"option": " Z ", "reason": ["r"]}]}',
     "Use X", "", (Rejection("Y", ""), Rejection("Z", ""))),
    ('{"decision": null, "rationale": null, "rejected": [{"option": "Y", "reason": "r"}]}', None, "",
     (Rejection("Y", "r"),)),
    ('{"decision": "   ", "rejected": "Y"}', None, "", (Rejection("Y", ""),)),
    ('{"decision": ["Use X"]}', None, "", ()),
])
def test_parse_extraction_is_defensive(reply, decision, rationale, rejected):
    parsed = parse_extraction(reply)
    assert (parsed.decision, parsed.rationale, parsed.rejected, parsed.parsed) == (decision, rationale, rejected, True)


@pytest.mark.parametrize("reply", ["no JSON here", "[1, 2]", '"a string"', "{broken", ""])
def test_a_reply_without_a_json_object_is_unparsed(reply):
    parsed = parse_extraction(reply)
    assert parsed.decision is None and not parsed.parsed


def _client(srv) -> ChatClient:
    return ChatClient(srv.url + "/v1", model="extractor", retries=0)


def test_extraction_records_keep_drop_and_lose(suites):
    suite = suites[0]
    with ScriptedServer(handler(suite, {"d201": (400, "bad request")})) as srv:
        extraction = extract_suite(suite, _client(srv).complete)
        prompts = [body["messages"][0]["content"] for _, body, _ in srv.requests]
        users = [body["messages"][-1]["content"] for _, body, _ in srv.requests]
    assert prompts == [EXTRACTION_PROMPT] * 24
    assert users[0] == next(i.content for i in transcript_items(suite) if i.id == "d101")
    kept, lost, vetoes_kept = EXTRACTION_TOTALS
    assert extraction.totals() == {"decisions": 24, "kept": kept - 1, "lost": lost + 1, "vetoes": 20,
                                   "vetoes_kept": vetoes_kept, "errors": 1}
    by_id = {r.id: r for r in extraction.records}
    assert [f"{v} ({r.id})" for r in extraction.records for v in r.vetoes_dropped] == EXTRACTION_DROPPED
    assert (by_id["d104"].outcome, by_id["d105"].outcome, by_id["d201"].outcome) == ("reply not JSON",
                                                                                     "decision lost", "call failed")
    assert "HTTP 400" in by_id["d201"].error and by_id["d104"].reply.startswith("The team chose")
    assert by_id["d102"].vetoes_kept == ("Redux Toolkit", "MobX") and by_id["d103"].vetoes_kept == ("TypeORM",)
    assert by_id["d107"].extracted_rejected == ({"option": "styled-components (runtime CSS-in-JS)", "reason": ""},
                                                {"option": "CSS Modules", "reason": ""})
    active = {d.id: d for d in extraction.suite.active}
    assert sorted(set(d.id for d in suite.active) - set(active)) == ["d104", "d105", "d201"]
    assert active["d103"].decision == "Query Postgres with postgres.js and hand-written SQL"
    assert active["d103"].files_affected == ("packages/api/src/db.ts",)  # carried from the fixture
    assert [r.option for r in active["d103"].rejected] == ["Prizma ORM", "TypeORM"]


def test_extract_e2e_condition_contexts_and_record(suites):
    suite = suites[0]
    with ScriptedServer(handler(suite)) as srv:
        c = cond.ExtractionCondition(suite, _client(srv).complete, model="extractor")
    absent = [s.id for s in suite.scenarios if not veto_present(c.context(s), s.rejected_option)]
    assert absent == EXTRACTION_ABSENT
    s02 = c.context(suite.scenarios[1])
    assert s02.startswith("Relevant prior decisions for this task (from team memory):\n- Use Zustand for dashboard "
                          "state — Small state surface.\n  - REJECTED: redux toolkit — boilerplate")
    record = c.ingest_record()
    assert record["kind"] == "extraction" and record["model"] == "extractor" and record["prompt"] == EXTRACTION_PROMPT
    assert len(record["decisions"]) == 24 and len(record["memories"]) == EXTRACTION_TOTALS[0]
    json.dumps(record)  # archivable as it is


def test_three_failed_extraction_calls_in_a_row_end_the_run(suites):
    with ScriptedServer(lambda p, b: (400, {"error": "no such model"})) as srv:
        with pytest.raises(BenchError, match="-live: extract-e2e: 3 extraction calls failed in a row; last: .*HTTP "
                                             "400.*-extract-model"):
            extract_suite(suites[0], _client(srv).complete)
        assert len(srv.requests) == 3


def test_every_decision_lost_leaves_an_empty_context(suites):
    with ScriptedServer(lambda p, b: (200, chat('{"decision": null}'))) as srv:
        c = cond.ExtractionCondition(suites[0], _client(srv).complete)
    assert c.extraction.totals()["kept"] == 0 and c.context(suites[0].scenarios[0]) == ""


def test_lifecycle_vetoes_follow_the_extracted_replacements(suites):
    life = suites[1]
    heir_of = {d.id: d.superseded_by for d in life.decisions if d.status == "superseded"}
    old, heir = next(iter(heir_of.items()))

    def faithful(system: str, user: str) -> str:
        d = next(d for d in life.decisions if f"): {d.decision.rstrip('.')}." in user)
        return json.dumps({"decision": d.decision, "rationale": d.rationale,
                           "rejected": [{"option": r.option, "reason": r.reason} for r in d.rejected]})

    kept = extract_suite(life, faithful)
    assert kept.suite.active == life.active  # a faithful extraction rebuilds the fixture's carry-over exactly

    def lose_heir(system: str, user: str) -> str:
        d = next(d for d in life.decisions if f"): {d.decision.rstrip('.')}." in user)
        return '{"decision": null}' if d.id == heir else faithful(system, user)

    lost = extract_suite(life, lose_heir)
    record = next(r for r in lost.records if r.id == old)
    assert record.outcome == "kept" and record.note == f"its replacement {heir} was lost; its vetoes reach no " \
                                                       "active decision"
    carried = {r.option for d in lost.suite.active for r in d.rejected if r.inherited_from == old}
    assert not carried and heir not in {d.id for d in lost.suite.active}
