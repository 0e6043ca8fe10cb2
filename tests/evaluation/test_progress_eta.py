"""The progress ETA on a fake clock (issue 42 §3): a rate and an ETA from the first tick, weighted by each piece's
work so that long texts first do not inflate it, and an ETA that never climbs between updates on a steady
workload (it counts down between ticks instead of growing with the elapsed time)."""

from __future__ import annotations

import re

import pytest

from memini_bench import progress


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(progress, "_now", fake)
    monkeypatch.setitem(progress._state, "quiet", True)  # no board thread: the test reads the task itself
    return fake


def eta_of(task: progress.Task, now: float) -> float:
    eta, _ = task.estimate(now)
    assert eta is not None
    return eta


def test_weighted_eta_is_exact_from_the_first_piece_with_long_texts_first(clock):
    # 8 pieces, the longest first: piece i takes 2 s per unit of work; work falls 10, 9, ..., 3
    work = [10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0]
    task = progress.Task("embedding", total=8 * 64, unit="texts", work=sum(work))
    task.start = clock.t
    assert task.estimate(clock.t) == (None, None)  # nothing to go on before the first piece
    for n, w in enumerate(work):
        clock.t += 2.0 * w
        task.tick(64, work=w)
        left = 2.0 * sum(work[n + 1:])
        assert eta_of(task, clock.t) == pytest.approx(left)  # the weighted estimate is the time really left
    # the count alone would have said 7 x 20 s = 140 s after the first piece, against 88 s really left
    assert progress.line("x", 64, 512, "texts", 20.0).endswith("ETA 2:20")


def test_eta_never_climbs_between_updates_on_a_steady_workload(clock):
    task = progress.Task("recall", total=100, unit="questions")
    task.start = clock.t
    shown = []
    for _ in range(20):
        for _ in range(4):  # the board redraws four times between ticks
            clock.t += 0.25
            if task.done:
                shown.append(eta_of(task, clock.t))
        task.tick(5)
        shown.append(eta_of(task, clock.t))
    assert all(b <= a + 1e-9 for a, b in zip(shown, shown[1:], strict=False)), shown
    assert shown[-1] == pytest.approx(0.0)


def test_between_ticks_the_eta_counts_down_to_zero_and_no_lower(clock):
    task = progress.Task("x", total=4, work=4.0)
    task.start = clock.t
    clock.t += 10.0
    task.tick(1, work=1.0)
    assert eta_of(task, clock.t) == pytest.approx(30.0)
    clock.t += 12.0
    assert eta_of(task, clock.t) == pytest.approx(18.0)
    clock.t += 100.0
    assert eta_of(task, clock.t) == 0.0
    clock.t += 10.0
    task.tick(1, work=1.0)  # a late piece: the next estimate is taken afresh from the pace so far
    assert eta_of(task, clock.t) == pytest.approx(132.0)


def test_the_line_shows_the_rate_at_the_last_tick(clock):
    task = progress.Task("embedding 512 texts", total=512, unit="texts", work=512.0)
    task.start = clock.t
    clock.t += 4.0
    task.tick(64, work=64.0)
    clock.t += 1.0
    text = task.text(clock.t)
    assert re.fullmatch(r"embedding 512 texts: 64/512 texts \(12%\), 0:05 elapsed, ETA 0:27, 16 texts/s", text), text


def test_rates_are_short_and_never_in_exponent_form():
    assert [progress._rate(r) for r in (12345.6, 113.4, 41.23, 2.714, 0.0523, 0.0)] == \
        ["12346", "113", "41.2", "2.71", "0.0523", "0"]
