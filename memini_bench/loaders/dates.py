"""Timestamps in data files: ISO 8601 / RFC 3339 text parsed to UTC, with the JSON path in every error.

Every time a loader keeps is timezone-aware UTC, so any two compare and subtract; a timestamp that has no UTC
equivalent within Python's years 1 to 9999 (``0001-01-01T00:00:00+01:00``) is refused as out of range.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memini_bench.loaders._json import At


def to_utc(t: datetime, at: At, text: str) -> datetime:
    """``t`` in UTC (a naive time is taken as UTC); out of range is an error at ``at``."""
    if t.tzinfo is None:
        return t.replace(tzinfo=UTC)
    try:
        return t.astimezone(UTC)
    except (OverflowError, ValueError):
        at.fail(f"{text!r} is out of range (it has no UTC time between the years 1 and 9999)")


def parse_iso(text: str, at: At, what: str = "an ISO 8601 date") -> datetime:
    """An ISO 8601 timestamp (``2026-07-01T00:00:00Z``) in UTC; anything else is an error naming ``what``."""
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        at.fail(f"{text!r} is not {what}")
    return to_utc(t, at, text)


def parse_layout(text: str, layout: str) -> datetime | None:
    """``text`` in the ``strptime`` ``layout`` as UTC; None when it does not parse (memini's zero time)."""
    try:
        return datetime.strptime(text.strip(), layout).replace(tzinfo=UTC)
    except ValueError:
        return None
