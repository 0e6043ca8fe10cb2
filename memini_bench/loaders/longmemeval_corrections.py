"""Fact histories from real data: LongMemEval's knowledge-update questions as a ``-suite corrections`` input
(``memini-bench run -suite corrections -data longmemeval_oracle.json``; docs/temporal.md).

A knowledge-update question (``question_type == "knowledge-update"``) asks for a value the user stated in one
session and changed in a later one; its ``answer_session_ids`` are the sessions that hold the values, dated by
``haystack_dates``. Each such question becomes one fact of the corrections schema (``loaders.corrections``), and the
document is read by that schema's own parser, so what each write is and each question's ids follow from it:

- the **writes** are the haystack's units in date order: whole sessions (``-granularity session``, the default as in
  ``-suite longmemeval``: id ``<session_id>``, text ``role: content`` per turn) or the user turns of each session
  (``-granularity turn``, LongMemEval's own turn-level retrieval unit: assistant turns are not indexed; id
  ``<session_id>_<n>``, n the turn's 1-based place among all turns of its session, as
  ``loaders.longmemeval_turns``); ids are prefixed ``<question_id>/`` unless the haystack is shared;
- the **evidence** of an answer session is the write of the fact's value as it stood at that session's date: its
  ``has_answer`` user turns (turn), or the session itself (session). Each answer session is taken to state its own
  value (value = the session id), so the newest one holds the current value and supersedes the older ones;
- the **question** is a ``current`` question on that fact: gold = the newest answer session's evidence, stale =
  the older sessions' evidence (``stale_above@K``: the old value outranks the new one);
- every other unit is a distractor write (a fact of its own, value ``said``), as the generated suite's chatter.

Left out, and counted in the data set's notes (with the ids): abstention questions (``_abs``: nothing to recall);
questions that ask for the *earlier* value (wording ``previous``, ``previously``, ``before``, ``earlier``,
``originally``, ``initially``, ``used to``: the answer is the stale value, so they are not current-value
questions); questions with fewer than two answer sessions that have a parseable date (and, at turn level, a
``has_answer`` user turn), or whose newest answer session is not strictly later than the others (which value is
current is then unknown); in a shared haystack, a question whose evidence an earlier question already claimed.
Sessions whose date does not parse are dropped (they cannot be placed in time), as are repeats of a session id
within a haystack (the first is kept).

``shared_haystack`` (``-shared-haystack``) pools every record's sessions, deduplicated by session id, into one
history ``longmemeval`` (the other question types' sessions become distractors): the oracle files hold only
evidence sessions per record, so pooling is what makes them a retrieval test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from memini_bench.errors import BenchError
from memini_bench.loaders._json import At, check_id, field_of, object_at, text_of, value_of
from memini_bench.loaders.longmemeval import SHARED_GROUP, doc_of, parse_lme_date
from memini_bench.loaders.longmemeval_turns import GRANULARITIES

KNOWLEDGE_UPDATE = "knowledge-update"
#: A question with this wording asks for the value before the update (the stale one), not the current value.
EARLIER_VALUE = re.compile(r"\b(previous|previously|before|earlier|originally|initially|used to)\b", re.IGNORECASE)
DISTRACTOR_VALUE = "said"


@dataclass
class _Unit:
    """One write: its id, text, time and, for a user turn, whether it is marked ``has_answer``."""

    id: str
    text: str
    time: datetime
    order: int
    has_answer: bool = False


@dataclass
class _Session:
    sid: str
    time: datetime
    units: list[_Unit]


@dataclass
class _Left:
    """The questions left out, by reason (module docstring), and the sessions dropped."""

    abstention: list[str] = field(default_factory=list)
    earlier_value: list[str] = field(default_factory=list)
    too_few: list[str] = field(default_factory=list)
    tied: list[str] = field(default_factory=list)
    claimed: list[str] = field(default_factory=list)
    undated_sessions: int = 0
    repeated_sessions: int = 0

    def notes(self) -> list[str]:
        out = []
        for ids, why in ((self.abstention, "abstention (_abs) questions: nothing to recall"),
                         (self.earlier_value, "ask for the earlier value (previous / before / earlier ...), not the "
                                              "current one"),
                         (self.too_few, "have fewer than two dated answer sessions with evidence"),
                         (self.tied, "have no answer session strictly later than the others"),
                         (self.claimed, "share their evidence with an earlier question (shared haystack)")):
            if ids:
                shown = ", ".join(ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
                out.append(f"left out {len(ids)} knowledge-update questions that {why}: {shown}")
        if self.undated_sessions:
            out.append(f"dropped {self.undated_sessions} haystack sessions whose date does not parse as "
                       "'2006/01/02 (Mon) 15:04' (they cannot be placed in time)")
        if self.repeated_sessions:
            out.append(f"dropped {self.repeated_sessions} haystack sessions that repeat a session id of their "
                       "haystack (the first is kept)")
        return out


def _units(session: object, sid: str, date: str, when: datetime, turns: bool, prefix: str, at: At,
           order: list[int]) -> list[_Unit]:
    value_of(session, list, at)
    pairs: list[tuple[str, str]] = []
    units: list[_Unit] = []
    for j, turn in enumerate(session):
        object_at(turn, at / j, "a turn object with role and content")
        role = text_of(turn, "role", at / j, required=False)
        content = text_of(turn, "content", at / j, required=False)
        has_answer = turn.get("has_answer")
        if has_answer is not None:
            value_of(has_answer, bool, at / j / "has_answer")
        pairs.append((role, content))
        if turns and role == "user" and content.strip():
            order[0] += 1
            units.append(_Unit(f"{prefix}{sid}_{j + 1}", content, when, order[0], bool(has_answer)))
    if not turns:
        text = doc_of(pairs, date, "full")
        if text.strip():
            order[0] += 1
            units.append(_Unit(f"{prefix}{sid}", text, when, order[0],
                               any(u for u in (t.get("has_answer") for t in session) if u)))
    return units


def _sessions(row: dict, at: At, turns: bool, prefix: str, left: _Left, order: list[int]) -> list[_Session]:
    sessions = field_of(row, "haystack_sessions", list, at)
    sids = field_of(row, "haystack_session_ids", list, at)
    dates = field_of(row, "haystack_dates", list, at)
    if not (len(sessions) == len(sids) == len(dates)):
        at.fail(f"haystack_sessions ({len(sessions)}), haystack_session_ids ({len(sids)}) and haystack_dates "
                f"({len(dates)}) differ in length; give one id and one date per session")
    out: list[_Session] = []
    own: set[str] = set()
    for s, session in enumerate(sessions):
        sid = check_id(value_of(sids[s], str, at / "haystack_session_ids" / s), at / "haystack_session_ids" / s)
        date = value_of(dates[s], str, at / "haystack_dates" / s)
        if sid in own:
            left.repeated_sessions += 1
            continue
        own.add(sid)
        when = parse_lme_date(date)
        units = _units(session, sid, date, when, turns, prefix, at / "haystack_sessions" / s, order)  # type: ignore
        if when is None:
            left.undated_sessions += 1
            continue
        out.append(_Session(sid, when, units))
    return out


def _evidence(row: dict, at: At, qid: str, sessions: dict[str, _Session], turns: bool, left: _Left,
              claimed: set[str]) -> list[tuple[_Session, list[_Unit]]] | None:
    """The question's answer sessions with their evidence units, oldest first; None when it is left out."""
    if qid.endswith("_abs"):
        left.abstention.append(qid)
        return None
    if EARLIER_VALUE.search(text_of(row, "question", at)):
        left.earlier_value.append(qid)
        return None
    answers = field_of(row, "answer_session_ids", list, at)
    found = []
    for j, a in enumerate(answers):
        sid = check_id(value_of(a, str, at / "answer_session_ids" / j), at / "answer_session_ids" / j)
        session = sessions.get(sid)
        if session is None:
            continue
        units = [u for u in session.units if u.has_answer] if turns else session.units[:1]
        if units:
            found.append((session, units))
    found.sort(key=lambda e: e[0].time)
    if len({s.sid for s, _ in found}) < 2:
        left.too_few.append(qid)
        return None
    if found[-1][0].time <= found[-2][0].time:
        left.tied.append(qid)
        return None
    ids = {u.id for _, units in found for u in units}
    if ids & claimed:
        left.claimed.append(qid)
        return None
    claimed |= ids
    return found


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _history(group: str, units: list[_Unit], facts: dict[str, tuple[str, str]], questions: list[dict]) -> dict:
    """One history of the corrections schema: every unit a write (evidence a write of its fact's value,
    the rest distractors), in time order (ties in haystack order)."""
    events = []
    for u in sorted(units, key=lambda u: (u.time, u.order)):
        fact, value = facts.get(u.id, (f"said/{u.id}", DISTRACTOR_VALUE))
        events.append({"id": u.id, "time": _iso(u.time), "fact": fact, "value": value, "text": u.text})
    return {"group": group, "events": events, "questions": questions}


def histories_from_longmemeval(records: object, source: str, *, shared_haystack: bool = False,
                               granularity: str = "session") -> tuple[dict, list[str]]:
    """The corrections-schema document of a LongMemEval file's knowledge-update questions (module docstring), and
    the notes on what was left out. Every problem of the file is a BenchError naming ``source`` and the JSON
    path."""
    if granularity not in GRANULARITIES:
        raise BenchError(f"-granularity {granularity!r}: unknown; use session or turn")
    turns = granularity == "turn"
    top = At(source)
    value_of(records, list, top)
    left = _Left()
    order = [0]
    claimed: set[str] = set()
    seen_q: dict[str, int] = {}
    pooled: dict[str, _Session] = {}
    pooled_facts: dict[str, tuple[str, str]] = {}
    pooled_questions: list[dict] = []
    histories: list[dict] = []
    asked = 0
    for i, row in enumerate(records):
        at = top / i
        object_at(row, at, "a LongMemEval record object")
        qid = check_id(text_of(row, "question_id", at, nonblank=True), at / "question_id")
        if qid in seen_q:
            (at / "question_id").fail(f"{qid!r} appears twice (also [{seen_q[qid]}]); question ids must be unique")
        seen_q[qid] = i
        is_update = text_of(row, "question_type", at, required=False) == KNOWLEDGE_UPDATE
        if not shared_haystack and not is_update:
            continue
        prefix = "" if shared_haystack else f"{qid}/"
        own = _sessions(row, at, turns, prefix, left, order)
        if shared_haystack:
            for s in own:
                pooled.setdefault(s.sid, s)  # a session id met again keeps its first text, as the shared loader
            sessions = {s.sid: pooled[s.sid] for s in own}
        else:
            sessions = {s.sid: s for s in own}
        if not is_update:
            continue
        found = _evidence(row, at, qid, sessions, turns, left, claimed)
        if found is None:
            continue
        asked += 1
        fact = f"update/{qid}"
        facts = {u.id: (fact, session.sid) for session, units in found for u in units}
        question = {"id": qid, "kind": "current", "fact": fact, "query": text_of(row, "question", at, nonblank=True)}
        if shared_haystack:
            pooled_facts.update(facts)
            pooled_questions.append(question)
        else:
            histories.append(_history(qid, [u for s in own for u in s.units], facts, [question]))
    if shared_haystack and asked:
        histories = [_history(SHARED_GROUP, [u for s in pooled.values() for u in s.units], pooled_facts,
                              pooled_questions)]
    if not asked:
        top.fail(f"no knowledge-update question to ask ({'; '.join(left.notes()) or 'none in the file'}); "
                 "-suite corrections reads a LongMemEval file's knowledge-update questions, or a fact-history file "
                 "(docs/temporal.md)")
    name = "longmemeval-corrections" + ("-shared" if shared_haystack else "") + ("-turns" if turns else "")
    units = sum(len(h["events"]) for h in histories)
    notes = [f"LongMemEval knowledge-update: {asked} current-value questions, {units} "
             f"{'user-turn' if turns else 'session'} writes in {len(histories)} histories; each answer session's "
             "evidence is the value as of its date, the newest current (loaders.longmemeval_corrections)"]
    return {"name": name, "histories": histories}, notes + left.notes()
