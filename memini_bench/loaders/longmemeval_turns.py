"""LongMemEval at turn granularity (``-granularity turn``), as LongMemEval's own ``src/retrieval/run_retrieval.py``
builds its turn corpus (``process_item_flat_index``).

Items are the **user** turns of every haystack session (assistant turns are not indexed, as upstream), id
``<prefix><session_id>_<n>`` where n is the turn's 1-based place among *all* turns of its session (upstream's
``sess_id + '_' + str(i_turn + 1)``), ``session`` = ``<prefix><session_id>``. Content is the turn's text as is
(``-session-doc dated`` puts ``[<date>] `` before it; ``full`` and ``user-only`` are the same at this level).

Gold = the user turns with ``has_answer: true`` in the question's answer sessions (upstream: the turn ids that keep
``answer`` in their name, i.e. the ``has_answer`` turns of the ``answer_*`` sessions). A question none of whose
user turns has ``has_answer`` is left out of scoring, as upstream's averaging skips it ("no target turns from the
user side"); the count is in the notes. Each scored question carries ``meta["sessions_from_turns"]`` so the normal
run also reports session scores computed from the turn ranking (``evaluation.longmemeval_turns``).
"""

from __future__ import annotations

from datetime import datetime

from memini_bench.core.dataset import Item
from memini_bench.loaders._json import At, object_at, value_of

GRANULARITIES = ("session", "turn")
#: Question meta key: score this question's sessions from its turn ranking too.
SESSIONS_FROM_TURNS = "sessions_from_turns"


def turn_items(turns: object, *, sid: str, prefix: str, group: str, date: str, when: datetime | None,
               dated: bool, answer_session: bool, at: At) -> tuple[list[Item], list[str]]:
    """The user-turn items of one haystack session, and the ids of those that are gold (``has_answer`` turns of an
    answer session)."""
    value_of(turns, list, at)
    items: list[Item] = []
    gold: list[str] = []
    for j, turn in enumerate(turns):
        object_at(turn, at / j, "a turn object with role and content")
        if turn.get("role") != "user":
            continue
        content = value_of(turn.get("content", ""), str, at / j / "content")
        has_answer = turn.get("has_answer")
        if has_answer is not None:
            value_of(has_answer, bool, at / j / "has_answer")
        item_id = f"{prefix}{sid}_{j + 1}"
        text = f"[{date}] {content}" if dated and date.strip() else content
        items.append(Item(id=item_id, content=text, group=group, time=when, session=prefix + sid))
        if answer_session and has_answer:
            gold.append(item_id)
    return items, gold
