"""The QA prompts: a reader and the judge rubrics, following memini's ``cmd/qa`` protocol (behaviour doc section 14).

The prompt texts are our own, written to memini's rules (the reader answers only from dated memories and says
"I don't know" otherwise; the judge's rubrics: base, "updated value" for knowledge-update / temporal-update, one
day of slack for temporal-reasoning, must-decline for abstention). They are not memini's wording, so accuracies
are comparable with memini's only in protocol, not to the decimal. The message layouts, the verdict rule and the
category routing below are memini's.

Reader user message::

    Today's date: <question date, YYYY-MM-DD>
    Memories:
    --- <date> ---
    1. [<date>] <content>
    2. [<date>] <content>

    --- <next date> ---
    3. [<date>] <content>

    Question: <question>
    Answer:

The recalled memories are sorted by date, oldest first (stable: same-date memories keep recall order), numbered in
that order, with a ``--- date ---`` header (after a blank line) whenever the date changes. A memory's date is its
item's time; one without a time, and a question without a date, take memini's bench clock 2023-11-14 (memini's
upsert ingest stamps undated items with it; its unclocked service would use the wall clock instead). The reply's
``<mem_thinking>...</mem_thinking>`` blocks are removed (an unclosed block: everything from its tag on), then it is
trimmed. Not reproduced: memini's ``[may conflict with #N]`` tags (its lexical contradiction detector).

Judge: system = the category's rubric (``rubric_for``), user = ``Question: <q>\\nReference: <ref>\\nCandidate:
<answer>\\nGrade:`` where an empty reference is ``(no reference; unanswerable)``. The reply is read strictly
(``parse_verdict``), not by memini's substring rule (under which ``NOT CORRECT`` counts as correct). Rubrics:
``abstention`` or a category ending in ``_abs`` -> must decline; ``knowledge-update`` / ``temporal-update`` -> the
updated value; ``temporal-reasoning`` -> one day of slack; anything else -> the base rubric. LongMemEval abstention
questions (ids ending ``_abs``) get ``_abs`` appended to their category, as memini's cmd/qa does (``qa_category``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

BENCH_CLOCK = datetime.fromtimestamp(1_700_000_000, tz=UTC)  # memini's benchClock, 2023-11-14T22:13:20Z
NO_REFERENCE = "(no reference; unanswerable)"

READER_SYSTEM = """Answer the question from the memories below and nothing else.

- Read every memory before answering; later memories are easy to overlook.
- When memories give different values for the same fact, the most recent one is the current value.
- Resolve relative times ("last month", "two weeks ago") with the dates in [brackets] and answer with the
  absolute date, month or year.
- Facts that answer one question may sit in different memories; combine them when the answer is implied.
- For a count or a list, enumerate each item with its date before giving the total.
- Never state a name, date, number or place that no memory gives or implies.
- If the memories do not contain the answer, reply "I don't know".

Think step by step inside <mem_thinking>...</mem_thinking> first, then give the final answer on a new line after
the closing tag: only the fact(s) asked for, as short as the question allows."""

JUDGE_BASE = ("Grade a candidate answer against a reference answer. Reply with exactly one word, CORRECT or "
              "INCORRECT. CORRECT means the candidate states the same key fact(s) as the reference; wording, "
              "paraphrase and extra detail do not matter.")
JUDGE_KNOWLEDGE_UPDATE = JUDGE_BASE + (
    " The reference is the latest value of a fact that changed: the candidate is CORRECT when it gives that "
    "latest value (mentioning an older value as superseded is fine), INCORRECT when it gives only an older one.")
JUDGE_TEMPORAL = JUDGE_BASE + " A date within one day of the reference's counts as CORRECT."
JUDGE_ABSTENTION = ("Grade a candidate answer to a question that cannot be answered from the candidate's "
                    "memories. Reply with exactly one word, CORRECT or INCORRECT. CORRECT only when the candidate "
                    "declines (says it does not know, or that the information is not there); any substantive answer "
                    "is INCORRECT.")
RUBRICS = {"base": JUDGE_BASE, "knowledge-update": JUDGE_KNOWLEDGE_UPDATE, "temporal": JUDGE_TEMPORAL,
           "abstention": JUDGE_ABSTENTION}

THINK_OPEN, THINK_CLOSE = "<mem_thinking>", "</mem_thinking>"


@dataclass(frozen=True, slots=True)
class Memory:
    """One recalled memory as the reader sees it: its text and its date (None = the bench clock)."""

    content: str
    time: datetime | None = None


def qa_category(category: str, question_id: str) -> str:
    """The category QA reports and grades by: ``<category>_abs`` for a LongMemEval abstention id (``*_abs``)."""
    if question_id.endswith("_abs") and not category.endswith("_abs"):
        return f"{category}_abs"
    return category


def rubric_name(category: str) -> str:
    """Which of ``RUBRICS`` grades a category (memini's ``JudgeSystemFor``)."""
    if category == "abstention" or category.endswith("_abs"):
        return "abstention"
    if category in ("knowledge-update", "temporal-update"):
        return "knowledge-update"
    if category == "temporal-reasoning":
        return "temporal"
    return "base"


def rubric_for(category: str) -> str:
    return RUBRICS[rubric_name(category)]


def _day(t: datetime | None) -> str:
    return (t or BENCH_CLOCK).astimezone(UTC).strftime("%Y-%m-%d")


def format_memories(memories: Sequence[Memory]) -> str:
    """memini's ``formatAnswerContext`` without conflict tags (layout in the module docstring)."""
    order = sorted(range(len(memories)), key=lambda i: (memories[i].time or BENCH_CLOCK).timestamp())
    lines: list[str] = []
    previous = ""
    for number, i in enumerate(order, start=1):
        day = _day(memories[i].time)
        if day != previous:
            if previous:
                lines.append("\n")
            lines.append(f"--- {day} ---\n")
            previous = day
        lines.append(f"{number}. [{day}] {memories[i].content}\n")
    return "".join(lines)


def reader_message(question: str, memories: Sequence[Memory], now: datetime | None) -> str:
    return f"Today's date: {_day(now)}\nMemories:\n{format_memories(memories)}\nQuestion: {question}\nAnswer:"


def strip_thinking(reply: str) -> str:
    """The reply without its ``<mem_thinking>`` blocks, trimmed (an unclosed block runs to the end)."""
    text = reply.strip()
    while (start := text.find(THINK_OPEN)) >= 0:
        end = text.find(THINK_CLOSE, start)
        if end < 0:
            return text[:start].strip()
        text = text[:start] + text[end + len(THINK_CLOSE):]
    return text.strip()


def judge_message(question: str, reference: str, candidate: str) -> str:
    return f"Question: {question}\nReference: {reference or NO_REFERENCE}\nCandidate: {candidate}\nGrade:"


POSITIVE = frozenset({"correct", "yes"})
NEGATIVE = frozenset({"incorrect", "not correct", "wrong", "no"})
VERDICT_PREFIXES = frozenset({"grade", "verdict", "answer"})
_WORD = re.compile(r"[^\W_]+")


def parse_verdict(reply: str) -> bool | None:
    """A judge's reply read strictly: True (correct), False (wrong) or None (unparseable).

    The reply without its ``<mem_thinking>`` blocks (``strip_thinking``) is cut into words, runs of letters and
    digits lower-cased (so case, white space, punctuation and markdown around them do not matter); one leading
    ``grade`` / ``verdict`` / ``answer`` word is dropped; what remains must be exactly one label: ``correct`` or
    ``yes`` (True), or ``incorrect``, ``not correct``, ``wrong`` or ``no`` (False). Anything else -- ``maybe``, an
    empty reply, two labels (``CORRECT, not INCORRECT``), a label inside a sentence -- is None: the run counts it
    per judge as unparseable and leaves it out of the accuracy (it is not asked again: a judge at temperature 0
    would most likely say the same).
    """
    return parse_label(reply, POSITIVE, NEGATIVE)


def parse_label(reply: str, positive: frozenset[str], negative: frozenset[str]) -> bool | None:
    """``parse_verdict``'s rule with other label sets (the relevance judge's, ``qa.judged_retrieval``)."""
    words = _WORD.findall(strip_thinking(reply).lower())
    if len(words) > 1 and words[0] in VERDICT_PREFIXES:
        words = words[1:]
    text = " ".join(words)
    if text in positive:
        return True
    if text in negative:
        return False
    return None


def fingerprint() -> str:
    """A short hash of every prompt text and template: part of a QA run's identity (a changed prompt is another
    run, never resumed into an old checkpoint)."""
    probe = reader_message("q", [Memory("m")], None) + judge_message("q", "", "a")
    text = "\0".join([READER_SYSTEM, *RUBRICS.values(), probe])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
