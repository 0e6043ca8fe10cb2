"""LoCoMo (snap-research/LoCoMo ``data/locomo10.json``) at turn level and at session level, as memini loads it.

Turn level (``-suite locomo``): one item per dialogue turn, id ``<sample_id>/<dia_id>``, content
``[<session date>] <speaker>: <text>``. Session level (``-suite locomo-sessions``): one item per session, id
``<sample_id>/session_<n>``, content ``[<date>]`` then one ``<speaker>: <text>`` line per turn.
Gold = every ``D<n>:<m>`` found by regex in the raw ``evidence`` JSON; a question with none is skipped (and at
session level also one whose evidence maps to no session). Sessions are read in numeric order (memini iterates a
Go map, so its order is random; order only matters for score ties). Every group is one conversation.

Every question carries ``meta["evidence_distance"]``: the conversation's last session number minus the earliest
session its evidence names (``evidence_distance``); the normal run breaks recall down by it. Observations and session
summaries as the units: ``loaders.locomo_units`` (``-unit``).

Faults, beyond memini (which decodes what it can): a wrong type is an error with its JSON path; two conversations
with one ``sample_id`` are refused (they would merge into one group and share question ids); a ``dia_id`` repeated
within a conversation keeps its first turn, and a ``session_<n>`` that is not an array of turns is skipped, each
counted in a note, as are session dates that do not parse (those items have no time, as in memini).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from memini_bench.core.dataset import Dataset, Item, Question, Source, finish
from memini_bench.loaders._json import (
    At,
    check_id,
    field_of,
    object_at,
    read_json_source,
    scalar_text,
    text_of,
    value_of,
)
from memini_bench.loaders.dates import parse_layout

CATEGORY_LABELS = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_ID = re.compile(r"D\d+:\d+")
_DIA_SESSION = re.compile(r"D(\d+):\d+")
#: Question meta key: sessions between the question and its earliest evidence (``evidence_distance``).
DISTANCE = "evidence_distance"


_MAX_DIGITS = 18  # a session number longer than this is not a real session (int() of 5,000 digits is refused)


def _number(digits: str) -> int | None:
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= _MAX_DIGITS else None


def session_number(key: str) -> int | None:
    """``session_12`` -> 12; None for a number too long to be a session's."""
    return _number(key.rsplit("_", 1)[1])


def session_key(digits: str) -> str:
    """``S<n>`` for session digits (leading zeros dropped, no int(): any length is fine)."""
    return "S" + (digits.lstrip("0") or "0")


def evidence_distance(last_session: int, evidence: list[str]) -> int | None:
    """Sessions between the question (asked after ``last_session``) and its earliest evidence: the last session
    number minus the smallest session number its ``D<n>:<m>`` ids name (0 = the last session); ids naming no session
    of the conversation are ignored; None when none is left."""
    sessions = [n for e in evidence if (m := _DIA_SESSION.match(e)) and (n := _number(m.group(1))) is not None
                and 0 < n <= last_session]
    return last_session - min(sessions) if sessions else None


def distance_meta(last_session: int, evidence: list[str]) -> tuple[tuple[str, object], ...]:
    d = evidence_distance(last_session, evidence)
    return () if d is None else ((DISTANCE, d),)


def parse_locomo_date(text: str) -> datetime | None:
    """``1:56 pm on 8 May, 2023`` (Go layout ``3:04 pm on 2 January, 2006``) as UTC; None when unparseable."""
    return parse_layout(text, "%I:%M %p on %d %B, %Y")


@dataclass
class _Faults:
    """What the loader tolerated, for the notes."""

    repeated_turns: list[str] = field(default_factory=list)
    bad_sessions: list[str] = field(default_factory=list)
    bad_dates: int = 0

    def notes(self) -> tuple[str, ...]:
        out = []
        if self.repeated_turns:
            out.append(f"{len(self.repeated_turns)} turns repeat an earlier dia_id of their conversation and were "
                       f"dropped (the first is kept): {', '.join(self.repeated_turns[:5])}")
        if self.bad_sessions:
            out.append(f"{len(self.bad_sessions)} session entries are not arrays of turns and were skipped: "
                       f"{', '.join(self.bad_sessions[:5])}")
        if self.bad_dates:
            out.append(f"{self.bad_dates} session dates do not parse as '3:04 pm on 2 January, 2006' (their items "
                       "have no time)")
        return tuple(out)


def _numeric_order(key: tuple[str, str]) -> tuple[int, str]:
    digits = key[0].lstrip("0")
    return len(digits), digits  # numeric order without int(): a 5,000-digit session number is just a big number


class _Conversation:
    """One LoCoMo row: its group, its sessions (numeric order) and their turns."""

    def __init__(self, row: object, index: int, source: str, faults: _Faults) -> None:
        at = At(source) / index
        object_at(row, at, "a LoCoMo conversation object")
        self.at = at
        self.row = row
        sample_id = field_of(row, "sample_id", str, at, required=False, default="")
        self.group = check_id(sample_id, at / "sample_id") if sample_id else f"conv-{index}"
        conversation = field_of(row, "conversation", dict, at)
        self.qa = field_of(row, "qa", list, at)
        self.sessions: list[tuple[str, str, list[tuple[str, str, str]]]] = []  # (key, date, [(dia_id, speaker, text)])
        keyed = sorted(((m.group(1), key) for key in conversation if (m := _SESSION_KEY.match(key))),
                       key=_numeric_order)
        seen: set[str] = set()
        for _, key in keyed:
            turns = conversation[key]
            if not isinstance(turns, list):
                faults.bad_sessions.append(f"{self.group}/{key}")
                continue
            date = scalar_text(conversation.get(key + "_date_time"))
            faults.bad_dates += bool(date.strip()) and parse_locomo_date(date) is None
            parsed = []
            for j, turn in enumerate(turns):
                tw = at / "conversation" / key / j
                object_at(turn, tw, "a turn object with speaker, dia_id and text")
                dia_id = field_of(turn, "dia_id", str, tw, required=False, default="")
                if not dia_id:
                    continue  # memini skips turns with an empty dia_id
                check_id(dia_id, tw / "dia_id")
                if dia_id in seen:
                    faults.repeated_turns.append(f"{self.group}/{dia_id}")
                    continue
                seen.add(dia_id)
                parsed.append((dia_id, text_of(turn, "speaker", tw, required=False),
                               text_of(turn, "text", tw, required=False)))
            self.sessions.append((key, date, parsed))
        self.last_session = max((n for key, _, _ in self.sessions if (n := session_number(key)) is not None),
                                default=0)

    def question_at(self, j: int) -> At:
        return self.at / "qa" / j


def _evidence_ids(qa: dict) -> list[str]:
    return _EVIDENCE_ID.findall(json.dumps(qa.get("evidence")))


def _conversations(path: str, suite: str, faults: _Faults) -> tuple[list[_Conversation], Source]:
    rows, read = read_json_source(path, suite)
    value_of(rows, list, At(str(path)))
    conversations = [_Conversation(row, i, str(path), faults) for i, row in enumerate(rows)]
    first: dict[str, int] = {}
    for i, conv in enumerate(conversations):
        if conv.group in first:
            (conv.at / "sample_id").fail(f"conversation {conv.group!r} appears twice (also [{first[conv.group]}]); "
                                         "each conversation needs its own sample_id")
        first[conv.group] = i
    return conversations, read


def _qa(conv: _Conversation, j: int, qa: object) -> tuple[dict, str]:
    """The j-th QA entry, checked to be an object, and its category."""
    object_at(qa, conv.question_at(j), "a QA object with question, answer, evidence and category")
    return qa, scalar_text(qa.get("category"))


def _question(conv: _Conversation, j: int, qa: dict, gold: list[str], now: datetime | None,
              meta: tuple[tuple[str, object], ...] = ()) -> Question:
    at = conv.question_at(j)
    return Question(
        id=f"{conv.group}/qa{j}", query=text_of(qa, "question", at), gold=tuple(gold), group=conv.group,
        answer=scalar_text(qa.get("answer")), category=scalar_text(qa.get("category")), now=now, meta=meta,
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
    faults = _Faults()
    conversations, read = _conversations(path, "locomo", faults)
    for conv in conversations:
        first = len(items)
        for _key, date, turns in conv.sessions:
            when = parse_locomo_date(date)
            for dia_id, speaker, text in turns:
                body = f"{speaker}: {text}".strip()
                items.append(Item(id=f"{conv.group}/{dia_id}", content=f"[{date}] {body}" if date else body,
                                  group=conv.group, time=when))
        times = [item.time for item in items[first:] if item.time]
        now = max(times) if times else None
        for j, raw in enumerate(conv.qa):
            qa, category = _qa(conv, j, raw)
            evidence = _evidence_ids(qa)
            gold = [f"{conv.group}/{e}" for e in evidence]
            if not gold:
                skipped[category] += 1
                continue
            questions.append(_question(conv, j, qa, gold, now, distance_meta(conv.last_session, evidence)))
    notes = _skip_note(skipped, "with no D<n>:<m> evidence id") + faults.notes()
    ds = Dataset(name="locomo", items=tuple(items), questions=tuple(questions), notes=notes,
                 category_labels=CATEGORY_LABELS, sources=(read,))
    return finish(ds, str(path))


def load_locomo_sessions(path: str, **_: object) -> Dataset:
    """Session level: 272 items and 1,981 questions on locomo10.json.

    Item time is the session date (memini leaves it unset at this level; it only matters for temporal re-ranking).
    """
    items: list[Item] = []
    questions: list[Question] = []
    skipped: Counter = Counter()
    unmapped: Counter = Counter()
    partly = 0
    faults = _Faults()
    conversations, read = _conversations(path, "locomo-sessions", faults)
    for conv in conversations:
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
        for j, raw in enumerate(conv.qa):
            qa, category = _qa(conv, j, raw)
            evidence = _evidence_ids(qa)
            if not evidence:
                skipped[category] += 1
                continue
            mapped = [session_of[e] for e in evidence if e in session_of]
            if not mapped:
                unmapped[category] += 1
                continue
            partly += len(mapped) < len(evidence)
            questions.append(_question(conv, j, qa, list(dict.fromkeys(mapped)), now,
                                       distance_meta(conv.last_session, evidence)))
    notes = _skip_note(skipped, "with no D<n>:<m> evidence id") + \
        _skip_note(unmapped, "whose evidence ids map to no session") + faults.notes()
    if partly:
        notes += (f"{partly} questions keep only the evidence ids that map to a session",)
    ds = Dataset(name="locomo-sessions", items=tuple(items), questions=tuple(questions), notes=notes,
                 category_labels=CATEGORY_LABELS, sources=(read,))
    return finish(ds, str(path))
