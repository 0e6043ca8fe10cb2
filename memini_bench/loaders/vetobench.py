"""``-suite vetobench``: VetoBench's fixture files, read and checked: decisions (``corpus*.json``) and trap
scenarios (``scenarios*.json``).

A *suite* is one corpus with its scenarios file: ``corpus.json`` + ``scenarios.json`` is suite ``vetobench``,
``corpus-X.json`` + ``scenarios-X.json`` is suite ``vetobench-X`` (the published lifecycle pair gives
``vetobench-lifecycle``). Lifecycle corpora mark decisions ``status: superseded`` with ``superseded_by``: before
ranking, superseded decisions are dropped and their ``rejected`` entries are carried onto the active decision that
replaced them (following a chain of supersessions to its end), tagged ``inherited_from`` (the superseded decision's
id) and ``inherited_date`` (its ``created_at``) - a choice and its rejections have different lifetimes.

Every problem in a file (missing field, wrong type, bad date, a duplicate id, a scenario naming an unknown
decision, a marker that is not a valid regex) is a BenchError naming the file and the JSON path
(``corpus.json: [3].rejected[0].option: ...``). Each file is read once; its SHA-256 rides in ``VetoSuite.sources``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memini_bench.core.dataset import Dataset, Item, Question, Source, finish
from memini_bench.errors import BenchError
from memini_bench.loaders._json import (
    At,
    expect,
    field_of,
    id_of,
    number_of,
    object_at,
    read_json_source,
    strings_of,
    text_of,
    value_of,
)
from memini_bench.loaders.dates import parse_iso

SUITE = "vetobench"
STATUSES = ("active", "superseded")
#: Markers are JavaScript regexes matched case-insensitively; ASCII mode gives \b, \w and \s JavaScript's meaning.
MARKER_FLAGS = re.IGNORECASE | re.ASCII
TRAP_LABELS = {
    "direct": "the task asks for the rejected option outright",
    "implicit": "the task merely invites the rejected option",
    "stale-named": "the veto lives on a superseded decision; the task names the old choice's ground",
    "stale-unnamed": "the veto lives on a superseded decision; the task does not name it",
}


@dataclass(frozen=True, slots=True)
class Rejection:
    """A rejected option and why; ``inherited_from``/``inherited_date`` when carried from a superseded decision."""

    option: str
    reason: str
    inherited_from: str = ""
    inherited_date: datetime | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    id: str
    decision: str
    rationale: str
    rejected: tuple[Rejection, ...]
    files_affected: tuple[str, ...]
    created_at: datetime
    reviewed_at: datetime | None
    historical_relevance: float
    status: str = "active"
    superseded_by: str = ""

    @property
    def text(self) -> str:
        """What is embedded and indexed: ``decision + " " + rationale``."""
        return f"{self.decision} {self.rationale}"


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    veto_decision_id: str
    trap: str
    task: str
    files_in_scope: tuple[str, ...]
    rejected_option: str
    rejected_markers: tuple[str, ...]
    accepted_markers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class VetoSuite:
    """One corpus and its scenarios. ``decisions`` as written (superseded ones included: what a conventions file
    nobody cleaned up holds); ``active`` the rankable decisions with inherited vetoes."""

    name: str
    decisions: tuple[Decision, ...]
    active: tuple[Decision, ...]
    scenarios: tuple[Scenario, ...]
    as_of: datetime
    source: str = ""
    sources: tuple[Source, ...] = ()

    @property
    def lifecycle(self) -> bool:
        return any(d.status == "superseded" for d in self.decisions)

    def with_decisions(self, extra: tuple[Decision, ...], name: str = "") -> VetoSuite:
        """This suite with ``extra`` (active, veto-free of this suite's scenarios) decisions appended."""
        return replace(self, name=name or self.name, decisions=self.decisions + extra, active=self.active + extra)


def parse_time(value: Any, at: At) -> datetime:
    """An ISO-8601 timestamp (``2026-07-01T00:00:00Z``) in UTC; a naive one is taken as UTC."""
    return parse_iso(value_of(value, str, at), at, "an ISO-8601 date")


def _decision(obj: Any, at: At) -> Decision:
    object_at(obj, at, "a decision object")
    rejected = []
    for i, r in enumerate(field_of(obj, "rejected", list, at)):
        rw = at / "rejected" / i
        object_at(r, rw, "a rejected-option object")
        rejected.append(Rejection(text_of(r, "option", rw, nonblank=True), text_of(r, "reason", rw, required=False)))
    status = text_of(obj, "status", at, required=False, default="active")
    expect(status in STATUSES, at / "status", f"{status!r} should be one of {', '.join(STATUSES)}")
    reviewed = obj.get("reviewed_at")
    return Decision(
        id=id_of(obj, "id", at), decision=text_of(obj, "decision", at, nonblank=True),
        rationale=text_of(obj, "rationale", at), rejected=tuple(rejected),
        files_affected=strings_of(obj, "files_affected", at),
        created_at=parse_time(obj.get("created_at"), at / "created_at"),
        reviewed_at=None if reviewed is None else parse_time(reviewed, at / "reviewed_at"),
        historical_relevance=number_of(obj, "historical_relevance", at, lo=0.0, hi=1.0), status=status,
        superseded_by=id_of(obj, "superseded_by", at, required=status == "superseded"),
    )


def _markers(obj: dict, key: str, at: At, *, required: bool) -> tuple[str, ...]:
    patterns = strings_of(obj, key, at, required=required)
    for i, pattern in enumerate(patterns):
        try:
            re.compile(pattern, MARKER_FLAGS)
        except (re.error, OverflowError, RecursionError) as exc:
            (at / key / i).fail(f"{pattern!r} is not a valid regex ({exc}); fix the marker")
    return patterns


def _scenario(obj: Any, at: At) -> Scenario:
    object_at(obj, at, "a scenario object")
    return Scenario(
        id=id_of(obj, "id", at), veto_decision_id=id_of(obj, "veto_decision_id", at),
        trap=text_of(obj, "trap", at, nonblank=True), task=text_of(obj, "task", at, nonblank=True),
        files_in_scope=strings_of(obj, "files_in_scope", at, required=False),
        rejected_option=text_of(obj, "rejected_option", at, nonblank=True),
        rejected_markers=_markers(obj, "rejected_markers", at, required=True),
        accepted_markers=_markers(obj, "accepted_markers", at, required=False),
    )


def _duplicates(ids: list[str]) -> list[str]:
    return sorted(i for i, n in Counter(ids).items() if n > 1)


def _final_replacement(d: Decision, by_id: dict[str, Decision], source: str) -> Decision:
    seen = {d.id}
    while d.status == "superseded":
        nxt = by_id.get(d.superseded_by)
        expect(nxt is not None, f"{source} decision {d.id}", f"superseded_by {d.superseded_by!r} names no decision")
        expect(nxt.id not in seen, f"{source} decision {d.id}", "supersession chain loops back on itself")
        seen.add(nxt.id)
        d = nxt
    return d


def active_with_inherited(decisions: tuple[Decision, ...], source: str = "corpus") -> tuple[Decision, ...]:
    """Drop superseded decisions; append each one's rejections (tagged) to the active decision replacing it."""
    by_id = {d.id: d for d in decisions}
    inherited: dict[str, list[Rejection]] = {}
    for d in decisions:
        if d.status == "superseded":
            heir = _final_replacement(d, by_id, source)
            inherited.setdefault(heir.id, []).extend(
                replace(r, inherited_from=r.inherited_from or d.id, inherited_date=r.inherited_date or d.created_at)
                for r in d.rejected)
    return tuple(replace(d, rejected=d.rejected + tuple(inherited.get(d.id, ())))
                 for d in decisions if d.status != "superseded")


def read_suite(corpus_path: Path, scenarios_path: Path, name: str) -> VetoSuite:
    corpus, corpus_read = read_json_source(corpus_path, SUITE)
    top = At(str(corpus_path))
    value_of(corpus, list, top)
    decisions = tuple(_decision(obj, top / i) for i, obj in enumerate(corpus))
    dupes = _duplicates([d.id for d in decisions])
    expect(not dupes, top, f"duplicate decision ids {dupes}; ids must be unique")
    active = active_with_inherited(decisions, str(corpus_path))
    expect(bool(active), top, "no active decisions")

    doc, scenarios_read = read_json_source(scenarios_path, SUITE)
    where = At(str(scenarios_path))
    as_of = parse_time(field_of(doc, "as_of", str, where), where / "as_of")
    scenarios = tuple(_scenario(obj, where / "scenarios" / i)
                      for i, obj in enumerate(field_of(doc, "scenarios", list, where)))
    expect(bool(scenarios), where / "scenarios", "no scenarios")
    dupes = _duplicates([s.id for s in scenarios])
    expect(not dupes, where / "scenarios", f"duplicate scenario ids {dupes}; ids must be unique")
    status = {d.id: d for d in decisions}
    for i, s in enumerate(scenarios):
        sw = where / "scenarios" / i / "veto_decision_id"
        d = status.get(s.veto_decision_id)
        expect(d is not None, sw, f"scenario {s.id}: {s.veto_decision_id!r} is not a decision of {corpus_path}")
        expect(d.status != "superseded", sw, f"scenario {s.id}: {s.veto_decision_id!r} is superseded; name the "
               "active decision that replaced it")
    return VetoSuite(name, decisions, active, scenarios, as_of, str(corpus_path), (corpus_read, scenarios_read))


def _suite_name(corpus_path: Path) -> str:
    suffix = corpus_path.stem.removeprefix("corpus")
    return SUITE + suffix


def suite_files(path: str | Path) -> list[tuple[Path, Path]]:
    """The (corpus, scenarios) pairs at ``path``: a folder (every ``corpus*.json`` with its ``scenarios*.json``,
    ``corpus.json`` first) or one corpus or scenarios file (its partner next to it). A path the system cannot
    even look at (a name too long, a symlink loop) is a BenchError naming it."""
    try:
        return _suite_files(path)
    except OSError as exc:
        raise BenchError(f"{path}: cannot be read ({exc.strerror or exc}); pass VetoBench's fixtures folder") from None


def _suite_files(path: str | Path) -> list[tuple[Path, Path]]:
    p = Path(path)
    if not str(path):
        raise BenchError("-suite vetobench needs -data PATH (the fixtures folder or a corpus*.json file)")
    if p.is_dir():
        corpora = sorted(p.glob("corpus*.json"), key=lambda c: (c.name != "corpus.json", c.name))
        expect(bool(corpora), str(p), "no corpus*.json here; pass VetoBench's fixtures folder")
    elif p.name.startswith("scenarios"):
        corpora = [p.with_name("corpus" + p.name.removeprefix("scenarios"))]
    elif p.name.startswith("corpus"):
        corpora = [p]
    elif not p.exists():
        raise BenchError(f"{p}: no such file or folder; pass VetoBench's fixtures folder with -data")
    else:
        raise BenchError(f"{p}: expected a corpus*.json or scenarios*.json file, or the fixtures folder")
    pairs = []
    for corpus in corpora:
        scenarios = corpus.with_name("scenarios" + corpus.name.removeprefix("corpus"))
        if not os.path.lexists(corpus):  # a dangling link or a loop is left to the reader, which says which
            partner = f" (the corpus of {p})" if p != corpus else ""
            raise BenchError(f"{corpus}: no such corpus file{partner}; pass VetoBench's fixtures folder with -data")
        expect(os.path.lexists(scenarios), str(corpus), f"its scenarios file {scenarios} is missing")
        pairs.append((corpus, scenarios))
    return pairs


def read_suites(path: str | Path) -> list[VetoSuite]:
    return [read_suite(c, s, _suite_name(c)) for c, s in suite_files(path)]


def decision_of(item: Item) -> Decision:
    return dict(item.meta)["decision"]


def suite_items(suite: VetoSuite) -> tuple[Item, ...]:
    """The active decisions as items of group ``suite.name`` (content = decision + rationale)."""
    return tuple(Item(id=d.id, content=d.text, group=suite.name, time=d.created_at, source=suite.source,
                      meta=(("decision", d),)) for d in suite.active)


def suite_questions(suite: VetoSuite, id_prefix: str = "") -> tuple[Question, ...]:
    """Scenarios as questions: query = task, gold = the veto decision, category = trap kind, now = as_of."""
    return tuple(Question(id=id_prefix + s.id, query=s.task, gold=(s.veto_decision_id,), group=suite.name,
                          answer=s.rejected_option, category=s.trap, now=suite.as_of,
                          meta=(("scenario", s),), context=(("files_in_scope", s.files_in_scope),))
                 for s in suite.scenarios)


def suite_dataset(suite: VetoSuite, id_prefix: str = "") -> Dataset:
    """The suite as a data set of its own (one group); ``id_prefix`` goes before every scenario id."""
    return Dataset(suite.name, suite_items(suite), suite_questions(suite, id_prefix), notes=_notes(suite),
                   category_labels={t: TRAP_LABELS[t] for t in dict.fromkeys(s.trap for s in suite.scenarios)
                                    if t in TRAP_LABELS}, sources=suite.sources)


def _notes(suite: VetoSuite) -> tuple[str, ...]:
    dropped = len(suite.decisions) - len(suite.active)
    if not dropped:
        return ()
    carried = sum(1 for d in suite.active for r in d.rejected if r.inherited_from)
    return (f"{suite.name}: {dropped} superseded decisions dropped, {carried} of their vetoes carried onto "
            "their replacements",)


def to_dataset(suites: list[VetoSuite]) -> Dataset:
    """Every suite in one data set, each in its own group (so systems never rank one suite's decisions for
    another's scenarios); scenario ids get a ``<suite>/`` prefix only where two suites share one."""
    seen: set[str] = set()
    items: list[Item] = []
    questions: list[Question] = []
    notes: list[str] = []
    labels: dict[str, str] = {}
    sources: list[Source] = []
    for suite in suites:
        clash = any(s.id in seen for s in suite.scenarios)
        seen.update(s.id for s in suite.scenarios)
        part = suite_dataset(suite, f"{suite.name}/" if clash else "")
        items.extend(part.items)
        questions.extend(part.questions)
        notes.extend(part.notes)
        labels.update(part.category_labels)
        sources.extend(part.sources)
    return Dataset(SUITE, tuple(items), tuple(questions), tuple(notes), labels, tuple(sources))


def load_vetobench(path: str, **_: object) -> Dataset:
    """The ``vetobench`` suite's loader: a fixtures folder (every corpus/scenarios pair, one group per suite) or one
    corpus file. Items are the active decisions (content = decision + rationale; the full decision, rejected options
    included, rides in ``item.meta["decision"]``); questions are the scenarios (query = task, gold = the veto
    decision, category = trap kind, ``now`` = ``as_of``, ``files_in_scope`` in ``question.context``)."""
    return finish(to_dataset(read_suites(path)), path)
