"""Temporal targeting (memini ``search.RerankTemporal``): boost candidates dated near the time a query refers to.

An *anchor* says "the answer happened about ``days`` before now, give or take ``tolerance`` days". With an anchor,
``target = now - days`` (whole calendar days) and every candidate's score becomes

    score' = score * (1 + boost * prox)
    prox   = 1                               if delta <= tol
           = 1 - (delta - tol) / (2 * tol)   if tol < delta <= 3 * tol      (linear fall-off)
           = 0                               beyond 3 * tol, or when the date is unknown (or tol <= 0)

with ``delta = |target - date|`` in fractional days; then a stable sort, descending (ties keep the previous order).
memini's default boost is 0.40 (``DEFAULT_TEMPORAL_BOOST``).

Extractors (``EXTRACTORS``; each ``(query, now) -> Anchor | None``):

- ``regex``: memini's ``RegexAnchorExtractor``, exactly. The lowercased query is searched for 9 relative patterns
  in order (first match wins), then, when ``now`` is known, 6 absolute ones (see ``RELATIVE`` and ``_absolute``).
  Numbers must be digits. Absolute anchors use ``days = trunc((now - target) / 1 day)``; "most recent occurrence"
  of a month/day is this year's if it is at or before ``now``, else last year's. Calendar arithmetic follows Go's
  ``time.Date`` normalisation (February 31 is March 3).
- ``extended`` (beyond memini): first a date with an explicit year (memini's month-day-year and month-year, plus
  day-month-year, LoCoMo's "8 May, 2023"), which then wins over any relative phrase next to it; then phrases
  memini misses: spelled-out and vague counts ("three weeks ago", "a few days ago", "a couple of months ago",
  "several years ago", "2 years ago"), "the day before yesterday", "last/this past <weekday>", "last weekend" and
  spans ("in the past three months": the middle of the span, tolerance half of it); then ``regex``.
- ``llm`` (memini's with-LLM tier): a chat completion per distinct query (``retrieval.temporal_llm``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from memini_bench.errors import BenchError
from memini_bench.text.go_strings import go_lower

DEFAULT_TEMPORAL_BOOST = 0.40
DAY_S = 86400.0
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Anchor:
    """The referenced time: about ``days`` before now, give or take ``tolerance`` days."""

    days: int
    tolerance: int


Extractor = Callable[[str, datetime | None], Anchor | None]


def _re(pattern: str) -> re.Pattern[str]:
    # ASCII: Go's RE2 \d, \s and \b are ASCII-only.
    return re.compile(pattern, re.ASCII)


# memini's relative patterns, in order: (pattern, days, tolerance, multiplier of the captured number or 0).
RELATIVE: tuple[tuple[re.Pattern[str], int, int, int], ...] = (
    (_re(r"(\d+)\s+days?\s+ago"), 0, 2, 1),
    (_re(r"a\s+couple\s+(?:of\s+)?days?\s+ago"), 2, 2, 0),
    (_re(r"yesterday"), 1, 1, 0),
    (_re(r"(\d+)\s+weeks?\s+ago"), 0, 5, 7),
    (_re(r"(?:a|last)\s+week\b"), 7, 3, 0),
    (_re(r"(\d+)\s+months?\s+ago"), 0, 10, 30),
    (_re(r"(?:a|last)\s+month\b"), 30, 7, 0),
    (_re(r"(?:a|last)\s+year\b"), 365, 30, 0),
    (_re(r"recently"), 14, 14, 0),
)

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = "(" + "|".join(MONTHS) + ")"
SEASON_MID_MONTH = {"spring": 4, "summer": 7, "fall": 10, "autumn": 10, "winter": 1}

# memini's absolute patterns, in order, with their tolerances.
MONTH_DAY_YEAR = _re(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{2})\b")  # tol 2
MONTH_YEAR = _re(r"\b" + _MONTH + r"\s+((?:19|20)\d{2})\b")  # the 15th, tol 15
MONTH_DAY = _re(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b")  # most recent occurrence, tol 2
MONTH_ONLY = _re(r"\b(?:in|last|back in|since|during)\s+" + _MONTH + r"\b")  # most recent month/15, tol 15
SEASON = _re(r"\b(?:last|in the|this past)\s+(spring|summer|fall|autumn|winter)\b")  # mid-season 15th, tol 45
YEAR = _re(r"\bin\s+((?:19|20)\d{2})\b")  # July 1, tol 120


def _atoi(text: str) -> int | None:
    """Go's strconv.Atoi on a run of ASCII digits: None on int64 overflow (checked on the digits first, so a
    5,000-digit number never reaches ``int()``, whose string limit is 4,300 digits)."""
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(_INT64_MAX)):
        return None
    n = int(digits)
    return n if n <= _INT64_MAX else None


def go_date(year: int, month: int, day: int, like: datetime) -> datetime:
    """Go's ``time.Date(year, month, day, 0, 0, 0, 0, UTC)``: an out-of-range day rolls into the next month."""
    return datetime(year, month, 1, tzinfo=UTC) + timedelta(days=day - 1)


def _days_ago(target: datetime, now: datetime) -> int:
    """Go's ``int(now.Sub(target).Hours() / 24)``: whole days, truncated toward zero."""
    return math.trunc((now - target).total_seconds() / DAY_S)


def recent_occurrence(month: int, day: int, now: datetime) -> datetime:
    """The month/day this year when it is at or before ``now``, else a year earlier (Go's AddDate(-1, 0, 0))."""
    t = go_date(now.year, month, day, now)
    if t > now:
        t = go_date(t.year - 1, t.month, t.day, now)
    return t


def _relative(q: str) -> Anchor | None:
    for pattern, days, tol, mul in RELATIVE:
        m = pattern.search(q)
        if m is None:
            continue
        if mul:
            n = _atoi(m.group(1))
            if n is None:
                continue
            return Anchor(n * mul, tol)
        return Anchor(days, tol)
    return None


def _month(name: str) -> int:
    return MONTHS.index(name) + 1


def _month_day_year(q: str, now: datetime) -> Anchor | None:
    m = MONTH_DAY_YEAR.search(q)
    if m is None or not 1 <= int(m.group(2)) <= 31:
        return None
    return Anchor(_days_ago(go_date(int(m.group(3)), _month(m.group(1)), int(m.group(2)), now), now), 2)


def _month_year(q: str, now: datetime) -> Anchor | None:
    m = MONTH_YEAR.search(q)
    return None if m is None else Anchor(_days_ago(go_date(int(m.group(2)), _month(m.group(1)), 15, now), now), 15)


def _month_day(q: str, now: datetime) -> Anchor | None:
    m = MONTH_DAY.search(q)
    if m is None or not 1 <= int(m.group(2)) <= 31:
        return None
    return Anchor(_days_ago(recent_occurrence(_month(m.group(1)), int(m.group(2)), now), now), 2)


def _month_only(q: str, now: datetime) -> Anchor | None:
    m = MONTH_ONLY.search(q)
    return None if m is None else Anchor(_days_ago(recent_occurrence(_month(m.group(1)), 15, now), now), 15)


def _season(q: str, now: datetime) -> Anchor | None:
    m = SEASON.search(q)
    if m is None:
        return None
    return Anchor(_days_ago(recent_occurrence(SEASON_MID_MONTH[m.group(1)], 15, now), now), 45)


def _year(q: str, now: datetime) -> Anchor | None:
    m = YEAR.search(q)
    return None if m is None else Anchor(_days_ago(go_date(int(m.group(1)), 7, 1, now), now), 120)


ABSOLUTE = (_month_day_year, _month_year, _month_day, _month_only, _season, _year)


def _first(resolvers, q: str, now: datetime) -> Anchor | None:
    """The first resolver's anchor. A date the calendar cannot hold (before year 1 or after 9999: "last summer"
    with ``now`` in year 1) gives no anchor where Go's time package, whose range is wider, would give one."""
    for resolve in resolvers:
        try:
            anchor = resolve(q, now)
        except (ValueError, OverflowError):
            continue
        if anchor is not None:
            return anchor
    return None


def regex_anchor(query: str, now: datetime | None) -> Anchor | None:
    """memini's RegexAnchorExtractor: relative patterns first (no ``now`` needed), then absolute ones."""
    q = go_lower(query)
    anchor = _relative(q)
    if anchor is not None or now is None:
        return anchor
    return _first(ABSOLUTE, q, now)


# ---- extended (beyond memini) ----------------------------------------------------------------------------

NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100})
# vague counts: (value, extra tolerance in units)
VAGUE = {"a couple of": (2, 0), "a couple": (2, 0), "couple of": (2, 0), "a few": (3, 1), "few": (3, 1),
         "several": (5, 2)}
# unit: (days per unit, memini's tolerance for a count of that unit; years get "a year"'s 30)
UNITS = {"day": (1, 2), "week": (7, 5), "month": (30, 10), "year": (365, 30)}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_COUNT = "(" + "|".join(sorted([*VAGUE, *NUMBER_WORDS], key=len, reverse=True)) + r"|\d+)"
_UNIT = r"(day|week|month|year)s?"
COUNT_AGO = _re(r"\b" + _COUNT + r"\s+" + _UNIT + r"\s+ago\b")
SPAN = _re(r"\b(past|last|previous)\s+(?:" + _COUNT + r"\s+)?" + _UNIT + r"\b")
DAY_BEFORE_YESTERDAY = _re(r"\bday\s+before\s+yesterday\b")
LAST_WEEKDAY = _re(r"\b(?:last|this\s+past)\s+(" + "|".join(WEEKDAYS) + r")\b")
LAST_WEEKEND = _re(r"\b(?:last|this\s+past)\s+weekend\b")
DAY_MONTH_YEAR = _re(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+((?:19|20)\d{2})\b")  # tol 2


def _day_month_year(q: str, now: datetime) -> Anchor | None:
    """"8 May, 2023" (LoCoMo's own date style), "23rd of january 2022": that date, tol 2."""
    m = DAY_MONTH_YEAR.search(q)
    if m is None or not 1 <= int(m.group(1)) <= 31:
        return None
    return Anchor(_days_ago(go_date(int(m.group(3)), _month(m.group(2)), int(m.group(1)), now), now), 2)


# a date with an explicit year pins the answer even next to a relative phrase ("last weekend before April 10,
# 2023" means the weekend before that date, not before now)
EXPLICIT_DATES = (_month_day_year, _day_month_year, _month_year)


def _count(word: str) -> tuple[int, int] | None:
    """(value, extra tolerance in units) of a count word, digits or vague quantity."""
    word = " ".join(word.split())
    if word in VAGUE:
        return VAGUE[word]
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word], 0
    n = _atoi(word) if word.isdigit() else None
    return None if n is None else (n, 0)


def _count_ago(q: str) -> Anchor | None:
    m = COUNT_AGO.search(q)
    if m is None or (count := _count(m.group(1))) is None:
        return None
    n, spread = count
    unit_days, tol = UNITS[m.group(2)]
    return Anchor(n * unit_days, tol + spread * unit_days)


def _span(q: str) -> Anchor | None:
    """"the past 3 months", "previous few weeks", "past year": the middle of the span, tolerance half of it.
    "last <unit>" without a count is left to memini's pattern (one unit ago)."""
    for m in SPAN.finditer(q):
        if m.group(1) == "last" and m.group(2) is None:
            continue
        count = _count(m.group(2)) if m.group(2) else (1, 0)
        if count is None:
            continue
        half = count[0] * UNITS[m.group(3)][0] / 2
        return Anchor(int(half), max(1, math.ceil(half)))
    return None


def _weekday(q: str, now: datetime | None) -> Anchor | None:
    if now is None:
        return None
    if m := LAST_WEEKDAY.search(q):
        back = (now.weekday() - WEEKDAYS.index(m.group(1))) % 7
        return Anchor(back or 7, 1)
    if LAST_WEEKEND.search(q):
        back = (now.weekday() - 5) % 7  # days since the last Saturday
        return Anchor(back or 7, 2)
    return None


def extended_anchor(query: str, now: datetime | None) -> Anchor | None:
    """Explicit dates with a year, then our relative phrases, then memini's patterns (module docstring)."""
    q = go_lower(query)
    if now is not None and (anchor := _first(EXPLICIT_DATES, q, now)) is not None:
        return anchor
    if DAY_BEFORE_YESTERDAY.search(q):
        return Anchor(2, 1)
    for extract in (_count_ago, _span):
        if (anchor := extract(q)) is not None:
            return anchor
    return _weekday(q, now) or regex_anchor(query, now)


EXTRACTORS: dict[str, Extractor] = {"regex": regex_anchor, "extended": extended_anchor}
# Extractors built per run (they hold a client and a cache): name -> "module:attr" of a zero-argument factory.
EXTRACTOR_FACTORIES = {"llm": "memini_bench.retrieval.temporal_llm:from_env"}
EXTRACTOR_NAMES = (*EXTRACTORS, *EXTRACTOR_FACTORIES)


def extractor(name: str) -> Extractor:
    """The extractor called ``name``; a factory's (``llm``) is built anew, with its own cache, on every call."""
    if name in EXTRACTOR_FACTORIES:
        from memini_bench.core.registry import load_target

        return load_target(EXTRACTOR_FACTORIES[name], "-temporal-extractor")()  # type: ignore[operator]
    if name not in EXTRACTORS:
        raise BenchError(f"-temporal-extractor {name!r}: unknown; use one of {', '.join(EXTRACTOR_NAMES)}")
    return EXTRACTORS[name]


# ---- the re-rank --------------------------------------------------------------------------------------------


def proximity(dates_s: np.ndarray, target_s: float, tolerance: int) -> np.ndarray:
    """memini's temporalProximity for dates in epoch seconds (NaN = unknown date -> 0)."""
    if tolerance <= 0:
        return np.zeros_like(dates_s, dtype=np.float64)
    delta = np.abs(target_s - dates_s) / DAY_S
    tol = float(tolerance)
    ramp = 1.0 - (delta - tol) / (2.0 * tol)
    out = np.where(delta <= tol, 1.0, np.where(delta <= 3.0 * tol, ramp, 0.0))
    return np.where(np.isnan(dates_s), 0.0, out)


def temporal_rerank(ids: np.ndarray, scores: np.ndarray, dates_s: np.ndarray, anchor: Anchor | None,
                    now: datetime | None, boost: float) -> tuple[np.ndarray, np.ndarray]:
    """memini's RerankTemporal after the composite: ``score * (1 + boost * proximity(date, now - anchor))``, then a
    stable re-sort. ``dates_s``: the listed items' dates in epoch seconds (NaN when unknown), aligned with ``ids``.
    Unchanged when there is no anchor, no ``now`` or ``boost <= 0`` (callers extract the anchor first, so a query
    that names no time never reads a date)."""
    if anchor is None or now is None or boost <= 0 or not len(ids):
        return ids, scores
    target = now.timestamp() - anchor.days * DAY_S
    boosted = scores * (1.0 + boost * proximity(dates_s, target, anchor.tolerance))
    order = np.argsort(-boosted, kind="stable")
    return ids[order], boosted[order]

