"""LongMemEval (xiaowu0162/LongMemEval: ``longmemeval_s``, ``_m``, ``_oracle``), as memini loads it, and beyond.

Each record is one question with its private haystack of sessions: group = ``question_id``, one item per
haystack session with id ``<question_id>/<session_id>``, gold = the ``answer_session_ids`` under the same prefix.
Session text (``-session-doc``): ``full`` = ``role: content\\n`` per turn; ``user-only`` = the user turns'
``content\\n`` (falls back to full when there are none); ``dated`` = ``[<date>]\\n`` + full.

Beyond memini:
- ``abstention="exclude"`` (default, LongMemEval's own protocol) drops the ``_abs`` questions from scoring; their
  sessions stay in the corpus (as in memini, whose keyword statistics are global). ``include`` keeps them.
- ``shared_haystack=True`` pools every record's sessions, deduplicated by session id, into one group
  ``longmemeval``; item ids and gold are bare session ids. This turns the oracle file (whose haystacks hold only
  evidence sessions) into a real retrieval test.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memini_bench.dataset import Dataset, Item, Question, check_not_empty
from memini_bench.errors import BenchError
from memini_bench.loaders._json import expect, field_of, read_json, scalar_text

SESSION_DOCS = ("full", "user-only", "dated")
ABSTENTION_MODES = ("exclude", "include")
SHARED_GROUP = "longmemeval"


def parse_lme_date(text: str) -> datetime | None:
    """``2023/05/30 (Tue) 23:40`` (Go layout ``2006/01/02 (Mon) 15:04``) as UTC; None when unparseable."""
    try:
        return datetime.strptime(text.strip(), "%Y/%m/%d (%a) %H:%M").replace(tzinfo=UTC)
    except ValueError:
        return None


def session_doc(turns: list, date: str, mode: str, where: str) -> str:
    """One haystack session as text (see the module docstring for the three modes)."""
    expect(isinstance(turns, list), where, "a haystack session should be a list of {role, content} turns")
    pairs = []
    for j, turn in enumerate(turns):
        tw = f"{where}[{j}]"
        pairs.append((field_of(turn, "role", str, tw, required=False, default=""),
                      field_of(turn, "content", str, tw, required=False, default="")))
    full = "".join(f"{role}: {content}\n" for role, content in pairs)
    if mode == "user-only":
        user = "".join(f"{content}\n" for role, content in pairs if role == "user")
        return user or full
    if mode == "dated" and date.strip():
        return f"[{date}]\n{full}"
    return full


def load_longmemeval(path: str, *, session_doc_mode: str = "full", abstention: str = "exclude",
                     shared_haystack: bool = False, **_: object) -> Dataset:
    if session_doc_mode not in SESSION_DOCS:
        raise BenchError(f"-session-doc {session_doc_mode!r}: unknown; use one of {', '.join(SESSION_DOCS)}")
    if abstention not in ABSTENTION_MODES:
        raise BenchError(f"-abstention {abstention!r}: unknown; use exclude or include")
    rows = read_json(path, "longmemeval")
    expect(isinstance(rows, list), str(path), "expected a JSON array of LongMemEval records")
    items: list[Item] = []
    questions: list[Question] = []
    seen_sessions: dict[str, int] = {}
    conflicts = abstained = no_gold = 0
    unresolved: list[str] = []
    for i, row in enumerate(rows):
        where = f"{path}: [{i}]"
        qid = field_of(row, "question_id", str, where, required=False, default="") or f"q-{i}"
        group = SHARED_GROUP if shared_haystack else qid
        prefix = "" if shared_haystack else f"{qid}/"
        sessions = field_of(row, "haystack_sessions", list, where)
        sids = field_of(row, "haystack_session_ids", list, where, required=False, default=[])
        dates = field_of(row, "haystack_dates", list, where, required=False, default=[])
        own: set[str] = set()
        for s, turns in enumerate(sessions):
            sid = scalar_text(sids[s]) if s < len(sids) else ""
            sid = sid or f"session-{s}"
            date = scalar_text(dates[s]) if s < len(dates) else ""
            content = session_doc(turns, date, session_doc_mode, f"{where}.haystack_sessions[{s}]")
            item_id = prefix + sid
            own.add(item_id)
            if shared_haystack and item_id in seen_sessions:
                conflicts += items[seen_sessions[item_id]].content != content
                continue
            seen_sessions[item_id] = len(items)
            items.append(Item(id=item_id, content=content, group=group, time=parse_lme_date(date)))
        if qid.endswith("_abs") and abstention == "exclude":
            abstained += 1
            continue
        answer_ids = field_of(row, "answer_session_ids", list, where, required=False, default=[])
        gold = tuple(prefix + scalar_text(a) for a in answer_ids)
        no_gold += not gold
        unresolved.extend(g for g in gold if g not in own and g not in seen_sessions)
        questions.append(Question(
            id=qid, query=field_of(row, "question", str, where), gold=gold, group=group,
            answer=scalar_text(row.get("answer")),
            category=field_of(row, "question_type", str, where, required=False, default=""),
            now=parse_lme_date(scalar_text(row.get("question_date"))),
        ))
    name = "longmemeval" + ("" if session_doc_mode == "full" else f"-{session_doc_mode}")
    name += "-shared" if shared_haystack else ""
    notes: list[str] = []
    if abstained:
        notes.append(f"excluded {abstained} abstention (_abs) questions from scoring (-abstention include keeps them)")
    if no_gold:
        notes.append(f"{no_gold} questions have no answer_session_ids: guaranteed misses")
    if unresolved:
        notes.append(f"{len(unresolved)} gold session ids are not in the haystack: {', '.join(unresolved[:5])}")
    if shared_haystack:
        notes.append(f"shared haystack: {len(items)} unique sessions pooled from {len(rows)} records"
                     + (f"; {conflicts} repeated session ids with differing text kept their first text"
                        if conflicts else ""))
    ds = Dataset(name=name, items=tuple(items), questions=tuple(questions), notes=tuple(notes))
    return check_not_empty(ds, str(path))
