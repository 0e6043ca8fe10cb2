"""Progress on stderr, in a terminal and off it: every stage that lasts longer than ``FIRST_S`` shows what it is
doing, its count and an ETA where it has one; ``set_quiet(True)`` (``-quiet``, or ``MEMINI_BENCH_PROGRESS=0``)
silences every form.

A stage is a ``Task`` (a description, a total and a unit; total 0 for one without a count, such as a store's own
ingest). Tasks nest (a system's ingest holds the embedding of its texts), and what is shown is the open tasks,
outermost first, joined by `` > ``; the innermost one carries its count::

    progress: memini-hybrid ingest of 5882 items > embedding 5882 texts: 1024/5882 texts (17%), 0:09 elapsed,
    ETA 0:41, 113 texts/s

``elapsed`` runs since the innermost task began. The rate and the ETA are taken at the last tick (``t`` seconds
after the start, ``done`` counted): ``rate = done / t`` and ``ETA = t * (W - w) / w`` where ``w`` of ``W`` is the
work done (a task opened with ``work``: ticks carry each piece's weight, e.g. the padded tokens of an embedding
batch, so long texts first do not inflate the estimate; otherwise ``w = done`` of ``W = total``, the mean pace).
Between ticks the ETA counts down from that estimate (never below 0:00) instead of growing with the elapsed time,
so on a steady workload it never climbs between updates; the next tick replaces it. ``_now`` is the clock (tests
replace it with a fake one).

- In a terminal (stderr is a TTY, not CI) one status line is redrawn in place every ``REDRAW_S``; anything else
  written to stderr meanwhile first clears it. When a shown task ends, its closing line stays:
  ``progress: DESC: N/N UNIT (100%), M:SS elapsed, R UNIT/s, done``.
- Off a terminal (a log file, CI, nohup) the same line is printed once the innermost task has run ``FIRST_S``
  and then every ``INTERVAL_S``, and the closing line once any line was printed.

A task shorter than ``FIRST_S`` prints nothing in either form. Work counted by threads (the QA pass) ticks a
``Ticker`` (a task opened by hand); ``progress(iterable, ...)`` counts an iterable; ``stage(desc)`` a block.
``MEMINI_BENCH_PROGRESS_S`` (seconds) sets ``FIRST_S``, ``INTERVAL_S`` and ``REDRAW_S`` at once (tests use 0).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

FIRST_S = 2.0  # a task shorter than this shows nothing
INTERVAL_S = 10.0  # off a terminal: one line every INTERVAL_S
REDRAW_S = 0.5  # in a terminal: the status line is redrawn this often
TICK_S = 0.05  # progress() adds its items to the count at most this often (and at the end)
_env_s = os.environ.get("MEMINI_BENCH_PROGRESS_S", "")
if _env_s.replace(".", "", 1).isdigit():
    FIRST_S = INTERVAL_S = REDRAW_S = float(_env_s)
_state = {"quiet": os.environ.get("MEMINI_BENCH_PROGRESS") == "0"}
_lock = threading.RLock()
_tasks: list[Task] = []
_board: dict[str, object] = {"thread": None, "drawn": False, "stderr": None}
_wake = threading.Event()


def set_quiet(quiet: bool) -> None:
    """``-quiet``: no status line and no progress lines for the rest of the process."""
    _state["quiet"] = bool(quiet)


def is_quiet() -> bool:
    """Whether ``-quiet`` silenced this process's notes and progress."""
    return _state["quiet"]


def enabled() -> bool:
    """The terminal form: stderr is a terminal and not CI, and not quiet."""
    return not _state["quiet"] and _isatty(sys.stderr) and not os.environ.get("CI")


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _now() -> float:
    return time.monotonic()


def _rate(per_s: float) -> str:
    """A rate with three significant digits and no exponent (``113``, ``41.2``, ``2.71``, ``0.052``)."""
    if per_s >= 100:
        return f"{per_s:.0f}"
    return f"{per_s:.3g}" if per_s >= 0.001 else "0"


def line(desc: str, done: int, total: int, unit: str, elapsed: float, *, eta: float | None = None,
         rate: float | None = None) -> str:
    """One task's text; a task without a total shows its time only. ``eta`` defaults to the mean pace,
    ``elapsed * (total - done) / done`` (``Task`` passes its own, see the module docstring); ``rate`` (``unit``
    per second) is shown when given."""
    if not total:
        return f"{desc}: {_clock(elapsed)} elapsed"
    pct = f" ({100 * done / total:.0f}%)"
    if eta is None and 0 < done < total:
        eta = elapsed * (total - done) / done
    tail = f", ETA {_clock(eta)}" if eta is not None and 0 < done < total else ""
    if rate is not None:
        tail += f", {_rate(rate)} {unit}/s"
    return f"{desc}: {done}/{total} {unit}{pct}, {_clock(elapsed)} elapsed{tail}"


class Task:
    """One stage with progress: opened (``open()`` or ``with``), ticked (thread-safe), closed."""

    def __init__(self, desc: str, total: int = 0, unit: str = "it", *, work: float = 0.0) -> None:
        self.desc, self.total, self.unit = desc, max(int(total), 0), unit
        self.done = 0
        self.work, self.work_done = max(float(work), 0.0), 0.0  # the weighted progress (module docstring)
        self.start = self.last = _now()
        self.ticked_at: float | None = None  # when the last tick came
        self.printed = False
        self.opened = False

    def estimate(self, now: float) -> tuple[float | None, float | None]:
        """``(eta_s, rate)`` at ``now``: both taken at the last tick, the ETA counted down since (the module
        docstring); None before the first tick."""
        if self.ticked_at is None or not self.done:
            return None, None
        spent = self.ticked_at - self.start
        if self.work > 0 and self.work_done > 0:
            share = min(self.work_done / self.work, 1.0)
        else:
            share = self.done / self.total if self.total else 1.0
        eta = spent * (1 - share) / share if share > 0 else None
        rate = self.done / spent if spent > 0 else None
        return (None if eta is None else max(0.0, eta - (now - self.ticked_at))), rate

    def text(self, now: float) -> str:
        eta, rate = self.estimate(now)
        return line(self.desc, self.done, self.total, self.unit, now - self.start, eta=eta, rate=rate)

    def open(self) -> Task:
        if _state["quiet"]:
            return self
        with _lock:
            self.start = self.last = _now()
            self.opened = True
            _tasks.append(self)
            _start_board()
        return self

    def tick(self, n: int = 1, *, work: float = 0.0) -> None:
        """Count ``n`` more done (and ``work`` more of a task opened with ``work``)."""
        with _lock:
            self.done += n
            self.work_done += work
            self.ticked_at = now = _now()
            if self.opened and _tasks and _tasks[-1] is self:
                _show(now)  # a line is due now, not at the board's next wake

    def close(self, finished: bool = True) -> None:
        """End the task; a shown one leaves its closing line (``..., done``) unless it did not finish (an error,
        or its loop stopped early)."""
        if not self.opened:
            return
        board = None
        with _lock:
            self.opened = False
            if self in _tasks:
                _tasks.remove(self)
            if self.printed:
                _clear()
                if finished:
                    _say(self.text(_now()) + ", done")
            if not _tasks:
                board = _detach_board()
        if board is not None and board is not threading.current_thread():
            board.join(timeout=5)

    def __enter__(self) -> Task:
        return self.open()

    def __exit__(self, kind: object, *exc: object) -> None:
        self.close(finished=kind is None)


class Ticker(Task):
    """Counted progress fed by hand (``tick()``, thread-safe) and closed with ``close()``; open from the start."""

    def __init__(self, desc: str, total: int, unit: str = "it") -> None:
        super().__init__(desc, total, unit)
        self.open()


def progress(iterable: Iterable, total: int, desc: str, unit: str = "it") -> Iterable:
    """``iterable`` with progress on stderr (one tick per item; nothing when quiet)."""
    if _state["quiet"]:
        return iterable
    return _counted(iterable, Task(desc, total, unit))


def _counted(iterable: Iterable, task: Task) -> Iterator:
    """``iterable``, ticking ``task`` with what was counted at most every ``min(TICK_S, REDRAW_S, INTERVAL_S)``
    (a tick takes the board's lock: per item it was a recall loop's cost) and at the end."""
    every = min(TICK_S, REDRAW_S, INTERVAL_S)
    with task:
        counted, due = 0, 0.0
        try:
            for item in iterable:
                yield item
                counted += 1
                if every <= 0 or time.monotonic() >= due:
                    task.tick(counted)
                    counted, due = 0, time.monotonic() + every
        finally:
            if counted:
                task.tick(counted)


@contextmanager
def stage(desc: str, total: int = 0, unit: str = "it") -> Iterator[Task]:
    """A block with progress; without a total it shows the time it has taken so far."""
    with Task(desc, total, unit) as task:
        yield task


# --- the board: one thread draws (terminal) or prints (off a terminal) while any task is open --------------------


def _say(text: str) -> None:
    try:
        print(f"progress: {text}", file=_real_stderr(), flush=True)
    except (OSError, ValueError):  # a closed stderr: progress is never worth failing the run for
        pass


def _real_stderr():
    return _board["stderr"] or sys.stderr


class _ClearingStderr:
    """stderr while a status line may be drawn: any write clears the line first (the board redraws it)."""

    def __init__(self, real) -> None:
        self._real = real

    def write(self, data: str) -> int:
        with _lock:
            _clear()
            return self._real.write(data)

    def __getattr__(self, name: str):
        return getattr(self._real, name)


def _start_board() -> None:
    if _board["thread"] is not None:
        return
    if enabled():
        _board["stderr"] = sys.stderr
        sys.stderr = _ClearingStderr(sys.stderr)
    _wake.clear()
    thread = threading.Thread(target=_run_board, name="progress", daemon=True)
    _board["thread"] = thread
    thread.start()


def _detach_board() -> threading.Thread | None:
    """Stop drawing: put stderr back and tell the board thread to end (the caller joins it, outside the lock)."""
    thread = _board["thread"]
    _board["thread"] = None
    _wake.set()
    if _board["stderr"] is not None:
        if isinstance(sys.stderr, _ClearingStderr):
            sys.stderr = _board["stderr"]
        _board["stderr"] = None
    return thread  # type: ignore[return-value]


def _clear() -> None:
    if _board["drawn"]:
        try:
            _real_stderr().write("\r\x1b[K")
        except (OSError, ValueError):
            pass
        _board["drawn"] = False


def _status(now: float) -> str:
    inner = _tasks[-1]
    return " > ".join([t.desc for t in _tasks[:-1]] + [inner.text(now)])


def _run_board() -> None:
    me = threading.current_thread()
    terminal = _board["stderr"] is not None
    while True:
        _wake.wait((REDRAW_S if terminal else min(REDRAW_S, INTERVAL_S, FIRST_S)) or 0.01)
        with _lock:
            if _board["thread"] is not me or not _tasks:
                return
            _show(_now())


def _show(now: float) -> None:
    """Draw the status line (terminal) or print a line (off a terminal) when one is due; under the lock."""
    inner = _tasks[-1]
    if _board["stderr"] is not None:
        if now - _tasks[0].start >= FIRST_S and now - _board.get("drawn_at", 0.0) >= REDRAW_S:  # type: ignore[operator]
            _draw(_status(now))
            _board["drawn_at"] = now
            for t in _tasks:
                t.printed = True
    elif now - inner.start >= min(FIRST_S, INTERVAL_S) and (not inner.printed or now - inner.last >= INTERVAL_S):
        _say(_status(now))
        inner.last, inner.printed = now, True


def _draw(text: str) -> None:
    real = _real_stderr()
    width = 0
    try:
        width = os.get_terminal_size(real.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    text = f"progress: {text}"
    if width >= 40:  # a line longer than the terminal would wrap, and "\r" would then redraw only its end
        text = text[: width - 1]
    try:
        real.write("\r\x1b[K" + text)
        real.flush()
    except (OSError, ValueError):
        return
    _board["drawn"] = True
