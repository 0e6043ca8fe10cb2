"""memini's QA prompts: rubric choice, the verdict rule, the reader's memory layout, thinking blocks stripped."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memini_bench.qa import prompts
from memini_bench.qa.prompts import Memory


@pytest.mark.parametrize(("category", "rubric"), [
    ("knowledge-update", "knowledge-update"), ("temporal-update", "knowledge-update"),
    ("temporal-reasoning", "temporal"), ("abstention", "abstention"), ("temporal-reasoning_abs", "abstention"),
    ("single-session-user_abs", "abstention"), ("multi-session", "base"), ("4", "base"), ("", "base"),
])
def test_rubric_per_category(category, rubric):
    assert prompts.rubric_name(category) == rubric
    assert prompts.rubric_for(category) == prompts.RUBRICS[rubric]


def test_rubric_texts_carry_memini_rules():
    assert "latest value" in prompts.JUDGE_KNOWLEDGE_UPDATE and prompts.JUDGE_KNOWLEDGE_UPDATE.startswith(
        prompts.JUDGE_BASE)
    assert "within one day" in prompts.JUDGE_TEMPORAL and prompts.JUDGE_TEMPORAL.startswith(prompts.JUDGE_BASE)
    assert "declines" in prompts.JUDGE_ABSTENTION and "I don't know" in prompts.READER_SYSTEM


@pytest.mark.parametrize(("reply", "correct"), [
    ("CORRECT", True), ("correct.", True), ("Grade: CORRECT", True), ("INCORRECT", False), ("incorrect", False),
    ("CORRECT, not INCORRECT", False), ("The answer is wrong", False), ("", False),
    ("NOT CORRECT", True),  # memini's rule is a substring test: this quirk is kept
])
def test_verdict_rule(reply, correct):
    assert prompts.is_correct(reply) is correct


def test_abstention_category_from_the_question_id():
    assert prompts.qa_category("temporal-reasoning", "09ba9854_abs") == "temporal-reasoning_abs"
    assert prompts.qa_category("x_abs", "q_abs") == "x_abs"
    assert prompts.qa_category("multi-session", "gpt4_1") == "multi-session"


def test_memories_sorted_by_date_with_headers_and_bench_clock_for_undated():
    day = lambda d, h=12: datetime(2023, 5, d, h, tzinfo=UTC)  # noqa: E731
    memories = [Memory("late", day(9)), Memory("undated"), Memory("early", day(2, 15)), Memory("same day", day(2, 9)),
                Memory("tied with late", day(9))]
    assert prompts.format_memories(memories) == (
        "--- 2023-05-02 ---\n"
        "1. [2023-05-02] same day\n"
        "2. [2023-05-02] early\n"
        "\n--- 2023-05-09 ---\n"
        "3. [2023-05-09] late\n"
        "4. [2023-05-09] tied with late\n"
        "\n--- 2023-11-14 ---\n"
        "5. [2023-11-14] undated\n")


def test_reader_and_judge_messages():
    now = datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
    assert prompts.reader_message("Where?", [Memory("in Porto", datetime(2023, 1, 1, tzinfo=UTC))], now) == (
        "Today's date: 2023-05-30\nMemories:\n--- 2023-01-01 ---\n1. [2023-01-01] in Porto\n\nQuestion: Where?\n"
        "Answer:")
    assert prompts.reader_message("Where?", [], None) == (
        "Today's date: 2023-11-14\nMemories:\n\nQuestion: Where?\nAnswer:")
    assert prompts.judge_message("Q?", "Porto", "Porto.") == "Question: Q?\nReference: Porto\nCandidate: Porto.\nGrade:"
    assert prompts.judge_message("Q?", "", "no idea") == (
        "Question: Q?\nReference: (no reference; unanswerable)\nCandidate: no idea\nGrade:")


@pytest.mark.parametrize(("reply", "answer"), [
    ("  Porto  ", "Porto"),
    ("<mem_thinking>1. memory says Porto</mem_thinking>\nPorto", "Porto"),
    ("<mem_thinking>a</mem_thinking> Porto <mem_thinking>b</mem_thinking>!", "Porto !"),
    ("Porto <mem_thinking>never closed", "Porto"),
    ("</mem_thinking> Porto", "</mem_thinking> Porto"),  # a closing tag alone is left, as in memini
])
def test_thinking_blocks_are_removed(reply, answer):
    assert prompts.strip_thinking(reply) == answer


def test_fingerprint_is_stable_and_follows_the_prompts(monkeypatch):
    first = prompts.fingerprint()
    assert first == prompts.fingerprint() and len(first) == 16
    monkeypatch.setattr(prompts, "READER_SYSTEM", prompts.READER_SYSTEM + " ")
    assert prompts.fingerprint() != first
