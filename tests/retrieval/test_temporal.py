"""Temporal anchors and the temporal boost, against hand-computed dates (memini's internal/search/temporal.go)."""

from datetime import UTC, datetime

import numpy as np
import pytest

from memini_bench.errors import BenchError
from memini_bench.retrieval.temporal import (
    Anchor,
    extended_anchor,
    extractor,
    proximity,
    recent_occurrence,
    regex_anchor,
    temporal_rerank,
)

NOW = datetime(2023, 5, 30, 23, 40, tzinfo=UTC)  # a Tuesday, LongMemEval style
DAY = 86400.0


# --- memini's 9 relative patterns, in order ------------------------------------------------------------------

@pytest.mark.parametrize(("query", "anchor"), [
    ("What did I cook 3 days ago?", Anchor(3, 2)),                 # 1: (\d+) days? ago, n*1, tol 2
    ("the thing from 1 day ago", Anchor(1, 2)),
    ("what did I buy a couple days ago", Anchor(2, 2)),            # 2
    ("what did I buy a couple of days ago", Anchor(2, 2)),
    ("Who did I meet yesterday?", Anchor(1, 1)),                   # 3
    ("the film I saw 2 weeks ago", Anchor(14, 5)),                 # 4: n*7, tol 5
    ("What did I do last week?", Anchor(7, 3)),                    # 5
    ("a week ago I started a course", Anchor(7, 3)),
    ("I took an extra week off", Anchor(7, 3)),                    # 5's quirk: "...a week" inside "extra week"
    ("the job I left 4 months ago", Anchor(120, 10)),              # 6: n*30, tol 10
    ("What did I read last month?", Anchor(30, 7)),                # 7
    ("Where did I travel a year ago?", Anchor(365, 30)),           # 8
    ("What have I been doing recently?", Anchor(14, 14)),          # 9
])
def test_relative_patterns(query, anchor):
    assert regex_anchor(query, NOW) == anchor
    assert regex_anchor(query, None) == anchor  # relative anchors need no "now"


def test_relative_pattern_order_not_position():
    # pattern 3 (yesterday) is tried before pattern 4 (weeks), whatever their place in the query
    assert regex_anchor("2 weeks ago, or was it yesterday?", NOW) == Anchor(1, 1)
    # and a relative match wins over any absolute date
    assert regex_anchor("3 days ago in March", NOW) == Anchor(3, 2)


@pytest.mark.parametrize("query", [
    "three weeks ago", "a few days ago", "last weekend", "a weeks thing", "What is my favourite colour?",
    "May I ask what I said?",
])
def test_regex_misses(query):
    assert regex_anchor(query, NOW) is None


# --- memini's 6 absolute patterns (now = 2023-05-30 23:40) -----------------------------------------------------

@pytest.mark.parametrize(("query", "anchor"), [
    # 1: month day, year -> that date, tol 2. Mar 14 -> May 30 = 17 + 30 + 30 = 77 days (+23:40, truncated)
    ("What happened on March 14th, 2023?", Anchor(77, 2)),
    ("on march 14 2023", Anchor(77, 2)),
    # a future date: May 30 23:40 -> Oct 13 00:00 is 135 d 0:20, truncated toward zero
    ("the concert on October 13, 2023", Anchor(-135, 2)),
    # Go's time.Date normalisation: February 31 is March 3 (Mar 3 -> May 30 = 88 days)
    ("february 31, 2023", Anchor(88, 2)),
    # 2: month year -> the 15th, tol 15. 2022-07-15 -> 2023-05-30 = 365 - 46 = 319
    ("What did I do in July 2022?", Anchor(319, 15)),
    # 3: month day -> most recent occurrence, tol 2
    ("what did I do on may 29", Anchor(1, 2)),
    ("what did I do on may 30", Anchor(0, 2)),                    # today 00:00 is at or before now
    ("what did I plan for june 2nd", Anchor(362, 2)),             # not yet this year -> 2022-06-02
    # 4: (in|last|back in|since|during) month -> most recent month/15, tol 15
    ("back in March", Anchor(76, 15)),                            # Mar 15 -> May 30 = 16 + 30 + 30
    ("since december", Anchor(166, 15)),                          # 2022-12-15
    ("during June", Anchor(349, 15)),                             # 2022-06-15 (2023's is in the future)
    # 5: season -> most recent mid-season 15th, tol 45
    ("last summer", Anchor(319, 45)),                             # 2022-07-15
    ("in the winter", Anchor(135, 45)),                           # 2023-01-15
    ("this past fall", Anchor(227, 45)),                          # 2022-10-15
    ("last autumn", Anchor(227, 45)),
    ("last spring", Anchor(45, 45)),                              # 2023-04-15: Apr 15 -> May 30 = 15 + 30
    # 6: in year -> July 1, tol 120. 2021-07-01 -> 2023-05-30 = 365 + 333
    ("What did I do in 2021?", Anchor(698, 120)),
])
def test_absolute_patterns(query, anchor):
    assert regex_anchor(query, NOW) == anchor


def test_absolute_patterns_need_now_and_valid_days():
    assert regex_anchor("in 2021", None) is None
    assert regex_anchor("march 32", NOW) is None        # day 32 is rejected by patterns 1 and 3
    assert regex_anchor("march 0, 2023", NOW) is None    # day 0 too (no preposition for pattern 4)


def test_absolute_pattern_order():
    # month-day-year beats month-year and year: "in march 14, 2023" is a day, not March or 2023
    assert regex_anchor("in march 14, 2023", NOW) == Anchor(77, 2)
    # month year beats year
    assert regex_anchor("in july 2022", NOW) == Anchor(319, 15)


def test_most_recent_occurrence_rule():
    assert recent_occurrence(5, 30, NOW) == datetime(2023, 5, 30, tzinfo=UTC)
    assert recent_occurrence(5, 31, NOW) == datetime(2022, 5, 31, tzinfo=UTC)
    assert recent_occurrence(1, 15, NOW) == datetime(2023, 1, 15, tzinfo=UTC)
    # Go's AddDate(-1, 0, 0) on a leap day: 2024-02-29 -> "2023-02-29" -> 2023-03-01
    now = datetime(2024, 2, 1, tzinfo=UTC)
    assert recent_occurrence(2, 29, now) == datetime(2023, 3, 1, tzinfo=UTC)
    assert regex_anchor("on february 29", now) == Anchor(337, 2)


# --- the extended extractor ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "anchor"), [
    ("What did I cook three weeks ago?", Anchor(21, 5)),
    ("I mentioned an investment four weeks ago", Anchor(28, 5)),
    ("a few days ago I bought a lamp", Anchor(3, 3)),             # vague: 3 units, tolerance + 1 unit
    ("a couple of months ago", Anchor(60, 10)),
    ("a couple weeks ago", Anchor(14, 5)),
    ("several years ago", Anchor(1825, 760)),                     # 5 units, tolerance + 2 units
    ("2 years ago", Anchor(730, 30)),
    ("the day before yesterday", Anchor(2, 1)),                   # regex reads "yesterday": 1 day
    ("what did I eat last tuesday", Anchor(7, 1)),                # now is a Tuesday: a week back
    ("last friday", Anchor(4, 1)),
    ("this past sunday", Anchor(2, 1)),
    ("last weekend", Anchor(3, 2)),                               # Saturday 2023-05-27
    ("in the past three months", Anchor(45, 45)),                 # middle of the span, tolerance half
    ("over the last 2 weeks", Anchor(7, 7)),
    ("in the past week", Anchor(3, 4)),
    # day month year (LoCoMo's date style): May 8 -> May 30 = 22 days; 2022-01-23 -> 2023-05-30 = 365 + 127
    ("what happened on 8 May, 2023", Anchor(22, 2)),
    ("What did Joanna just finish last Friday on 23 January, 2022?", Anchor(492, 2)),
    # an explicit date wins over a relative phrase next to it (else "last two weeks" / "last weekend" would be
    # read back from now)
    ("Where was Dave in the last two weeks of August 2023?", Anchor(-76, 15)),
    ("What did Maria do last weekend before April 10, 2023?", Anchor(50, 2)),
])
def test_extended_patterns(query, anchor):
    assert extended_anchor(query, NOW) == anchor


@pytest.mark.parametrize("query", [
    "10 days ago", "3 weeks ago", "last week", "a week ago", "last month", "yesterday", "recently", "in march",
    "last summer", "in 2021", "on may 29", "What is my favourite colour?",
])
def test_extended_agrees_with_regex_where_memini_parses(query):
    assert extended_anchor(query, NOW) == regex_anchor(query, NOW)


def test_extended_weekday_needs_now():
    assert extended_anchor("last tuesday", None) is None


def test_extractor_lookup():
    assert extractor("regex") is regex_anchor
    with pytest.raises(BenchError, match="-temporal-extractor 'gpt': unknown; use one of regex, extended, llm"):
        extractor("gpt")


# --- proximity and the boost ---------------------------------------------------------------------------------

def test_proximity_linear_fall_off():
    target = 100 * DAY
    dates = target + DAY * np.array([0, 2, -2, 3, 4, -5, 6, 7, np.nan])
    np.testing.assert_allclose(proximity(dates, target, 2), [1, 1, 1, 0.75, 0.5, 0.25, 0, 0, 0])
    assert proximity(np.array([target]), target, 0).tolist() == [0.0]  # no tolerance, no boost


def test_temporal_rerank_hand_computed():
    anchor = Anchor(7, 3)
    target = NOW.timestamp() - 7 * DAY
    ids = np.array([10, 11, 12])
    scores = np.array([1.0, 0.9, 0.5])
    dates = np.array([NOW.timestamp(), target, np.nan])   # delta 7 -> prox 1 - 4/6; delta 0 -> 1; unknown -> 0
    out_ids, out = temporal_rerank(ids, scores, dates, anchor, NOW, 0.4)
    assert out_ids.tolist() == [11, 10, 12]
    np.testing.assert_allclose(out, [0.9 * 1.4, 1.0 * (1 + 0.4 / 3), 0.5])


def test_temporal_rerank_no_op_cases_and_ties():
    ids, scores, dates = np.array([1, 2]), np.array([0.5, 0.5]), np.array([0.0, 0.0])
    for anchor, now, boost in [(None, NOW, 0.4), (Anchor(1, 1), None, 0.4), (Anchor(1, 1), NOW, 0.0)]:
        out_ids, out = temporal_rerank(ids, scores, dates, anchor, now, boost)
        assert out_ids.tolist() == [1, 2] and out.tolist() == [0.5, 0.5]
    # equal boosted scores keep the previous order
    same = np.array([NOW.timestamp()] * 2)
    assert temporal_rerank(ids, scores, same, Anchor(0, 1), NOW, 0.4)[0].tolist() == [1, 2]


# --- odd dates and numbers never raise ------------------------------------------------------------------------

EDGES = (datetime(1, 1, 1, tzinfo=UTC), datetime(1, 3, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, tzinfo=UTC))


@pytest.mark.parametrize("now", EDGES)
@pytest.mark.parametrize("query", ["last summer", "in march", "back in december", "on december 31", "january 1st",
                                   "in 1900", "february 31, 2024", "31 december, 2099", "last weekend",
                                   "last sunday", "in the past three months", "recently"])
def test_anchors_at_the_ends_of_the_calendar_never_raise(now, query):
    for extract in (regex_anchor, extended_anchor):
        anchor = extract(query, now)
        if anchor is not None:  # whatever it says, the boost can use it
            ids, scores = temporal_rerank(np.arange(2), np.array([1.0, 0.5]), np.array([now.timestamp(), np.nan]),
                                          anchor, now, 0.4)
            assert sorted(ids.tolist()) == [0, 1] and np.isfinite(scores).all()


def test_last_summer_in_year_one_has_no_anchor():
    # The most recent summer before 0001-01-01 is in year 0, which Python's calendar cannot hold (Go's can).
    assert regex_anchor("last summer", EDGES[0]) is None


@pytest.mark.parametrize("digits", ["9" * 5000, "0" * 5000 + "7", "9" * 19, "9223372036854775807"])
def test_counts_past_int64_or_python_digit_limits(digits):
    anchor = regex_anchor(f"{digits} days ago", NOW)
    value = int(digits.lstrip("0") or "0") if len(digits.lstrip("0")) <= 19 else None
    assert anchor == (Anchor(value, 2) if value is not None and value <= 2**63 - 1 else None)
    extended_anchor(f"{digits} weeks ago", NOW)
