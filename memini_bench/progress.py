"""Progress on stderr: a tqdm bar when stderr is a terminal (and not in CI), else a plain line every ~10 s.

Outside a terminal (a log file, CI, nohup) ``progress`` prints, once ``INTERVAL_S`` has passed and then every
``INTERVAL_S``, ``progress: DESC: N/TOTAL UNIT (P%), ELAPSED elapsed, ETA REMAINING``, with
``REMAINING = elapsed * (TOTAL - N) / N`` (the mean pace so far), and one closing line once it printed any. A stage
without a count (a store's own ingest) uses ``stage(desc)``: ``progress: DESC: ELAPSED elapsed`` on the same clock.
A run shorter than ``INTERVAL_S`` prints nothing. Work counted by threads (the QA pass) feeds a ``Ticker``.
``set_quiet(True)`` (``-quiet``) silences every form.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

INTERVAL_S = 10.0
_state = {"quiet": False}


def set_quiet(quiet: bool) -> None:
    """``-quiet``: no bar and no lines for the rest of the process."""
    _state["quiet"] = bool(quiet)


def is_quiet() -> bool:
    """Whether ``-quiet`` silenced this process's notes and progress."""
    return _state["quiet"]


def enabled() -> bool:
    """A tqdm bar: stderr is a terminal and not CI, and not quiet."""
    return not _state["quiet"] and sys.stderr.isatty() and not os.environ.get("CI")


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _say(line: str) -> None:
    try:
        print(f"progress: {line}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stderr: progress is never worth failing the run for
        pass


def line(desc: str, done: int, total: int, unit: str, elapsed: float) -> str:
    """One progress line (see the module docstring for the ETA)."""
    pct = f" ({100 * done / total:.0f}%)" if total else ""
    eta = f", ETA {_clock(elapsed * (total - done) / done)}" if 0 < done < total else ""
    return f"{desc}: {done}/{total} {unit}{pct}, {_clock(elapsed)} elapsed{eta}"


class Ticker:
    """Counted progress fed by hand (``tick()``, thread-safe), printed as ``progress`` lines are; ``close()`` prints
    the closing line once any line was printed. Silent when quiet; a no-op bar in a terminal (a line there too)."""

    def __init__(self, desc: str, total: int, unit: str = "it") -> None:
        self.desc, self.total, self.unit = desc, total, unit
        self.start = self.last = time.monotonic()
        self.done = 0
        self.printed = False
        self._lock = threading.Lock()

    def tick(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            now = time.monotonic()
            if not _state["quiet"] and now - self.last >= INTERVAL_S:
                _say(line(self.desc, self.done, self.total, self.unit, now - self.start))
                self.last, self.printed = now, True

    def close(self) -> None:
        if self.printed and not _state["quiet"]:
            _say(line(self.desc, self.done, self.total, self.unit, time.monotonic() - self.start) + ", done")


def _lines(iterable: Iterable, total: int, desc: str, unit: str) -> Iterator:
    ticker = Ticker(desc, total, unit)
    for item in iterable:
        yield item
        ticker.tick()
    ticker.close()


def progress(iterable: Iterable, total: int, desc: str, unit: str = "it") -> Iterable:
    """``iterable`` with progress on stderr (a bar, or lines; nothing when quiet)."""
    if _state["quiet"]:
        return iterable
    if enabled():
        from tqdm import tqdm

        return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)
    return _lines(iterable, total, desc, unit)


@contextmanager
def stage(desc: str) -> Iterator[None]:
    """A stage without a count: every ``INTERVAL_S`` it lasts, one line with the time it has taken so far."""
    if _state["quiet"]:
        yield
        return
    done = threading.Event()
    start = time.monotonic()

    interval = max(INTERVAL_S, 1e-3)

    def tick() -> None:
        while not done.wait(interval):
            _say(f"{desc}: {_clock(time.monotonic() - start)} elapsed")

    ticker = threading.Thread(target=tick, name="progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()  # no line after the stage ends
