"""Calling plugin code under the CLI's contract: one line naming the system, the hook and the exception.

A System's factory, ``ingest``, ``prepare``, ``recall`` and ``close`` are code the harness does not own. Whatever
they raise (any ``Exception``, ``SystemExit`` from a ``sys.exit`` or an argparse error inside the plugin, a
``MemoryError``) becomes a ``PluginError``: a ``BenchError`` whose message is
``system NAME: HOOK raised TYPE: MESSAGE`` (exit 2, nothing written), with the whole trace kept in ``trace`` for
``-traceback``. ``KeyboardInterrupt`` passes through (the CLI reports an interrupt), and so does a ``BenchError``
raised by memini-bench's own code (by contract already one line naming its input and the fix); a plugin's
``BenchError`` gets the system and the hook in front.

``call_bounded`` also bounds the wall clock of one call with ``SIGALRM`` (``signal.setitimer``): the alarm raises
``HookTimeout`` inside the call as soon as the interpreter runs Python code again (a blocking ``time.sleep`` or
socket read is interrupted; a long C loop that never returns to Python is not). The bound holds only on the main
thread of a POSIX process; elsewhere the call runs unbounded.
"""

from __future__ import annotations

import _signal
import math
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from typing import TypeVar

from memini_bench.errors import BenchError

R = TypeVar("R")


class PluginError(BenchError):
    """A plugin hook failed: one line (``str``), and the whole trace (``trace``) for ``-traceback``."""

    def __init__(self, message: str, trace: str = "") -> None:
        super().__init__(message)
        self.trace = trace


class HookTimeout(BaseException):
    """Raised inside a call that ran past its bound (``call_bounded``); a ``BaseException``, so a plugin's own
    ``except Exception`` does not swallow it."""


def one_line(text: object) -> str:
    """``text`` on one line: newlines (a path or a message that holds one) written as ``\\n``."""
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


def describe_exception(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"SystemExit (sys.exit({exc.code!r}) or an argparse error inside the plugin)"
    message = one_line(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _raised_by_harness(exc: BaseException) -> bool:
    """Whether the frame that raised ``exc`` is memini-bench's own code (a built-in system's or embedder's
    ``BenchError`` already names its input; a plugin's gets the system and hook in front)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and str(tb.tb_frame.f_globals.get("__name__", "")).startswith("memini_bench")


def call(system: str, hook: str, fn: Callable[..., R], *args: object, **kwargs: object) -> R:
    """``fn(*args, **kwargs)``; any failure but an interrupt becomes a one-line ``PluginError``."""
    try:
        return fn(*args, **kwargs)
    except (KeyboardInterrupt, HookTimeout):
        raise
    except BenchError as exc:
        if _raised_by_harness(exc):
            raise  # the harness's own one line, naming its input and the fix
        raise PluginError(f"system {system}: {hook}: {one_line(exc)}", traceback.format_exc()) from None
    except BaseException as exc:  # noqa: BLE001 - plugin code: SystemExit and MemoryError are its failures too
        raise PluginError(f"system {system}: {hook} raised {describe_exception(exc)} (-traceback shows the "
                          "whole trace)", traceback.format_exc()) from None


def _alarm(signum: int, frame: object) -> None:
    raise HookTimeout


def call_bounded(system: str, hook: str, seconds: float, fn: Callable[..., R], *args: object,
                 **kwargs: object) -> R:
    """``call`` with the call's wall clock bounded by ``seconds`` (0 or inf = unbounded; see the module doc)."""
    bounded = (0 < seconds < math.inf and hasattr(signal, "setitimer")
               and threading.current_thread() is threading.main_thread())
    outer = signal.getitimer(signal.ITIMER_REAL)[0] if bounded else 0.0
    if not bounded or 0 < outer <= seconds:  # an outer alarm that fires first keeps its own meaning
        return call(system, hook, fn, *args, **kwargs)
    previous = _signal.signal(signal.SIGALRM, _alarm)  # _signal: no enum round trip per call (a recall's cost)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call(system, hook, fn, *args, **kwargs)
    except HookTimeout:
        raise PluginError(f"system {system}: {hook} ran past -recall-timeout {seconds:g} s; raise the bound or "
                          "fix the system", traceback.format_exc()) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _signal.signal(signal.SIGALRM, previous)
        if outer:  # the outer alarm resumes with what it had left
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-6))


class StderrCapture:
    """What is written to file descriptor 2 from now until ``stop``, kept aside (at the descriptor, so a logger
    that holds ``sys.stderr`` keeps working); ``stop(replay=True)`` writes it back to stderr, ``stop(replay=False)``
    returns it unwritten. Where descriptor 2 cannot be duplicated nothing is captured."""

    def __init__(self) -> None:
        self._saved: int | None = None
        self._file = None
        try:
            sys.stderr.flush()
            self._saved = os.dup(2)
            self._file = tempfile.TemporaryFile()
            os.dup2(self._file.fileno(), 2)
        except (OSError, ValueError, AttributeError):
            self._close()

    def _close(self) -> None:
        if self._saved is not None:
            os.dup2(self._saved, 2)
            os.close(self._saved)
            self._saved = None

    def stop(self, replay: bool = True) -> str:
        """Restore descriptor 2 (once) and return what was captured, replayed unless ``replay`` is False."""
        if self._file is None:
            return ""
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        self._close()
        self._file.seek(0)
        text = self._file.read().decode("utf-8", "replace")
        self._file.close()
        self._file = None
        if replay and text:
            try:
                sys.stderr.write(text)
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
        return text
