"""LoCoMo (snap-research/LoCoMo ``data/locomo10.json``) at turn level and at session level, as memini loads it.

Turn level (``-suite locomo``): one item per dialogue turn, id ``<sample_id>/<dia_id>``, content
``[<session date>] <speaker>: <text>``. Session level (``-suite locomo-sessions``): one item per session, id
``<sample_id>/session_<n>``, content ``[<date>]`` then one ``<speaker>: <text>`` line per turn.
Gold = every ``D<n>:<m>`` found by regex in the raw ``evidence`` JSON; a question with none is skipped (and at
session level also one whose evidence maps to no session). Sessions are read in numeric order (memini iterates a
Go map, so its order is random; order only matters for score ties). Every group is one conversation.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime

from memini_bench.dataset import Dataset, Item, Question, check_not_empty
from memini_bench.loaders._json import expect, field_of, read_json, scalar_text

CATEGORY_LABELS = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_ID = re.compile(r"D\d+:\d+")


def parse_locomo_date(text: str) -> datetime | None:
    """``1:56 pm on 8 May, 2023`` (Go layout ``3:04 pm on 2 January, 2006``) as UTC; None when unparseable."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


class _Conversation:
    """One LoCoMo row: its group, its sessions (numeric order) and their turns."""

    def __init__(self, row: object, index: int, source: str) -> None:
        where = f"{source}: [{index}]"
        self.group = field_of(row, "sample_id", str, where, required=False, default="") or f"conv-{index}"
        conversation = field_of(row, "conversation", dict, where)
        self.qa = field_of(row, "qa", list, where)
        self.sessions: list[tuple[str, str, list[tuple[str, str, str]]]] = []  # (key, date, [(dia_id, speaker, text)])
        keyed = [(int(m.group(1)), key) for key in conversation if (m := _SESSION_KEY.match(key))]
        for _, key in sorted(keyed):
            turns = conversation[key]
            if not isinstance(turns, list):
                continue
            date = scalar_text(conversation.get(key + "_date_time"))
            parsed = []
            for j, turn in enumerate(turns):
                tw = f"{where}.conversation.{key}[{j}]"
                dia_id = field_of(turn, "dia_id", str, tw, required=False, default="")
                if dia_id:
                    speaker = field_of(turn, "speaker", str, tw, required=False, default="")
                    parsed.append((dia_id, speaker, field_of(turn, "text", str, tw, required=False, default="")))
            self.sessions.append((key, date, parsed))


def _evidence_ids(qa: dict) -> list[str]:
    return _EVIDENCE_ID.findall(json.dumps(qa.get("evidence")))


def _conversations(path: str, suite: str) -> list[_Conversation]:
    rows = read_json(path, suite)
    expect(isinstance(rows, list), str(path), "expected a JSON array of LoCoMo conversations (locomo10.json)")
    return [_Conversation(row, i, str(path)) for i, row in enumerate(rows)]


def _question(conv: _Conversation, j: int, qa: object, gold: list[str], now: datetime | None, source: str) -> Question:
    where = f"{source}: {conv.group}.qa[{j}]"
    return Question(
        id=f"{conv.group}/qa{j}", query=field_of(qa, "question", str, where), gold=tuple(gold), group=conv.group,
        answer=scalar_text(qa.get("answer")), category=scalar_text(qa.get("category")), now=now,
    )


def _skip_note(skipped: Counter, why: str) -> tuple[str, ...]:
    if not skipped:
        return ()
    cats = ", ".join(f"category {c}: {n}" for c, n in sorted(skipped.items()))
    return (f"skipped {sum(skipped.values())} questions {why} ({cats})",)


def load_locomo(path: str, **_: object) -> Dataset:
    """Turn level: 5,882 items and 1,982 questions on locomo10.json."""
    items: list[Item] = []
    questions: list[Question] = []
    skipped: Counter = Counter()
    unresolved: list[str] = []
    for conv in _conversations(path, "locomo"):
        first = len(items)
        for _key, date, turns in conv.sessions:
            when = parse_locomo_date(date)
            for dia_id, speaker, text in turns:
                body = f"{speaker}: {text}".strip()
                items.append(Item(id=f"{conv.group}/{dia_id}", content=f"[{date}] {body}" if date else body,
                                  group=conv.group, time=when))
        known = {item.id for item in items[first:]}
        times = [item.time for item in items[first:] if item.time]
        now = max(times) if times else None
        for j, qa in enumerate(conv.qa):
            gold = [f"{conv.group}/{e}" for e in _evidence_ids(qa if isinstance(qa, dict) else {})]
            if not gold:
                skipped[scalar_text(qa.get("category")) if isinstance(qa, dict) else "?"] += 1
                continue
            unresolved.extend(g for g in gold if g not in known)
            questions.append(_question(conv, j, qa, gold, now, str(path)))
    notes = _skip_note(skipped, "with no D<n>:<m> evidence id")
    if unresolved:
        notes += (f"{len(unresolved)} gold ids match no turn (never hit): {', '.join(unresolved)}",)
    ds = Dataset(name="locomo", items=tuple(items), questions=tuple(questions), notes=notes,
                 category_labels=CATEGORY_LABELS)
    return check_not_empty(ds, str(path))


def load_locomo_sessions(path: str, **_: object) -> Dataset:
    """Session level: 272 items and 1,981 questions on locomo10.json.

    Item time is the session date (memini leaves it unset at this level; it only matters for temporal re-ranking).
    """
    items: list[Item] = []
    questions: list[Question] = []
    skipped: Counter = Counter()
    unmapped: Counter = Counter()
    partly = 0
    for conv in _conversations(path, "locomo-sessions"):
        session_of: dict[str, str] = {}
        times = []
        for key, date, turns in conv.sessions:
            item_id = f"{conv.group}/{key}"
            lines = "".join(f"{f'{speaker}: {text}'.strip()}\n" for _, speaker, text in turns)
            content = (f"[{date}]\n" if date else "") + lines
            when = parse_locomo_date(date)
            times.append(when)
            items.append(Item(id=item_id, content=content.strip(), group=conv.group, time=when))
            session_of.update((dia_id, item_id) for dia_id, _, _ in turns)
        real_times = [t for t in times if t]
        now = max(real_times) if real_times else None
        for j, qa in enumerate(conv.qa):
            category = scalar_text(qa.get("category")) if isinstance(qa, dict) else "?"
            evidence = _evidence_ids(qa if isinstance(qa, dict) else {})
            if not evidence:
                skipped[category] += 1
                continue
            mapped = [session_of[e] for e in evidence if e in session_of]
            if not mapped:
                unmapped[category] += 1
                continue
            partly += len(mapped) < len(evidence)
            questions.append(_question(conv, j, qa, list(dict.fromkeys(mapped)), now, str(path)))
    notes = _skip_note(skipped, "with no D<n>:<m> evidence id") + \
        _skip_note(unmapped, "whose evidence ids map to no session")
    if partly:
        notes += (f"{partly} questions keep only the evidence ids that map to a session",)
    ds = Dataset(name="locomo-sessions", items=tuple(items), questions=tuple(questions), notes=notes,
                 category_labels=CATEGORY_LABELS)
    return check_not_empty(ds, str(path))
