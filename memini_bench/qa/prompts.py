"""memini's QA prompts: the reader (``service.Answer``) and the judge rubrics (``bench/qa.go``), verbatim.

Sources (eleboucher/memini): the reader system prompt and the memory formatting are ``internal/service/answer.go``
at 0d4d40fc (the chain-of-thought reader with the question date, which memini's README credits with its
LongMemEval 80.6); the rubrics, the judge message and the verdict rule are ``bench/qa.go`` at 47a650d6.

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
<answer>\\nGrade:`` where an empty reference is ``(no reference; unanswerable)``. The answer is correct iff the
upper-cased reply contains ``CORRECT`` and not ``INCORRECT``. Rubrics: ``abstention`` or a category ending in
``_abs`` -> must decline; ``knowledge-update`` / ``temporal-update`` -> the updated value; ``temporal-reasoning`` ->
one day of slack; anything else -> the base rubric. LongMemEval abstention questions (ids ending ``_abs``) get
``_abs`` appended to their category, as memini's cmd/qa does (``qa_category``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

BENCH_CLOCK = datetime.fromtimestamp(1_700_000_000, tz=UTC)  # memini's benchClock, 2023-11-14T22:13:20Z
NO_REFERENCE = "(no reference; unanswerable)"

READER_SYSTEM = """You answer the question using ONLY the provided memories.

IMPORTANT RULES:
1. Scan ALL provided memories before answering. Do a SECOND full scan after your
   initial read — items at later positions are commonly missed.
2. For conflicting values of the same fact, use the most recent memory. The latest
   value REPLACES all earlier ones — do not sum or average. Memories about different
   people/contexts are NOT conflicting.
3. Use the dates in [brackets] to resolve relative time references ('last year',
   'two months ago') to a specific date, month, or year. Answer with the absolute
   value — never repeat the relative phrase.
4. Memories tagged [may conflict with #N] disagree on the same claim. When their
   dates cannot order them, reply "conflicting memories" rather than silently
   picking one.
5. Connect facts across memories and infer the answer when it is implied rather
   than stated outright. Facts needed for an answer are often in unrelated
   conversations — search ALL memories for each fact independently.
6. For counting or listing questions, enumerate each item with its date before
   giving the total. Do not skip items found during reasoning.
7. Never invent a specific (name, date, number, place) that no memory states or
   implies. Finding related context is not the same as finding the answer.
8. If no memory is relevant, or the specific fact asked for is missing, reply
   "I don't know".

Before answering, reason step-by-step inside <mem_thinking> tags:
- List every relevant memory and its date.
- For temporal questions: identify all dates, compute intervals from the question date.
- For counting: enumerate each item with its date.
- For preference questions: scan ALL memories for what the user likes, dislikes,
  avoids, or prefers — even indirectly stated. Infer implicit preferences from
  their actions and choices, not just explicit "I prefer" statements.
- CONTEXT CHECK: Before using a memory's value, verify it applies to the SAME
  context as the question (same person, same topic, same time period).
After your reasoning, give the final answer on a new line after </mem_thinking>.
Reply with the fact(s) only, as briefly as the question allows: a name, date, number,
or short phrase for a single fact, or one short sentence when the question asks you
to combine several facts."""

JUDGE_BASE = ("You grade answers. Given a question, the reference answer, and a candidate answer, "
              "reply with exactly CORRECT or INCORRECT. The candidate is CORRECT if it conveys the same key fact(s) "
              "as the reference, even if phrased differently or with extra words. The candidate may be a distilled "
              "or summarized paraphrase of the reference; grade on the key fact(s), not the wording.")
JUDGE_KNOWLEDGE_UPDATE = JUDGE_BASE + (
    " The reference is the UPDATED value of a fact that changed over time: the candidate is CORRECT if it "
    "states the updated value (even if it also mentions the earlier value as outdated), and INCORRECT if it "
    "gives only the earlier, superseded value.")
JUDGE_TEMPORAL = JUDGE_BASE + (
    " Dates within one day of the reference are CORRECT (timezone and relative-date arithmetic slack).")
JUDGE_ABSTENTION = ("You grade answers to questions that are NOT answerable from the memories the "
                    "candidate saw. Reply with exactly CORRECT or INCORRECT. The candidate is CORRECT only if it "
                    "declines to answer — says it doesn't know, the information wasn't mentioned, or the question "
                    "can't be answered. Any substantive invented answer is INCORRECT.")
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


def is_correct(verdict: str) -> bool:
    """memini's verdict rule: the upper-cased reply contains CORRECT and not INCORRECT."""
    upper = verdict.upper()
    return "CORRECT" in upper and "INCORRECT" not in upper


def fingerprint() -> str:
    """A short hash of every prompt text and template: part of a QA run's identity (a changed prompt is another
    run, never resumed into an old checkpoint)."""
    probe = reader_message("q", [Memory("m")], None) + judge_message("q", "", "a")
    text = "\0".join([READER_SYSTEM, *RUBRICS.values(), probe])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
