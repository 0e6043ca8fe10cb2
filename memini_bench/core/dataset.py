"""Items, questions and data sets; the preparation steps (holdout split, even subsample, naming).

An *item* is one memory; a *question* asks for the items in ``gold``. Every ``group`` is an isolated namespace
(memini maps group ``""`` to namespace ``"bench"``); a system recalls only from the question's group.

A data set's ``name`` names its results files, so it is always a safe file name (``file_safe_name``: a name from
a data file such as ``../../x`` becomes ``x``); ``sources`` records every file a loader read, with the SHA-256 of
the bytes it parsed (never a second read of the path). ``finish`` is every loader's last step: it refuses an
empty data set and notes every question that can never be hit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memini_bench.errors import BenchError

HOLDOUT_MODES = ("all", "tune", "held")
#: Longest data set name, in UTF-8 bytes: results files add suffixes (``-tune-limit100.json``, ``.<system>.run``)
#: and most file systems allow 255 bytes per name.
MAX_NAME_BYTES = 100
#: Longest name made from one (a loaded name plus ``prepare``'s suffixes): what ``Dataset`` and file writers keep.
MAX_STEM_BYTES = 2 * MAX_NAME_BYTES
_UNSAFE = re.compile(r"[^\w.+-]+")  # \w is Unicode-aware: letters and digits of any script stay
_LISTED = 5  # ids quoted in a note before "..."


@dataclass(frozen=True, slots=True)
class Item:
    """One memory. ``time`` is when it happened (LongMemEval session date, LoCoMo session date), or None.

    ``tier``/``importance``/``confidence`` describe memini's memory quality (semantic tier, importance 0 and no
    confidence unless a suite says otherwise); ``meta`` carries a suite's extra fields (VetoBench: the whole
    decision, rejected options included, in ``meta["decision"]``).
    """

    id: str
    content: str
    group: str = ""
    time: datetime | None = None
    session: str = ""
    source: str = ""
    tier: str = "semantic"
    importance: float = 0.0
    confidence: float | None = None
    meta: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True, slots=True)
class Question:
    """One question: ``gold`` are item ids (any of them is a hit for recall_any; all for recall_all), each of grade
    1 unless ``grades`` says otherwise.

    ``context`` is what the suite lets a system see besides the query (``recall(..., context=...)``: VetoBench's
    files in scope); ``meta`` is the suite's own bookkeeping, never shown to a system (it may hold the answer).

    ``position`` is the question's 0-based place in the suite's full question list, as memini loads it, when a
    filter of ours dropped questions before it (LongMemEval's abstention questions): the holdout split uses it, so
    the held set is memini's whatever we filter. None means its place in ``Dataset.questions``.
    """

    id: str
    query: str
    gold: tuple[str, ...]
    group: str = ""
    answer: str = ""
    category: str = ""
    now: datetime | None = None
    meta: tuple[tuple[str, object], ...] = ()
    context: tuple[tuple[str, object], ...] = ()
    position: int | None = None
    #: graded gold: ``(item id, grade)`` pairs; a gold id not listed has grade 1 (binary gold, the default) and a
    #: listed id of grade 0 is judged not relevant (``core.metrics``: nDCG's gains, the ``rel=`` level,
    #: ``judged_only``). Loaders give none.
    grades: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Source:
    """One data file as a loader read it: its path, and the SHA-256 and length of exactly the bytes it parsed."""

    path: str
    sha256: str
    size: int


def file_safe_name(name: str, max_bytes: int | None = MAX_NAME_BYTES) -> str:
    """``name`` as one safe file name: every run of characters other than letters, digits, ``.``, ``+``, ``-``
    and ``_`` (path separators, spaces, controls) becomes ``_``, leading dots and underscores go (no hidden file,
    no ``..``), at most ``max_bytes`` UTF-8 bytes (None: no cut, so two long names never collide); ``dataset``
    when nothing is left."""
    safe = _UNSAFE.sub("_", name).lstrip("._")
    while max_bytes is not None and len(safe.encode()) > max_bytes:
        safe = safe[:-1]
    return safe.rstrip(".") or "dataset"


@dataclass(frozen=True, slots=True)
class Dataset:
    """A named set of items and questions, with the loader's notes on what it dropped and why.

    ``excluded``: questions loaded but not scored (LongMemEval's abstention questions under ``-abstention
    exclude``); they keep their place in the holdout split and their groups keep their items, as in memini.
    ``name`` is made a safe file name on construction (``file_safe_name``; loaders cut a name from a file to
    ``MAX_NAME_BYTES`` first, so the suffixes of ``prepare`` always fit under the construction cap ``MAX_STEM_BYTES``).
    """

    name: str
    items: tuple[Item, ...]
    questions: tuple[Question, ...]
    notes: tuple[str, ...] = ()
    category_labels: dict[str, str] = field(default_factory=dict)
    sources: tuple[Source, ...] = ()
    excluded: tuple[Question, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", file_safe_name(self.name, MAX_STEM_BYTES))

    def with_(self, **changes) -> Dataset:
        return dataclasses.replace(self, **changes)

    @property
    def groups(self) -> list[str]:
        """Distinct groups in item order."""
        return list(dict.fromkeys(item.group for item in self.items))

    @property
    def source_sha256(self) -> str:
        """The SHA-256 of the data file's bytes as read; for several files (a BEAM tier), the SHA-256 of their
        ``sha256sum`` listing (``<sha256>  <path>`` lines, sorted by path) with each path relative to the folder
        that holds them all (``listing_sha256``), so two copies of the same files in two places hash the same; ""
        when nothing was read from a file."""
        if len(self.sources) == 1:
            return self.sources[0].sha256
        if not self.sources:
            return ""
        return listing_sha256([(s.path, s.sha256) for s in self.sources])


def listing_sha256(files: Sequence[tuple[str, str]]) -> str:
    """The content hash of several files, given as (path, sha256): the SHA-256 of the ``sha256sum`` listing
    ``<sha256>  <path>\n``, sorted by path, each path relative to the deepest folder holding them all and written
    with ``/`` (``/data/100K/1/chat.json`` and ``/data/100K/2/chat.json`` list as ``1/chat.json`` and
    ``2/chat.json``: the catalog's paths inside a set's folder)."""
    paths = [os.path.normpath(p) for p, _ in files]
    root = os.path.commonpath(paths) if len(paths) > 1 and len({os.path.isabs(p) for p in paths}) == 1 else ""
    rel = [os.path.relpath(p, root).replace(os.sep, "/") if root else p.replace(os.sep, "/") for p in paths]
    listing = "".join(f"{sha}  {r}\n" for r, (_, sha) in sorted(zip(rel, files, strict=True)))
    return hashlib.sha256(listing.encode()).hexdigest()


def _listed(values: Sequence[str]) -> str:
    shown = ", ".join(repr(v) if not v.isprintable() or not v else v for v in values[:_LISTED])
    return shown + (f" and {len(values) - _LISTED} more" if len(values) > _LISTED else "")


def coverage_notes(ds: Dataset) -> tuple[str, ...]:
    """Notes on the questions that can never be hit: an empty gold list, a group with no items, gold ids that
    match no item of the question's group (counting those that are items of another group)."""
    group_of: dict[str, set[str]] = {}
    for item in ds.items:
        group_of.setdefault(item.id, set()).add(item.group)
    groups = Counter(item.group for item in ds.items)
    no_gold = [q.id for q in ds.questions if not q.gold]
    empty_group = [q.id for q in ds.questions if not groups[q.group]]
    orphans = [g for q in ds.questions if groups[q.group] for g in q.gold if q.group not in group_of.get(g, ())]
    elsewhere = sum(1 for g in orphans if g in group_of)
    notes = []
    if no_gold:
        notes.append(f"{len(no_gold)} questions have no gold ids (scored as misses): {_listed(no_gold)}")
    if empty_group:
        notes.append(f"{len(empty_group)} questions ask a group with no items (scored as misses): "
                     f"{_listed(empty_group)}")
    if orphans:
        notes.append(f"{len(orphans)} gold ids match no item of their question's group (never hit)"
                     + (f", {elsewhere} of them items of another group" if elsewhere else "") + f": {_listed(orphans)}")
    return tuple(notes)


def finish(ds: Dataset, source: str) -> Dataset:
    """A loader's last step: memini refuses a data set with no items or no questions, and so do we (naming the
    source); every question that can never be hit is counted in the notes."""
    if not ds.items:
        raise BenchError(f"{source}: no items loaded; the data set needs at least one memory")
    if not ds.questions:
        raise BenchError(f"{source}: no questions loaded; the data set needs at least one question")
    return ds.with_(notes=ds.notes + coverage_notes(ds))


class EmptyDataset(BenchError):
    """``prepare`` left no question or no item to score (the message names the flags)."""


def _prune_items(ds: Dataset, questions: Sequence[Question]) -> tuple[Item, ...]:
    groups = {q.group for q in questions}
    return tuple(item for item in ds.items if item.group in groups)


def _position(q: Question, index: int) -> int:
    return index if q.position is None else q.position


def split_holdout(ds: Dataset, mode: str) -> Dataset:
    """memini's SplitHoldout: ``held`` keeps the questions whose 0-based index i has ``i % 10 == 9``, ``tune`` the
    others, ``all`` everything; i is ``Question.position`` where a loader set it (memini's index before our
    filters), so ``excluded`` questions take their places too. Items are pruned to the groups of the kept
    questions, excluded ones included, and the name gets ``-<mode>``."""
    if mode in ("", "all"):
        return ds
    if mode not in HOLDOUT_MODES:
        raise BenchError(f"-holdout {mode!r}: unknown split; use one of all, tune, held")
    held = mode == "held"
    kept = tuple(q for i, q in enumerate(ds.questions) if (_position(q, i) % 10 == 9) == held)
    excluded = tuple(q for q in ds.excluded if q.position is not None and (q.position % 10 == 9) == held)
    return ds.with_(name=f"{ds.name}-{mode}", questions=kept, excluded=excluded,
                    items=_prune_items(ds, kept + excluded))


def subsample(ds: Dataset, limit: int) -> Dataset:
    """memini's even subsample: with n questions and limit N < n, keep ``Q[int(i * n / N)]`` for i < N, prune
    items to their groups (excluded questions are dropped). Unlike memini the name gets ``-limit<N>`` so a limited
    run never overwrites a full one."""
    n = len(ds.questions)
    if limit <= 0 or limit >= n:
        return ds
    step = n / limit
    kept = tuple(ds.questions[int(i * step)] for i in range(limit))
    return ds.with_(name=f"{ds.name}-limit{limit}", questions=kept, excluded=(), items=_prune_items(ds, kept))


def prepare(ds: Dataset, *, holdout: str = "all", limit: int = 0) -> Dataset:
    """memini's preparation order after loading: holdout split, then the even subsample. A result with no
    question or no item is an ``EmptyDataset`` error naming the flags (memini would score zeros)."""
    if limit < 0:
        raise BenchError(f"-limit {limit}: use a positive number of questions (0 = all)")
    if not ds.questions and ds.excluded:
        raise EmptyDataset(f"-exclude known-bad: excludes all {len(ds.excluded)} questions of {ds.name} (each is on "
                           "its suite's known-bad list), leaving none to score; drop -exclude to score them")
    out = subsample(split_holdout(ds, holdout), limit)
    flags = " ".join(f for f in (f"-holdout {holdout}" if holdout not in ("", "all") else "",
                                 f"-limit {limit}" if limit else "") if f)
    if not out.questions:
        raise EmptyDataset(f"{flags or 'the data set'}: leaves none of the {len(ds.questions)} questions of "
                           f"{ds.name} to score; "
                           + ("use -holdout all or tune" if holdout == "held" else "use -holdout all"))
    if not out.items:
        raise EmptyDataset(f"{flags or '-holdout all'}: leaves no item of {ds.name} in the groups of the "
                           f"{len(out.questions)} questions to score; check the data set's groups")
    return out
