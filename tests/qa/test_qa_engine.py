"""The QA engine against a loopback chat server (retries, garbage, usage, a dead endpoint) and the QA summary
(accuracy per category, tokens, McNemar checked against scipy's exact binomial test)."""

from __future__ import annotations

import threading

import pytest
from loopback import ScriptedServer, closed_port_url
from qa_server import ChatScript
from scipy.stats import binomtest

from memini_bench.clients.llm import ChatClient, ChatReply
from memini_bench.core.dataset import Question
from memini_bench.core.runs import estimate_tokens
from memini_bench.qa import engine, prompts, summary
from memini_bench.qa.engine import Call, Graded, Task


def _task(i, answer="Porto", category="multi-session", memories=("Alice lives in Porto",), arm="a@k1"):
    q = Question(id=f"q{i}", query=f"Where does Alice live ({i})?", gold=(), answer=answer, category=category)
    return Task(arm, i, q, category, tuple((f"m{j}",) for j in range(len(memories))),
                tuple(prompts.Memory(m) for m in memories))


def _grade(tasks, url, **kw):
    client = ChatClient(url, model="scripted", retries=0)
    graded = []
    outcome = engine.grade_all(tasks, client.chat, client.chat, graded.append, backoff=0.0, **kw)
    return outcome, sorted(graded, key=lambda g: g.index)


def test_reader_and_judge_calls_and_the_verdict():
    script = ChatScript()
    with ScriptedServer(script) as srv:
        outcome, graded = _grade([_task(0), _task(1, answer="Lisbon")], srv.url)
        bodies = [b for _, b, _ in srv.requests]
    assert outcome.graded == 2 and not outcome.failed and not outcome.aborted
    assert [g.correct for g in graded] == [True, False]
    g = graded[0]
    assert g.answer == "Alice lives in Porto" and g.reader.system == "reader" and g.judge.system == "base"
    assert g.judge.user == ("Question: Where does Alice live (0)?\nReference: Porto\nCandidate: Alice lives in Porto\n"
                            "Grade:")
    reader_body = next(b for b in bodies if b["messages"][0]["content"] == prompts.READER_SYSTEM)
    assert reader_body["temperature"] == 0.0 and reader_body["model"] == "scripted"
    assert reader_body["messages"][1]["content"] == g.reader.user
    # usage sent by the server: whitespace words of the messages and the reply
    assert g.reader.tokens_in == len(prompts.READER_SYSTEM.split()) + len(g.reader.user.split())
    assert g.reader.tokens_out == len(g.reader.reply.split()) and not g.reader.estimated


def test_without_usage_tokens_are_estimated_and_marked():
    with ScriptedServer(ChatScript(usage=False)) as srv:
        _, (g,) = _grade([_task(0)], srv.url)
    assert g.reader.estimated and g.judge.estimated
    assert g.reader.tokens_in == estimate_tokens(prompts.READER_SYSTEM) + estimate_tokens(g.reader.user)
    assert g.judge.tokens_out == estimate_tokens("CORRECT") == 2


def test_server_errors_and_garbage_are_retried_within_the_bound():
    # request 1 (reader) -> 500, 2 (reader again) -> garbage, 3 -> answered; 4 (judge) -> 500, 5 -> answered
    with ScriptedServer(ChatScript(fail=frozenset({1, 4}), garbage=frozenset({2}))) as srv:
        outcome, (g,) = _grade([_task(0)], srv.url, retries=2)
        assert len(srv.requests) == 5
    assert outcome.graded == 1 and g.reader.attempts == 3 and g.judge.attempts == 2 and g.correct


def test_a_question_failing_past_its_retries_is_left_ungraded():
    with ScriptedServer(ChatScript(fail=frozenset({1, 2}))) as srv:
        outcome, graded = _grade([_task(0), _task(1)], srv.url, retries=1)
    assert [g.id for g in graded] == ["q1"] and outcome.graded == 1
    assert [t.question.id for t, _ in outcome.failed] == ["q0"] and "HTTP 500" in outcome.failed[0][1]
    assert not outcome.aborted


def test_a_dead_endpoint_stops_after_consecutive_failures():
    tasks = [_task(i) for i in range(10)]
    outcome, graded = _grade(tasks, closed_port_url(), retries=1, concurrency=1)
    assert graded == [] and len(outcome.failed) == engine.MAX_CONSECUTIVE_FAILURES
    assert outcome.aborted.startswith("3 questions in a row failed") and "unreachable" in outcome.aborted


def test_workers_run_concurrently_and_every_task_is_graded_once():
    entered = threading.Barrier(4, timeout=120)   # generous: four threads reach it at once unless they never can

    def handler(path, body):
        if body["messages"][0]["content"] == prompts.READER_SYSTEM:
            entered.wait()  # four readers in flight at once, or this times out
        return ChatScript()(path, body)

    tasks = [_task(i) for i in range(8)]
    with ScriptedServer(handler) as srv:
        outcome, graded = _grade(tasks, srv.url, concurrency=4)
    assert outcome.graded == 8 and [g.id for g in graded] == [f"q{i}" for i in range(8)]


def test_graded_records_round_trip_through_json():
    call = Call("reader", "u", "r", 3, 1, False, 1)
    g = Graded("a@k5", "q", 0, "c", "ref", (("x", "y"),), "ans", True, call, call)
    assert Graded.from_json(g.to_json()) == g


# --- summary ----------------------------------------------------------------------------------------------------

def _graded(arm, i, correct, category="c"):
    call = Call("reader", "", "", 10, 2, i % 2 == 0, 1)
    return Graded(arm, f"q{i}", i, category, "", (), "", correct, call, Call("base", "", "", 5, 1, False, 1))


def test_accuracy_per_category_and_tokens():
    arm = summary.Arm("s@k5", "s", 5)
    graded = [_graded("s@k5", 0, True, "x"), _graded("s@k5", 1, False, "x"), _graded("s@k5", 2, True, "y"),
              _graded("other@k5", 3, True, "y")]
    score = summary.score_arm(arm, graded)
    assert (score.questions, score.correct, score.accuracy) == (3, 2, pytest.approx(2 / 3))
    assert [(c.category, c.questions, c.correct) for c in score.per_category] == [("x", 2, 1), ("y", 1, 1)]
    assert score.tokens == summary.Tokens(reader_in=30, reader_out=6, judge_in=15, judge_out=3, calls=6,
                                          estimated_calls=2)


def test_mcnemar_between_arms_matches_scipy():
    a, b = summary.Arm("a@k5", "a", 5), summary.Arm("a@k10", "a", 10)
    right_a = [1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0]
    right_b = [0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0]
    graded = [_graded("a@k5", i, bool(x)) for i, x in enumerate(right_a)]
    graded += [_graded("a@k10", i, bool(x)) for i, x in enumerate(right_b)]
    (c,) = summary.compare_arms([a, b], graded)
    assert (c.only_a, c.only_b, c.questions) == (6, 1, 12)
    assert c.p == pytest.approx(binomtest(6, 7, 0.5).pvalue, rel=1e-12) and c.p_adjusted == c.p
    assert c.delta == pytest.approx((9 - 4) / 12)


def test_three_arms_are_holm_adjusted_and_pair_only_shared_questions():
    arms = [summary.Arm(n, n, 5) for n in ("x", "y", "z")]
    graded = [_graded("x", i, True) for i in range(10)]
    graded += [_graded("y", i, i < 2) for i in range(10)]
    graded += [_graded("z", i, i < 9) for i in range(9)]  # z lacks q9
    rows = summary.compare_arms(arms, graded)
    assert [(r.arm_a, r.arm_b, r.questions, r.only_a, r.only_b) for r in rows] == [
        ("x", "y", 10, 8, 0), ("x", "z", 9, 0, 0), ("y", "z", 9, 0, 7)]
    raw = [binomtest(8, 8, 0.5).pvalue, 1.0, binomtest(0, 7, 0.5).pvalue]
    assert [r.p for r in rows] == pytest.approx(raw)
    # Holm by hand: sorted p = (p_xy, p_yz, 1): 3 * p_xy, max(that, 2 * p_yz), 1
    assert [r.p_adjusted for r in rows] == pytest.approx([3 * raw[0], 1.0, max(3 * raw[0], 2 * raw[2])])


def test_render_markdown_from_a_results_document():
    arms = [summary.Arm("s@k5", "s", 5), summary.Arm("s@k10", "s", 10)]
    graded = [_graded("s@k5", 0, True, "1"), _graded("s@k5", 1, False, "5"), _graded("s@k10", 0, True, "1"),
              _graded("s@k10", 1, True, "5")]
    doc = summary.document({"dataset": "locomo", "category_labels": {"1": "multi-hop", "5": "adversarial"},
                            "qa": {"reader_model": "r", "judge_model": "j"}},
                           [summary.score_arm(a, graded) for a in arms], summary.compare_arms(arms, graded))
    text = summary.render_markdown(doc)
    assert "### locomo: QA accuracy (LLM judge), reader r, judge j" in text
    assert "| 1 (multi-hop) | 1 | 100.0 | 100.0 |" in text and "| 5 (adversarial) | 1 | 0.0 | 100.0 |" in text
    assert "| **overall** | 2 | **50.0** | **100.0** |" in text
    assert "| s@k5 | s@k10 | 2 | 50.0 | 100.0 | -50.0 | 0 | 1 | 1 | 1 |" in text
    assert "| s@k5 | 2 | 1 | 0 | 20 / 4 | 10 / 2 | 1 of 4 |" in text


def test_chat_reply_reads_usage_only_when_well_formed():
    def handler(path, body):
        return 200, {"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 7,
                                                                           "completion_tokens": "x"}}
    with ScriptedServer(handler) as srv:
        assert ChatClient(srv.url, retries=0).chat("s", "u") == ChatReply("ok", 7, None)


def test_judge_settings_default_to_the_readers_but_keep_the_key_on_its_host(monkeypatch):
    from memini_bench.clients.providers import judge_from_env

    for key in ("MEMINI_JUDGE_API", "MEMINI_JUDGE_BASE_URL", "MEMINI_JUDGE_API_KEY", "MEMINI_JUDGE_MODEL"):
        monkeypatch.delenv(key, raising=False)
    reader = ChatClient("http://reader:1/v1", model="r", api_key="secret")
    assert judge_from_env(reader) == ChatClient("http://reader:1/v1", model="r", api_key="secret")
    monkeypatch.setenv("MEMINI_JUDGE_MODEL", "j")
    monkeypatch.setenv("MEMINI_JUDGE_BASE_URL", "http://judge:2/v1")
    assert judge_from_env(reader, retries=0) == ChatClient("http://judge:2/v1", model="j", api_key="", retries=0)
    monkeypatch.setenv("MEMINI_JUDGE_API_KEY", "other")
    assert judge_from_env(reader).api_key == "other"
    # an Anthropic judge beside an OpenAI-compatible reader: its own default host, so the reader's key stays home
    from memini_bench.clients.anthropic import AnthropicClient

    monkeypatch.setenv("MEMINI_JUDGE_API", "anthropic")
    monkeypatch.delenv("MEMINI_JUDGE_BASE_URL")
    monkeypatch.delenv("MEMINI_JUDGE_API_KEY")
    assert judge_from_env(reader) == AnthropicClient(model="j")
    monkeypatch.setenv("MEMINI_JUDGE_API", "gemini")
    with pytest.raises(Exception, match="MEMINI_JUDGE_API='gemini': not a chat provider"):
        judge_from_env(reader)
