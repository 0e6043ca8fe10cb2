"""What a system's ``recall`` returns, checked before it is scored, and the run's guard flags.

The rules (``check_hits``), each violation one line naming the system, the question and the offending value:

- the value is a ``list`` or ``tuple`` of ``Hit``s; a generator, a dict or ``None`` is refused (return a list: a
  generator is not taken, since an iterator is consumed once and its length is unknown);
- at most ``depth`` hits: in the normal run the largest K of the run (memini recalls once at max K and scores every
  K from that one list), elsewhere (``evaluation.guarded``) the k asked for in that very call; more is refused,
  never cut silently (500 hits would change MRR, which reads the whole list);
- every hit's ``ids`` is a non-empty tuple or list of strings (a bare string is refused, not read per character),
  each the id of a data set item of the question's group; an id of another group is a *leak*. ``-qa`` alone also
  takes a hit with no id at all (``id_less``: a system that stores its own extraction, judged by ``-qa-judged-k``);
- within one hit no id repeats, and no two hits of one list are the same hit (equal ids and content); distinct
  memories a system extracted from one item (mem0) may share that item's id;
- every score is a finite real number (``bool`` refused), every content a string.

``-leaks error`` (the default) refuses a leak like any other violation; ``-leaks count`` drops each leaked hit (a
hit with any id of another group) before scoring and reports their number per system (the ``leaked`` column of
the table and of each Score row). An id that is in no group of the data set is always refused. Under writes over
time an id written after the question's time is a leak too (``check_hits``'s ``unwritten``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import NamedTuple

import click

from memini_bench.core.contract import Hit
from memini_bench.core.hooks import PluginError, one_line
from memini_bench.core.settings import Real, setting
from memini_bench.retrieval import kernels

#: ``-recall-timeout``'s default: far beyond any recall the harness has seen (a remote LLM rewrite takes seconds).
RECALL_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class RunGuardOptions:
    """How the runner treats misbehaving systems, and what it prints while it works."""

    GROUP = "checks"

    leaks: str = setting("leaks", "error", "A recalled hit from another group: error (exit 2, the default) or "
                         "count (drop it before scoring and report the count per system).",
                         type=click.Choice(["error", "count"]))
    traceback: bool = setting("traceback", False, "When a system's factory or hook fails, print the whole trace "
                              "(for the plugin's author) before the one-line error.")
    recall_timeout: float = setting("recall-timeout", RECALL_TIMEOUT_S, "Bound on one recall call, in seconds "
                                    "(0 = none); a recall past it ends the run with one line.",
                                    type=Real(min=0))
    quiet: bool = setting("quiet", False, "No progress lines on stderr (by default a line per stage with an ETA "
                          "every ~10 s when stderr is not a terminal, a bar when it is).")


class Checked(NamedTuple):
    """One question's checked hits: ids, scores and contents of the kept hits, how many leaked hits were dropped,
    and the positions of the kept hits in the list the system returned. (A named tuple: one is made per recall,
    and it is made faster than a frozen dataclass.)"""

    ids: tuple[tuple[str, ...], ...]
    scores: tuple[float, ...]
    contents: tuple[str, ...]
    leaked: int
    kept: tuple[int, ...] = ()


#: ``tuple(range(n))`` for the usual list lengths: every hit of a plain list kept.
_ALL_KEPT = tuple(tuple(range(n)) for n in range(129))


def _short(value: object, limit: int = 80) -> str:
    try:
        text = one_line(repr(value))
    except Exception:  # noqa: BLE001 - a plugin's object whose repr fails
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_hits(system: str, asked: str, group: str, hits: object, depth: int, group_of: Mapping[str, str],
               leaks: str = "error", *, depth_rule: str = "the largest K", id_less: bool = False,
               unwritten: Mapping[str, str] | None = None) -> Checked:
    """``hits``, what one recall in ``group`` returned, checked against the rules of the module docstring;
    ``asked`` names that recall in the messages (``question 'q1'``), ``depth_rule`` says where ``depth`` comes
    from, ``group_of`` maps every item id of the data set to its group, ``id_less`` takes a hit without ids. A
    violation raises a one-line ``PluginError``.

    Writes over time (``-protocol time-ordered``): ``group_of`` then holds only the items written so far and
    ``unwritten`` the data set's other items (id -> group); a hit with an id of ``unwritten`` is a *leak from the
    future* (an item written after the question's time), treated as a group leak (refused, or dropped and counted
    under ``-leaks count``)."""
    if type(hits) is list and len(hits) <= depth:
        compiled = kernels.KERNELS
        if compiled is not None and type(group_of) is dict and type(group) is str:
            checked = compiled.plain_hits(hits, Hit, group, group_of, Checked, _ALL_KEPT)
            if checked is not None:
                return checked
        else:
            plain = _plain_hits(hits, group, group_of)
            if plain is not None:
                return plain
    try:
        return _check_hits(system, asked, group, hits, depth, group_of, leaks, depth_rule, id_less, unwritten or {})
    except PluginError:
        raise
    except Exception as exc:  # noqa: BLE001 - a hostile value (a str subclass whose hash raises, ...): the plugin's
        raise PluginError(f"system {system}: recall for {asked} returned hits that could not be checked "
                          f"({type(exc).__name__}: {_short(exc)}); return a list of plain Hit(ids, score, content)"
                          ) from None


_IDS, _SCORE, _CONTENT, _FIRST = attrgetter("ids"), attrgetter("score"), attrgetter("content"), itemgetter(0)


def _plain_hits(hits: list, group: str, group_of: Mapping[str, str]) -> Checked | None:
    """The common case of ``check_hits``, decided in a few passes of built-in functions: every hit a ``Hit`` of
    exactly one ``str`` id of ``group``, a ``float`` score and a ``str`` content, the scores' sum finite (so is every
    score), no hit repeated. Such a list passes every rule, and this is what the full check returns for it; anything
    else (a violation, a leak, a hit of several ids, a subclass, scores whose sum overflows) gives None, and the full
    check decides and words it. The compiled ``plain_hits`` (``retrieval/_kernels.c``), where built, does the same
    in one pass."""
    n = len(hits)
    if not n:
        return Checked((), (), (), 0, ())
    if set(map(type, hits)) != {Hit}:
        return None
    ids, scores, contents = list(map(_IDS, hits)), list(map(_SCORE, hits)), list(map(_CONTENT, hits))
    if set(map(type, ids)) != {tuple} or set(map(len, ids)) != {1} or set(map(type, scores)) != {float} \
            or set(map(type, contents)) != {str} or not -math.inf < sum(scores) < math.inf:
        return None
    only = list(map(_FIRST, ids))
    if set(map(type, only)) != {str} or set(map(group_of.get, only)) != {group} \
            or len(set(zip(ids, contents, strict=True))) != n:
        return None
    return Checked(tuple(ids), tuple(scores), tuple(contents), 0, tuple(range(n)))


def _check_hits(system: str, asked: str, group: str, hits: object, depth: int, group_of: Mapping[str, str],
                leaks: str, depth_rule: str, id_less: bool, unwritten: Mapping[str, str]) -> Checked:
    """``check_hits``, rule by rule, with its message for each violation."""
    where = f"system {system}: recall for {asked}"

    def fail(problem: str) -> PluginError:
        return PluginError(f"{where} {problem}; see memini_bench.core.contract")

    if not isinstance(hits, list | tuple):
        extra = " (a generator is not taken: return a list)" if hasattr(hits, "__next__") else ""
        raise fail(f"returned {type(hits).__name__}, not a list of Hit{extra}")
    if len(hits) > depth:
        raise fail(f"returned {len(hits)} hits for depth {depth} ({depth_rule}); return at most {depth}")
    ids_out: list[tuple[str, ...]] = []
    scores: list[float] = []
    contents: list[str] = []
    seen: set[tuple[tuple[str, ...], str]] = set()
    kept: list[int] = []
    leaked = 0
    for n, hit in enumerate(hits):
        if not isinstance(hit, Hit):
            raise fail(f"hit {n} is {type(hit).__name__} {_short(hit)}, not a Hit")
        try:  # a Hit never initialised, or a subclass whose field raises
            ids, score, content = hit.ids, hit.score, hit.content
            value = float(score) if isinstance(score, numbers.Real) and not isinstance(score, bool) else None
        except Exception as exc:  # noqa: BLE001 - any failure reading the hit is the plugin's
            raise fail(f"hit {n} could not be read ({type(exc).__name__}: {_short(exc)}); build it as "
                       "Hit(ids, score, content)") from None
        if not isinstance(ids, tuple | list) or not (ids or id_less):
            raise fail(f"hit {n} has ids {_short(ids)}: give a non-empty tuple of item id strings")
        for i in ids:
            if not isinstance(i, str):
                raise fail(f"hit {n} has id {_short(i)} of type {type(i).__name__}, not a string")
        if len(set(ids)) != len(ids):
            raise fail(f"hit {n} repeats an id: {_short(ids)}")
        if value is None or not math.isfinite(value):
            raise fail(f"hit {n} has score {_short(score)}: give a finite number")
        if not isinstance(content, str):
            raise fail(f"hit {n} has content {_short(content)} of type {type(content).__name__}, not a string")
        other: tuple[str, str | None] | None = None
        for i in ids:
            g = group_of.get(i)
            if g is None:
                if i in unwritten:
                    if other is None:
                        other = (i, None)
                    continue
                raise fail(f"hit {n} has id {_short(i)}, which is no item of the data set")
            if g != group and other is None:
                other = (i, g)
        if other is not None:
            if leaks != "count":
                if other[1] is None:
                    raise fail(f"hit {n} has id {other[0]!r}, an item written after the question's time (a leak "
                               "from the future; -leaks count scores without it)")
                raise fail(f"hit {n} has id {other[0]!r} of group {other[1]!r}, not the question's group "
                           f"{group!r} (a leak; -leaks count scores without it)")
            leaked += 1
            continue
        key = (tuple(ids), content)
        if key in seen:
            raise fail(f"hit {n} repeats an earlier hit: ids {_short(tuple(ids))}")
        seen.add(key)
        ids_out.append(tuple(ids))
        scores.append(value)
        contents.append(content)
        kept.append(n)
    return Checked(tuple(ids_out), tuple(scores), tuple(contents), leaked, tuple(kept))
