"""Fact histories (``-suite corrections``): values stated, restated, changed, reverted and forgotten over time,
and the questions that check what a memory holds afterwards. Scored by ids, no LLM (docs/temporal.md).

File schema (JSON; the built-in suite is ``memini_bench/data/corrections.json``, made by
``cmd/make_corrections.py`` from its seed)::

    {"name": str, "generator"?: {...},                      # generator: recorded, not read
     "histories": [{"group": str,
                    "events": [{"id", "time", "fact", "value", "text"}      # a write
                               | {"forget": fact, "time"}],                 # the fact's every write forgotten
                    "questions": [{"id", "kind": "current" | "forgotten" | "as-of", "fact", "query",
                                   "at"?: time}]}]}                          # at: as-of questions only

Times are RFC 3339 (a naive time is UTC); a history's events are in time order (ties keep file order); ids are
unique over the file. What each write *is* follows from the history, never from the file:

- a write of the fact's current value is a *restatement* (a plain write, kept beside the earlier ones);
- a write of another value is a *change* (a *revert* when that value held before): it supersedes the fact's live
  writes (``Item.meta["supersedes"]``; the harness calls ``update(item)``, ``core.contract``);
- ``forget`` forgets every write of the fact made before it (the harness calls ``forget(id)`` for each).

Every question is asked after the whole history (``now`` = the history's last event; an as-of question asks at
``now = at``); its ids, in ``Question.meta``, follow from the history too:

- ``current``: the fact must have a value at the end. ``gold`` = its writes of that value (the live ones and
  earlier ones of the same value), ``stale`` = its writes of any other value;
- ``forgotten``: the fact's last event is a forget. ``gold`` = ``forgotten`` = every write of the fact;
- ``as-of``: the fact has a value at ``at``. ``gold`` = its writes of that value made at or before ``at``,
  ``stale`` = its writes of any other value (writes of the same value after ``at`` are neither).

Each write becomes an ``Item`` (group, time, ``meta``: fact, value, seq, supersedes, forgotten_at), so the
timeline is rebuilt from the data set alone (``timeline``), after ``-holdout``/``-limit`` too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memini_bench.core.contract import SUPERSEDES
from memini_bench.core.dataset import Dataset, Item, Question, Source, file_safe_name, finish
from memini_bench.errors import BenchError
from memini_bench.loaders._json import At, field_of, id_of, object_at, read_json_source, text_of
from memini_bench.loaders.dates import parse_iso

CORRECTIONS_PATH = Path(__file__).resolve().parents[1] / "data" / "corrections.json"  # shipped in the wheel
KINDS = ("current", "forgotten", "as-of")
CATEGORY_LABELS = {"current": "current value", "forgotten": "forgotten fact", "as-of": "value as of a date"}
_TIME = "an RFC 3339 timestamp"


def meta_of(meta: Sequence[tuple[str, object]], key: str, default: object = None) -> object:
    for k, v in meta:
        if k == key:
            return v
    return default


@dataclass
class _Fact:
    """One fact's history while it is read: every write (item index, value, time), the live ones, its value."""

    writes: list[tuple[int, str, datetime]]
    live: list[int]
    value: str | None = None
    forgotten_at: datetime | None = None


def _history(raw: object, at: At, items: list[dict], seen: dict[str, str], seq: list[int]) -> tuple[str, dict,
                                                                                                     datetime]:
    object_at(raw, at)
    group = text_of(raw, "group", at, required=False)
    facts: dict[str, _Fact] = {}
    last: datetime | None = None
    for i, event in enumerate(field_of(raw, "events", list, at)):
        where = at / "events" / i
        object_at(event, where, "an object: a write {id, time, fact, value, text} or a forget {forget, time}")
        t = parse_iso(text_of(event, "time", where, nonblank=True), where / "time", _TIME)
        if last is not None and t < last:
            (where / "time").fail(f"{t.isoformat()} is before the event above it; give a history's events in time "
                                  "order")
        last = t
        seq[0] += 1
        if "forget" in event:
            name = text_of(event, "forget", where, nonblank=True)
            fact = facts.get(name)
            if fact is None or fact.value is None:
                (where / "forget").fail(f"fact {name!r} has no value to forget here; forget a fact after a write "
                                        "of it")
            for index, _, _ in fact.writes:
                if meta_of(items[index]["meta"], "forgotten_at") is None:
                    items[index]["meta"] += (("forgotten_at", t), ("forget_seq", seq[0]))
            fact.live, fact.value, fact.forgotten_at = [], None, t
            continue
        item_id = id_of(event, "id", where)
        if item_id in seen:
            (where / "id").fail(f"duplicate id {item_id!r} (also at {seen[item_id]}); ids must be unique")
        seen[item_id] = (where / "id").path
        name = text_of(event, "fact", where, nonblank=True)
        value = text_of(event, "value", where, nonblank=True)
        fact = facts.setdefault(name, _Fact([], []))
        supersedes = () if fact.value in (None, value) else tuple(items[j]["id"] for j in fact.live)
        meta: tuple[tuple[str, object], ...] = (("fact", name), ("value", value), ("seq", seq[0]))
        if supersedes:
            meta += ((SUPERSEDES, supersedes),)
            fact.live = []
        items.append({"id": item_id, "content": text_of(event, "text", where, nonblank=True), "group": group,
                      "time": t, "meta": meta})
        fact.writes.append((len(items) - 1, value, t))
        fact.live.append(len(items) - 1)
        fact.value = value
    if last is None:
        (at / "events").fail("no events; a history needs at least one write")
    return group, facts, last


def _value_at(fact: _Fact, t: datetime) -> str | None:
    """The fact's value at time ``t``: its latest write at or before ``t``, unless a forget came after it."""
    value = None
    for _, v, wt in fact.writes:
        if wt <= t:
            value = v
    if fact.forgotten_at is not None and fact.forgotten_at <= t:
        latest = max((wt for _, _, wt in fact.writes if wt <= t), default=None)
        if latest is None or latest < fact.forgotten_at:
            return None
    return value


def _questions(raw: object, at: At, group: str, facts: dict[str, _Fact], items: list[dict], end: datetime,
               seen: dict[str, str]) -> list[Question]:
    out: list[Question] = []
    for i, q in enumerate(field_of(raw, "questions", list, at)):
        where = at / "questions" / i
        object_at(q, where)
        qid = id_of(q, "id", where)
        if qid in seen:
            (where / "id").fail(f"duplicate id {qid!r} (also at {seen[qid]}); ids must be unique")
        seen[qid] = (where / "id").path
        kind = text_of(q, "kind", where)
        if kind not in KINDS:
            (where / "kind").fail(f"{kind!r} is not a question kind; use one of {', '.join(KINDS)}")
        name = text_of(q, "fact", where, nonblank=True)
        fact = facts.get(name)
        if fact is None:
            (where / "fact").fail(f"fact {name!r} has no write in this history")
        now = end
        ids = [(items[j]["id"], v, wt) for j, v, wt in fact.writes]
        if kind == "as-of":
            now = parse_iso(text_of(q, "at", where, nonblank=True), where / "at", _TIME)
            value = _value_at(fact, now)
            if value is None:
                (where / "at").fail(f"fact {name!r} has no value at {now.isoformat()}; ask as of a time it held one")
            gold = tuple(d for d, v, wt in ids if v == value and wt <= now)
            stale = tuple(d for d, v, _ in ids if v != value)
        elif "at" in q:
            (where / "at").fail(f"only an as-of question takes 'at', not a {kind} one; drop it")
        elif kind == "current":
            if fact.value is None:
                (where / "fact").fail(f"fact {name!r} is forgotten at the end of its history; ask a forgotten "
                                      "question, or a current one of a fact that has a value")
            gold = tuple(d for d, v, _ in ids if v == fact.value)
            stale = tuple(d for d, v, _ in ids if v != fact.value)
        else:
            if fact.value is not None:
                (where / "fact").fail(f"fact {name!r} has a value at the end of its history; a forgotten question "
                                      "needs the fact's last event to be a forget")
            gold, stale = tuple(d for d, _, _ in ids), ()
        meta: tuple[tuple[str, object], ...] = (("kind", kind), ("fact", name), ("stale", stale))
        out.append(Question(id=qid, query=text_of(q, "query", where, nonblank=True), gold=gold, group=group,
                            category=kind, now=now, meta=meta))
    return out


def parse_histories(doc: object, source: str, read: Source | None = None) -> Dataset:
    """A Dataset from a parsed fact-history document (module docstring); every problem names ``source`` and the
    JSON path, with the fix."""
    top = At(source)
    object_at(doc, top, "a JSON object with name and histories")
    raw_name = text_of(doc, "name", top, required=False) or Path(source).stem
    items: list[dict] = []
    questions: list[Question] = []
    seen: dict[str, str] = {}
    groups: dict[str, str] = {}
    seq = [0]
    for h, raw in enumerate(field_of(doc, "histories", list, top)):
        where = top / "histories" / h
        group, facts, end = _history(raw, where, items, seen, seq)
        if group in groups:
            (where / "group").fail(f"group {group!r} is also {groups[group]}; give each history its own group")
        groups[group] = where.path
        questions += _questions(raw, where, group, facts, items, end, seen)
    ds = Dataset(name=file_safe_name(raw_name), items=tuple(Item(**it) for it in items), questions=tuple(questions),
                 category_labels=dict(CATEGORY_LABELS), sources=(read,) if read else ())
    return finish(ds, source)


def load_corrections(path: str = "", *, shared_haystack: bool = False, granularity: str = "session") -> Dataset:
    """``-suite corrections``: the committed generated suite, a fact-history file of one's own (``-data``), or a
    LongMemEval file (a JSON array of records), whose knowledge-update questions become fact histories
    (``loaders.longmemeval_corrections``; ``shared_haystack`` and ``granularity`` are read for it only, with
    ``-suite longmemeval``'s defaults)."""
    source = str(path or CORRECTIONS_PATH)
    doc, read = read_json_source(path or CORRECTIONS_PATH, "corrections")
    if isinstance(doc, list):
        from memini_bench.loaders.longmemeval_corrections import histories_from_longmemeval

        doc, notes = histories_from_longmemeval(doc, source, shared_haystack=shared_haystack,
                                                granularity=granularity)
        ds = parse_histories(doc, source, read)
        return dataclasses.replace(ds, notes=(*ds.notes, *notes))
    if shared_haystack or granularity != "session":
        flag = "-shared-haystack" if shared_haystack else "-granularity"
        raise BenchError(f"{flag}: read only for a LongMemEval file given to -suite corrections, not for a "
                         f"fact-history file ({source}); drop it")
    return parse_histories(doc, source, read)


# -- the timeline -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Write:
    """Plain writes (``ingest``), in order."""

    items: tuple[Item, ...]


@dataclass(frozen=True)
class Update:
    """A correction: ``item`` supersedes the ids in its ``meta["supersedes"]`` (``update``)."""

    item: Item


@dataclass(frozen=True)
class Forget:
    """The ids to forget (``forget`` each)."""

    ids: tuple[str, ...]


def timeline(ds: Dataset) -> list[Write | Update | Forget]:
    """The data set's writes and forgets in the order they happened (by ``seq``), consecutive plain writes in one
    ``Write``."""
    events: list[tuple[int, int, object]] = []
    forgets: dict[int, list[str]] = {}
    for item in ds.items:
        events.append((int(meta_of(item.meta, "seq", 0)), 0, item))  # type: ignore[arg-type]
        fseq = meta_of(item.meta, "forget_seq")
        if fseq is not None:
            forgets.setdefault(int(fseq), []).append(item.id)  # type: ignore[arg-type]
    events += [(s, 1, Forget(tuple(ids))) for s, ids in forgets.items()]
    events.sort(key=lambda e: (e[0], e[1]))
    steps: list[Write | Update | Forget] = []
    batch: list[Item] = []
    for _, _, event in events:
        if isinstance(event, Item) and not meta_of(event.meta, SUPERSEDES):
            batch.append(event)
            continue
        if batch:
            steps.append(Write(tuple(batch)))
            batch = []
        steps.append(Update(event) if isinstance(event, Item) else event)  # type: ignore[arg-type]
    if batch:
        steps.append(Write(tuple(batch)))
    return steps
