"""``-qa-full-context TOKENS``: the full-context floor of end-to-end QA, one arm (``full-context``) beside the
retrieval arms.

The reader gets the question's whole history instead of a recall: every item of its group in time order
(``systems.floors.time_ordered``, the order of the ``recent-k`` floor: an item with no time takes the time of the
item before it, ties by data set order; items dated after the question left out), truncated to the reader's
window: the most recent items whose estimated tokens (``runs.estimate_tokens`` of each item's text, ``(utf-8 bytes
+ 3) // 4``) sum to at most ``TOKENS``; the oldest are cut, as LongMemEval's full-history baseline truncates. The
cut is stated, never silent: how many questions lost items, and how many items and tokens the reader saw against
the whole history (``Cut``: in the results' ``full_context`` block and on stderr).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from memini_bench.core.dataset import Dataset, Item
from memini_bench.core.runs import estimate_tokens
from memini_bench.qa import prompts
from memini_bench.qa.engine import Task
from memini_bench.systems.floors import not_after, time_ordered

ARM = "full-context"


@dataclass(frozen=True, slots=True)
class Cut:
    """What the window cut, over every question."""

    window_tokens: int
    questions: int
    questions_cut: int
    items_history: int
    items_given: int
    tokens_history: int
    tokens_given: int

    def to_json(self) -> dict:
        return asdict(self)

    def statement(self) -> str:
        return (f"{ARM}: the reader's window of {self.window_tokens:,} estimated tokens cut the history of "
                f"{self.questions_cut} of {self.questions} questions (it saw {self.items_given:,} of "
                f"{self.items_history:,} items, {self.tokens_given:,} of {self.tokens_history:,} tokens; the oldest "
                "cut first)")


def window(history: Sequence[Item], tokens: int) -> list[Item]:
    """The most recent items of ``history`` (oldest first) whose estimated tokens sum to at most ``tokens``."""
    kept: list[Item] = []
    used = 0
    for item in reversed(history):
        cost = estimate_tokens(item.content)
        if used + cost > tokens:
            break
        kept.append(item)
        used += cost
    return kept[::-1]


def histories(ds: Dataset) -> list[list[Item]]:
    """Each question's whole history (in question order): its group's items in time order, none after its date."""
    groups = time_ordered(ds.items)
    return [[item for t, item in groups.get(q.group, []) if not_after(t, q.now)] for q in ds.questions]


def tasks(ds: Dataset, tokens: int) -> tuple[list[Task], Cut]:
    """One task per question for the ``full-context`` arm, and what the window cut."""
    out: list[Task] = []
    cut = items_h = items_g = tok_h = tok_g = 0
    for index, (q, history) in enumerate(zip(ds.questions, histories(ds), strict=True)):
        given = window(history, tokens)
        cut += len(given) < len(history)
        items_h, items_g = items_h + len(history), items_g + len(given)
        tok_h += sum(estimate_tokens(i.content) for i in history)
        tok_g += sum(estimate_tokens(i.content) for i in given)
        out.append(Task(ARM, index, q, prompts.qa_category(q.category, q.id), tuple((i.id,) for i in given),
                        tuple(prompts.Memory(i.content, i.time) for i in given)))
    return out, Cut(tokens, len(ds.questions), cut, items_h, items_g, tok_h, tok_g)
