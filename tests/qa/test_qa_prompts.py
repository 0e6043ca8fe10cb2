"""memini's QA prompts: rubric choice, the verdict rule, the reader's memory layout, thinking blocks stripped."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    ("CORRECT", True), ("correct.", True), ("Grade: CORRECT", True), ("**Correct**", True), ("  yes\n", True),
    ("<mem_thinking>it is wrong?</mem_thinking>\nCORRECT", True), ("Verdict: `INCORRECT`", False),
    ("INCORRECT", False), ("incorrect", False), ("NOT CORRECT", False), ("not  correct!", False), ("No.", False),
    ("wrong", False), ("CORRECT, not INCORRECT", None), ("The answer is wrong", None), ("", None), ("maybe", None),
    ("correct incorrect", None), ("Grade:", None), ("grade", None), ("<mem_thinking>CORRECT", None),
    ("not", None), ("yes no", None), ("incorrectly", None),
])
def test_verdict_rule(reply, correct):
    assert prompts.parse_verdict(reply) is correct


_LABELS = sorted(prompts.POSITIVE | prompts.NEGATIVE)
_NOISE = st.text(alphabet=" \t\n*_`'\".,;:!?()[]{}-", max_size=4)


@given(label=st.sampled_from(_LABELS), before=_NOISE, after=_NOISE, prefix=st.sampled_from(["", "grade", "Verdict"]),
       upper=st.lists(st.booleans(), min_size=12, max_size=12))
@settings(max_examples=300, deadline=None)
def test_fuzz_decorated_labels_parse(label, before, after, prefix, upper):
    """Any documented label, in any case, wrapped in punctuation, markdown and white space (and after an optional
    prefix word) reads as its own verdict."""
    cased = "".join(c.upper() if u else c for c, u in zip(label, upper * 2, strict=False))
    reply = f"{prefix}{': ' if prefix else ''}{before}{cased.replace(' ', ' ' + before + ' ')}{after}"
    assert prompts.parse_verdict(reply) is (label in prompts.POSITIVE)


@given(st.text(max_size=40))
@settings(max_examples=500, deadline=None)
def test_fuzz_any_reply(reply):
    """Any string reads as True only when its words are exactly a positive label (after an optional prefix word),
    as False only when exactly a negative one, and otherwise as None; never an exception."""
    words = [w for w in re.findall(r"[^\W_]+", prompts.strip_thinking(reply).lower())]
    if len(words) > 1 and words[0] in {"grade", "verdict", "answer"}:
        words = words[1:]
    got = prompts.parse_verdict(reply)
    if got is True:
        assert " ".join(words) in {"correct", "yes"}
    elif got is False:
        assert " ".join(words) in {"incorrect", "not correct", "wrong", "no"}
    else:
        assert " ".join(words) not in prompts.POSITIVE | prompts.NEGATIVE


@given(st.text(st.characters(blacklist_characters="<"), max_size=30), st.sampled_from(_LABELS))
@settings(max_examples=300, deadline=None)
def test_fuzz_a_label_inside_other_words_is_unparseable(text, label):
    """A label with any other word beside it is never read as a verdict (no substring rule; no ``<`` so that no
    thinking block hides a word)."""
    extra = re.findall(r"[^\W_]+", text.lower())
    if not extra or extra[0] in {"grade", "verdict", "answer"}:
        return
    assert prompts.parse_verdict(f"{text} {label}") is None or " ".join([*extra, *label.split()]) in (
        prompts.POSITIVE | prompts.NEGATIVE)
    assert prompts.parse_verdict(f"{label} {text}") is None or " ".join([*label.split(), *extra]) in (
        prompts.POSITIVE | prompts.NEGATIVE)


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
