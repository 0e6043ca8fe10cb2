"""LongMemEval (xiaowu0162/LongMemEval: ``longmemeval_s``, ``_m``, ``_oracle``), as memini loads it, and beyond.

Each record is one question with its private haystack of sessions: group = ``question_id``, one item per
haystack session with id ``<question_id>/<session_id>``, gold = the ``answer_session_ids`` under the same prefix.
Session text (``-session-doc``): ``full`` = ``role: content\\n`` per turn; ``user-only`` = the user turns'
``content\\n`` (falls back to full when there are none); ``dated`` = ``[<date>]\\n`` + full.

Beyond memini:
- ``abstention="exclude"`` (default, LongMemEval's own protocol) drops the ``_abs`` questions from scoring; their
  sessions stay in the corpus (as in memini, whose keyword statistics are global). ``include`` keeps them. The
  excluded questions stay in ``Dataset.excluded`` with their record index as ``Question.position``, so
  ``-holdout`` is taken on memini's full question list first: the held set is memini's either way.
- ``shared_haystack=True`` pools every record's sessions, deduplicated by session id, into one group
  ``longmemeval``; item ids and gold are bare session ids. This turns the oracle file (whose haystacks hold only
  evidence sessions) into a real retrieval test.
- ``granularity="turn"`` (``-granularity turn``): one item per user turn, gold the ``has_answer`` turns, as
  LongMemEval's retrieval code builds it (``loaders.longmemeval_turns``); the name gets ``-turns``.
- Faults: a wrong type is an error with its JSON path; two records with one ``question_id`` are refused (their
  haystacks would merge into one group); a session id repeated within one haystack keeps its first session;
  dates that do not parse leave the time unset (as in memini); each is counted in a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain

from memini_bench.core.dataset import Dataset, Item, Question, finish
from memini_bench.errors import BenchError
from memini_bench.loaders._json import (
    ID_FORBIDDEN_RE,
    At,
    check_id,
    field_of,
    object_at,
    scalar_text,
    text_of,
    value_of,
)
from memini_bench.loaders._stream import UNPARSED, Shared, json_array
from memini_bench.loaders.dates import parse_layout
from memini_bench.loaders.longmemeval_turns import GRANULARITIES, SESSIONS_FROM_TURNS, turn_items

SESSION_DOCS = ("full", "user-only", "dated")
ABSTENTION_MODES = ("exclude", "include")
SHARED_GROUP = "longmemeval"
DATE_LAYOUT = "%Y/%m/%d (%a) %H:%M"


_CANONICAL_DATE = re.compile(r"(\d{4})/(\d\d)/(\d\d) \((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\) (\d\d):(\d\d)", re.ASCII)


def parse_lme_date(text: str) -> datetime | None:
    """``2023/05/30 (Tue) 23:40`` (Go layout ``2006/01/02 (Mon) 15:04``) as UTC; None when unparseable. The
    canonical spelling is read directly (``strptime`` ignores the weekday too); anything else, or a field out of
    range, goes through ``strptime``, so the result is ``parse_layout``'s either way."""
    m = _CANONICAL_DATE.fullmatch(text)
    if m is not None:
        try:
            return datetime(*map(int, m.groups()), tzinfo=UTC)  # type: ignore[misc]
        except ValueError:
            pass
    return parse_layout(text, DATE_LAYOUT)


def plain_pairs(turns: object) -> list[tuple[str, str]] | None:
    """The (role, content) of each turn when ``turns`` is a list of objects whose role and content are strings
    (decided in two passes of built-ins, no JSON place made); None otherwise, for ``session_doc`` to check."""
    if type(turns) is not list:
        return None
    try:
        pairs = [(turn["role"], turn["content"]) for turn in turns]
    except (TypeError, KeyError):
        return None
    return pairs if set(map(type, chain.from_iterable(pairs))) <= {str} else None


def session_doc(turns: object, date: str, mode: str, at: At) -> str:
    """One haystack session as text (see the module docstring for the three modes)."""
    value_of(turns, list, at)
    pairs = []
    for j, turn in enumerate(turns):
        if type(turn) is dict:  # the common case, checked without making a JSON place per turn
            role, content = turn.get("role"), turn.get("content")
            if type(role) is str and type(content) is str:
                pairs.append((role, content))
                continue
        object_at(turn, at / j, "a turn object with role and content")
        pairs.append((text_of(turn, "role", at / j, required=False), text_of(turn, "content", at / j, required=False)))
    return doc_of(pairs, date, mode)


def doc_of(pairs: list[tuple[str, str]], date: str, mode: str) -> str:
    """``session_doc`` of checked (role, content) pairs."""
    full = "".join([f"{role}: {content}\n" for role, content in pairs])
    if mode == "user-only":
        user = "".join(f"{content}\n" for role, content in pairs if role == "user")
        return user or full
    if mode == "dated" and date.strip():
        return doc_of_dated(full, date)
    return full


def _session_text(turns: object, date: str, mode: str, at: At) -> str:
    """``session_doc``, with plain turns (``plain_pairs``) made into text without a JSON place per turn."""
    pairs = plain_pairs(turns)
    return doc_of(pairs, date, mode) if pairs is not None else session_doc(turns, date, mode, at)


def doc_of_dated(full: str, date: str) -> str:
    """``doc_of`` in ``dated`` mode from the ``full`` text (``date`` not blank)."""
    return f"[{date}]\n{full}"


def _string_at(values: list, index: int, at: At) -> str:
    """``values[index]`` as a string: "" when the list is shorter or the entry is null."""
    if index >= len(values) or values[index] is None:
        return ""
    return value_of(values[index], str, at / index)


@dataclass
class _Tally:
    """What the loader tolerated or dropped, for the notes."""

    abstained: int = 0
    conflicts: int = 0
    repeated: list[str] = field(default_factory=list)
    bad_dates: int = 0
    bad_question_dates: int = 0
    no_target: int = 0

    def notes(self, shared: bool, items: int, records: int) -> list[str]:
        notes = []
        if self.abstained:
            notes.append(f"excluded {self.abstained} abstention (_abs) questions from scoring (-abstention include "
                         "keeps them)")
        if self.repeated:
            notes.append(f"{len(self.repeated)} haystack sessions repeat a session id of their own haystack and were "
                         f"dropped (the first is kept): {', '.join(self.repeated[:5])}")
        if self.bad_dates:
            notes.append(f"{self.bad_dates} haystack dates do not parse as '2006/01/02 (Mon) 15:04' (those sessions "
                         "have no time)")
        if self.no_target:
            notes.append(f"left out {self.no_target} questions with no has_answer user turn in their answer sessions "
                         "(LongMemEval's turn-level evaluation skips them)")
        if self.bad_question_dates:
            notes.append(f"{self.bad_question_dates} question dates do not parse (those questions have no 'now')")
        if shared:
            notes.append(f"shared haystack: {items} unique sessions pooled from {records} records"
                         + (f"; {self.conflicts} repeated session ids with differing text kept their first text"
                            if self.conflicts else ""))
        return notes


def load_longmemeval(path: str, *, session_doc_mode: str = "full", abstention: str = "exclude",
                     shared_haystack: bool = False, granularity: str = "session", **_: object) -> Dataset:
    """The records at ``path`` (module docstring). Every question keeps its record index as ``position``, and
    excluded abstention questions ride in ``Dataset.excluded``, so ``-holdout`` splits memini's full list."""
    if session_doc_mode not in SESSION_DOCS:
        raise BenchError(f"-session-doc {session_doc_mode!r}: unknown; use one of {', '.join(SESSION_DOCS)}")
    if abstention not in ABSTENTION_MODES:
        raise BenchError(f"-abstention {abstention!r}: unknown; use exclude or include")
    if granularity not in GRANULARITIES:
        raise BenchError(f"-granularity {granularity!r}: unknown; use session or turn")
    turns = granularity == "turn"
    # A large file is streamed record by record and each distinct session text kept once (LongMemEval-M is 2.7 GB
    # of JSON whose filler sessions recur across records): memory grows with the distinct text, not the file.
    # Where the stream parses each distinct session's bytes once (``_stream.Shared``), each one's text is made once
    # too: ``by_digest`` maps the bytes' digest to the text (for -session-doc dated, the text before its date).
    rows, source = json_array(path, "longmemeval", shared="" if turns else "haystack_sessions")
    texts: dict[str, str] = {}
    by_digest: dict[bytes, str] = {}
    dated = session_doc_mode == "dated"
    records = 0
    items: list[Item] = []
    questions: list[Question] = []
    excluded: list[Question] = []
    seen_sessions: dict[str, int] = {}
    first_record: dict[str, int] = {}
    tally = _Tally()
    when_of: dict[str, datetime | None] = {}  # each distinct date parsed once (haystacks share their sessions' dates)
    for i, row in enumerate(rows):
        records += 1
        at = At(str(path)) / i
        object_at(row, at, "a LongMemEval record object")
        qid = field_of(row, "question_id", str, at, required=False, default="")
        qid = check_id(qid, at / "question_id") if qid else f"q-{i}"
        if qid in first_record:
            (at / "question_id").fail(f"{qid!r} appears twice (also [{first_record[qid]}]); each record is one "
                                      "question with its own haystack, so question ids must be unique")
        first_record[qid] = i
        group = SHARED_GROUP if shared_haystack else qid
        prefix = "" if shared_haystack else f"{qid}/"
        sessions = field_of(row, "haystack_sessions", list, at)
        sids = field_of(row, "haystack_session_ids", list, at, required=False, default=[])
        dates = field_of(row, "haystack_dates", list, at, required=False, default=[])
        own: set[str] = set()
        answers = [prefix + check_id(value_of(a, str, at / "answer_session_ids" / j), at / "answer_session_ids" / j)
                   for j, a in enumerate(field_of(row, "answer_session_ids", list, at, required=False, default=[]))]
        gold_turns: list[str] = []
        for s, session in enumerate(sessions):
            sid = sids[s] if s < len(sids) else None
            if type(sid) is not str or not sid or ID_FORBIDDEN_RE.search(sid):  # else a plain id: no JSON place
                sid = _string_at(sids, s, at / "haystack_session_ids")
                sid = check_id(sid, at / "haystack_session_ids" / s) if sid else f"session-{s}"
            date = dates[s] if s < len(dates) else None
            if type(date) is not str:
                date = _string_at(dates, s, at / "haystack_dates")
            if turns:
                if prefix + sid in own:
                    tally.repeated.append(f"{qid}/{sid}")
                    continue
                own.add(prefix + sid)
                when = parse_lme_date(date)
                tally.bad_dates += bool(date.strip()) and when is None
                new, gold_here = turn_items(session, sid=sid, prefix=prefix, group=group, date=date, when=when,
                                            dated=session_doc_mode == "dated", answer_session=prefix + sid in answers,
                                            at=at / "haystack_sessions" / s)
                gold_turns += gold_here
                for item in new:
                    if item.id not in seen_sessions:
                        seen_sessions[item.id] = len(items)
                        items.append(item)
                    elif shared_haystack:
                        tally.conflicts += items[seen_sessions[item.id]].content != item.content
                continue
            if type(session) is Shared:
                content = by_digest.get(session.digest)
                if content is None:
                    assert session.value is not UNPARSED, "a shared session's first sight carries its value"
                    content = _session_text(session.value, "" if dated else date, session_doc_mode,
                                            at / "haystack_sessions" / s)
                    content = by_digest[session.digest] = texts.setdefault(content, content)
                if dated and date.strip():
                    content = doc_of_dated(content, date)
                    content = texts.setdefault(content, content)
            else:
                content = _session_text(session, date, session_doc_mode, at / "haystack_sessions" / s)
                content = texts.setdefault(content, content)
            item_id = prefix + sid
            if item_id in own:
                tally.repeated.append(f"{qid}/{sid}")
                continue
            own.add(item_id)
            if shared_haystack and item_id in seen_sessions:
                tally.conflicts += items[seen_sessions[item_id]].content != content
                continue
            seen_sessions[item_id] = len(items)
            when = when_of[date] if date in when_of else when_of.setdefault(date, parse_lme_date(date))
            tally.bad_dates += bool(date.strip()) and when is None
            items.append(Item(id=item_id, content=content, group=group, time=when))
        gold = tuple(dict.fromkeys(gold_turns)) if turns else tuple(answers)
        question_date = scalar_text(row.get("question_date"))
        now = parse_lme_date(question_date)
        tally.bad_question_dates += bool(question_date.strip()) and now is None
        question = Question(
            id=qid, query=text_of(row, "question", at), gold=gold, group=group,
            answer=scalar_text(row.get("answer")), category=text_of(row, "question_type", at, required=False),
            now=now, position=i, meta=((SESSIONS_FROM_TURNS, True),) if turns else (),
        )
        if turns and not gold and not qid.endswith("_abs"):
            tally.no_target += 1
            excluded.append(question)
        elif qid.endswith("_abs") and abstention == "exclude":
            tally.abstained += 1
            excluded.append(question)
        else:
            questions.append(question)
    name = "longmemeval" + ("" if session_doc_mode == "full" else f"-{session_doc_mode}")
    name += "-shared" if shared_haystack else ""
    name += "-turns" if turns else ""
    notes = tuple(tally.notes(shared_haystack, len(items), records))
    if turns:
        notes = (f"turn granularity: {len(items)} user-turn items from {records} records, {len(questions)} scored "
                 f"questions, {len(excluded)} left out",) + notes
    ds = Dataset(name=name, items=tuple(items), questions=tuple(questions), notes=notes, sources=(source(),),
                 excluded=tuple(excluded))
    return finish(ds, str(path))
