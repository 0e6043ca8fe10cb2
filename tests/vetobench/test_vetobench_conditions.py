"""VetoBench's conditions offline: the context a system builds for itself, a system that returns its own memory
ids, the fairness contract of third-party systems (transcript prose in, their own hits out), and the condition
names."""

from __future__ import annotations

import pytest
from conftest import shared
from veto_scripts import OWN_ABSENT, OwnMemories

from memini_bench.core.contract import ContextBuilder, Hit
from memini_bench.core.hooks import PluginError
from memini_bench.core.registry import SYSTEMS, Entry
from memini_bench.errors import BenchError
from memini_bench.loaders.vetobench import Decision, read_suites
from memini_bench.vetobench import conditions as cond
from memini_bench.vetobench.absence import veto_present
from memini_bench.vetobench.composite import VetoCompositeSystem
from memini_bench.vetobench.context import DECISIONS_HEADER, MEMORIES_HEADER
from memini_bench.vetobench.transcripts import decision_transcript, suite_transcripts, transcript_items


def conditions_for(suite, systems, wanted=()):
    """Every condition of one live run (built-in, corpus, third-party) as ``SuiteConditions`` makes them."""
    return cond.SuiteConditions(suite, systems, wanted).for_run()


@pytest.fixture(scope="module")
def suites():
    return read_suites(shared("vetobench"))


@pytest.fixture(scope="module")
def suite(suites):
    return suites[0]


class Scripted:
    """Answers every recall with the hits it was given; records what it ingested and was asked."""

    def __init__(self, hits: list[Hit], name: str = "scripted") -> None:
        self.name = name
        self.hits = hits
        self.items: list = []
        self.asked: list = []

    def ingest(self, items):
        self.items = list(items)

    def recall(self, group, query, k, *, now=None, context=None):
        self.asked.append((group, query, k, now, dict(context or {})))
        return self.hits[:k]


class Builds(Scripted):
    def __init__(self, hits):
        super().__init__(hits, "builds")
        self.seen: list = []

    def build_context(self, question, hits):
        self.seen.append((question, list(hits)))
        return f"my notes for {question.id}: " + " | ".join(h.content for h in hits)


def test_a_system_returning_its_own_memory_ids_gets_its_own_context(suite):
    own = Scripted([Hit(("m-17",), 0.9, "Express was evaluated and declined in 2026-03."),
                    Hit(("m-3",), 0.5, "Hono stays.\nIts middleware covers auth.")])
    text = cond.RetrievalCondition(own, suite).context(suite.scenarios[0])
    # before the hook and the content fallback, this was the header with nothing after it
    assert text == (f"{MEMORIES_HEADER}\n- Express was evaluated and declined in 2026-03.\n- Hono stays.\n"
                    "  Its middleware covers auth.")


def test_corpus_hits_render_decisions_with_vetoes_and_mixed_hits_keep_both(suite):
    mixed = Scripted([Hit(("d102",), 1.0, "ignored: d102 is rendered from the corpus"),
                      Hit(("note-1",), 0.5, "remember the spike"), Hit(("d102", "d201"), 0.4, "x")])
    text = cond.RetrievalCondition(mixed, suite).context(suite.scenarios[1])
    assert text.splitlines() == [
        MEMORIES_HEADER,
        "- Use Zustand for client state in the dashboard — Our global state surface is small (session, filters, "
        "toasts); Zustand covers it in ~50 lines without ceremony",
        "  - REJECTED: Redux Toolkit — Boilerplate and indirection outweigh benefits at our state size; the team "
        "spent more time on slices than features in the spike",
        "  - REJECTED: MobX — Implicit reactivity made renders hard to trace during the spike",
        "- remember the spike",
        "- Structured logging with pino, one JSON line per request — Fast, structured, and the ops dashboards parse "
        "JSON lines natively"]
    only_corpus = cond.RetrievalCondition(Scripted([Hit(("d110",), 1.0, "")]), suite).context(suite.scenarios[9])
    assert only_corpus.startswith(f"{DECISIONS_HEADER}\n- Public API stays REST")
    assert cond.RetrievalCondition(Scripted([]), suite).context(suite.scenarios[0]) == ""


def test_build_context_hook_sees_the_public_question_and_the_hits(suite):
    hits = [Hit(("d101",), 1.0, "Hono"), Hit(("x",), 0.1, "other")]
    system = Builds(hits)
    assert isinstance(system, ContextBuilder) and not isinstance(Scripted([]), ContextBuilder)
    s = suite.scenarios[0]
    text = cond.RetrievalCondition(system, suite).context(s)
    assert text == "my notes for s01: Hono | other"
    question, seen = system.seen[0]
    assert seen == hits
    assert (question.id, question.query, question.group, question.now) == ("s01", s.task, suite.name, suite.as_of)
    assert dict(question.context) == {"files_in_scope": s.files_in_scope}
    assert question.gold == () and question.answer == "" and question.category == "" and question.meta == ()
    assert system.asked == [(suite.name, s.task, 5, suite.as_of, {"files_in_scope": s.files_in_scope})]


def test_build_context_must_return_text(suite):
    class Bad(Scripted):
        def build_context(self, question, hits):
            return None

    with pytest.raises(BenchError, match="scripted: build_context returned NoneType"):
        cond.RetrievalCondition(Bad([]), suite).context(suite.scenarios[0])


def test_transcript_prose_carries_every_veto_and_no_structure(suite):
    d101 = next(d for d in suite.decisions if d.id == "d101")
    t = decision_transcript(d101)
    assert t.user == "What did we settle on for this? (packages/api/src/server.ts, packages/api/src/middleware.ts)"
    assert t.assistant == (
        "Decision: Keep the API server on Hono. Rationale: Hono's middleware model covers auth, logging and rate "
        "limiting with minimal overhead, and it runs identically on Node and edge runtimes. We considered and "
        "rejected: Express — Larger dependency surface and slower cold starts; the middleware ecosystem is tempting "
        "but everything we need exists for Hono. Migration was evaluated and declined 2026-03; Fastify — No "
        "measured gain over Hono for our workload; migration cost with zero user-visible benefit.")
    d201 = next(d for d in suite.decisions if d.id == "d201")
    assert decision_transcript(d201).assistant == ("Decision: Structured logging with pino, one JSON line per "
                                                   "request. Rationale: Fast, structured, and the ops dashboards "
                                                   "parse JSON lines natively.")
    items = transcript_items(suite)
    assert [i.id for i in items] == [d.id for d in suite.decisions]
    for item, d in zip(items, suite.decisions, strict=True):
        assert not any(isinstance(v, Decision) for _, v in item.meta) and "REJECTED" not in item.content
        assert item.time == d.created_at and item.group == suite.name
        assert all(veto_present(item.content, r.option) for r in d.rejected)


def test_lifecycle_transcripts_are_dated_and_name_what_superseded_them(suites):
    life = suites[1]
    by_id = {d.id: d for d in life.decisions}
    old = next(d for d in life.decisions if d.status == "superseded")
    text = next(t for t in suite_transcripts(life) if t.decision_id == old.id).assistant
    assert text.startswith(f"Decision ({old.created_at.date().isoformat()}): ")
    assert text.endswith(f"This was later superseded by: {by_id[old.superseded_by].decision.rstrip('.')}.")
    assert len(suite_transcripts(life)) == len(life.decisions)  # superseded decisions are transcribed too


def test_third_party_condition_sees_prose_and_the_agent_sees_only_its_hits(suite):
    # a system whose hits name the corpus decisions they came from still gets no corpus rendering
    echo = Scripted([Hit(("d102",), 1.0, "Zustand for state; Redux Toolkit was declined")], "echo")
    c = cond.TranscriptCondition("echo", echo, suite)
    assert [i.content for i in echo.items] == [t.text for t in suite_transcripts(suite)]
    assert c.context(suite.scenarios[1]) == f"{MEMORIES_HEADER}\n- Zustand for state; Redux Toolkit was declined"
    assert c.ingest_record() == {"kind": "third-party", "system": {"name": "echo"}, "transcripts": 24}
    assert cond.TranscriptCondition("echo", Scripted([], "echo"), suite).context(suite.scenarios[0]) == ""


def test_own_memories_loses_the_vetoes_it_forgot(suite):
    system = OwnMemories()
    c = cond.TranscriptCondition("own-memories", system, suite)
    absent = [s.id for s in suite.scenarios if not veto_present(c.context(s), s.rejected_option)]
    assert absent == OWN_ABSENT
    record = c.ingest_record()
    assert record["system"] == {"name": "own-memories", "forget": ["d101", "d104", "d110"]}
    assert len(record["memories"]) == 24 and record["memories"][0]["ids"] == ["mem-0"]
    c.close()
    assert system.closed


@pytest.fixture
def registered_own(monkeypatch):
    """``own-memories`` in the system registry for one test."""
    SYSTEMS.names()  # plugins loaded first, so the entry below is not shadowed later
    monkeypatch.setitem(SYSTEMS._entries, "own-memories", Entry("own-memories", lambda ctx: OwnMemories(),
                                                                "test stand-in for mem0", origin="test"))


def test_condition_names_and_kinds(suite, registered_own):
    names = ["veto-composite"]
    assert cond.condition_names(names) == ["none", "conventions", "flatfile", "veto-composite"]
    assert cond.condition_names(names, ["extract-e2e", "own-memories", "none"]) == ["extract-e2e", "own-memories",
                                                                                  "none"]
    kinds = [cond.condition_kind(n, names) for n in ("flatfile", "extract-e2e", "veto-composite", "own-memories",
                                                     "memini-keyword")]
    assert kinds == ["built-in", "extraction", "corpus", "third-party", "third-party"]
    with pytest.raises(BenchError, match="-veto-conditions robrain: unknown; use none, conventions, flatfile, "
                                         r"extract-e2e, a system of this run \(veto-composite\)"):
        cond.condition_names(names, ["robrain"])
    with pytest.raises(BenchError, match="-veto-conditions hybrid: names this run's memini-hybrid/hash; give the "
                                         "full name"):
        cond.condition_names(["memini-hybrid/hash"], ["hybrid"])
    with pytest.raises(BenchError, match="-veto-conditions extract-e2e: needs the chat endpoint"):
        conditions_for(suite, [], ["extract-e2e"])


def test_third_party_conditions_are_made_anew_every_run(suite, registered_own):
    composite = VetoCompositeSystem()
    plan = cond.SuiteConditions(suite, [composite], ["veto-composite", "own-memories"])
    first, second = plan.for_run(), plan.for_run()
    assert first[0] is second[0]  # a corpus condition ingests once
    assert first[1] is not second[1] and first[1].system is not second[1].system
    plan.close(first)
    assert first[1].system.closed and not second[1].system.closed


class Raising(Builds):
    """Raises ``ValueError('kaput')`` in the hook ``hook``."""

    def __init__(self, hook: str) -> None:
        super().__init__([Hit(("d101",), 1.0, "Hono")])
        self.hook = hook

    def _maybe(self, hook: str) -> None:
        if hook == self.hook:
            raise ValueError("kaput")

    def ingest(self, items):
        self._maybe("ingest")
        super().ingest(items)

    def recall(self, group, query, k, *, now=None, context=None):
        self._maybe("recall")
        return super().recall(group, query, k, now=now, context=context)

    def build_context(self, question, hits):
        self._maybe("build_context")
        return super().build_context(question, hits)

    def close(self):
        self._maybe("close")


@pytest.mark.parametrize(("hook", "where"), [("ingest", "ingest"), ("recall", "recall for scenario 's01'"),
                                             ("build_context", "build_context for scenario 's01'"),
                                             ("close", "close")])
def test_a_plugin_hook_that_raises_in_a_condition_is_one_line(suite, hook, where):
    system = Raising(hook)
    with pytest.raises(PluginError) as raised:
        corpus = cond.RetrievalCondition(system, suite)
        corpus.context(suite.scenarios[0])
        cond.TranscriptCondition("raising", system, suite).close()
    assert str(raised.value) == f"system builds: {where} raised ValueError: kaput (-traceback shows the whole trace)"
    assert "Traceback" in raised.value.trace
