"""Calling plugin code under the CLI's contract: one line naming the system, the hook and the exception.

A System's factory, ``ingest``, ``prepare``, ``recall`` and ``close`` are code the harness does not own. Whatever
they raise (any ``Exception``, ``SystemExit`` from a ``sys.exit`` or an argparse error inside the plugin, a
``MemoryError``) becomes a ``PluginError``: a ``BenchError`` whose message is
``system NAME: HOOK raised TYPE: MESSAGE`` (exit 2, nothing written), with the whole trace kept in ``trace`` for
``-traceback``. ``KeyboardInterrupt`` passes through (the CLI reports an interrupt), and so does a ``BenchError``
raised by memini-bench's own code (by contract already one line naming its input and the fix); a plugin's
``BenchError`` gets the system and the hook in front.

What a plugin does to the process is guarded too, while its hook runs and right after it returns:

- ``os._exit`` (and ``posix._exit``) called from the hook, in this process, raises inside the hook instead of
  ending the process, and becomes ``system NAME: HOOK called os._exit(CODE)``: a run that did not write its results
  never ends with exit 0 that way. Under ``run_guard`` (the whole run) a plugin's own thread calling it ends that
  thread instead, and ``check_threads`` refuses the run. (Not caught: an ``_exit`` the plugin bound to another name
  before the guard, ``ctypes`` or a signal: those end the process, like a crash, with no results file.)
- a hook that closes ``sys.stdout`` / ``sys.stderr`` or descriptor 1 or 2 is refused (a usable stream is put back
  first so that the line can be written);
- a hook that changes the working folder (``os.chdir``) is put back where the run started and refused (output paths
  given as relative stay relative to the folder the user ran in);
- a non-daemon thread a hook starts from the plugin's own code is remembered; ``check_threads()`` (called by the
  run before it places its files) waits ``THREAD_GRACE_S`` for any still running, then refuses the run naming the
  system and the hook that started it, with ``hard_exit`` set: such a thread would keep the process from ever
  exiting, so the CLI ends it with ``os._exit`` after the line. Threads whose code is an installed library's
  (``site-packages``) or the standard library's (``concurrent.futures`` workers, which its exit hook stops) are
  not the plugin's and are left alone.

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from memini_bench.errors import BenchError

R = TypeVar("R")


class PluginError(BenchError):
    """A plugin hook failed: one line (``str``), and the whole trace (``trace``) for ``-traceback``."""

    def __init__(self, message: str, trace: str = "", *, hard_exit: bool = False) -> None:
        super().__init__(message)
        self.trace = trace
        self.hard_exit = hard_exit


THREAD_GRACE_S = 2.0


class PluginExit(BaseException):
    """``os._exit`` called by plugin code under ``call``: raised in its place."""

    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


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


_REAL_EXIT = os._exit
_GUARD_DEPTH = [0]
_KNOWN_THREADS: set[int] = set()
_STARTED: dict[threading.Thread, tuple[str, str]] = {}   # a non-daemon thread a hook started -> (system, hook)


_EXIT_ATTEMPTS: list[tuple[str, object]] = []   # (thread name, code) of an os._exit from another thread


def _guarded_exit(code: int = 0) -> None:
    if os.getpid() != _GUARD_PID[0]:  # a child forked by the plugin: its own exit is its business
        _REAL_EXIT(code)
    if threading.current_thread() is not threading.main_thread():
        _EXIT_ATTEMPTS.append((threading.current_thread().name, code))
        raise SystemExit(code)  # ends that thread quietly; check_threads refuses the run
    raise PluginExit(code)


@contextmanager
def run_guard() -> Iterator[None]:
    """``os._exit`` guarded for a whole run (not only inside hooks): a plugin's own thread calling it ends that
    thread, and ``check_threads`` then refuses the run."""
    outer = _GUARD_DEPTH[0] == 0
    if outer:
        _GUARD_PID[0] = os.getpid()
        _set_exit(_guarded_exit)
    _GUARD_DEPTH[0] += 1
    try:
        yield
    finally:
        _GUARD_DEPTH[0] -= 1
        if outer:
            _set_exit(_REAL_EXIT)


_GUARD_PID = [os.getpid()]


def _set_exit(fn: Callable) -> None:
    os._exit = fn
    try:
        import posix

        posix._exit = fn
    except ImportError:  # not POSIX
        pass


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return ""


def _fd_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _closed(stream: object) -> bool:
    return stream is None or bool(getattr(stream, "closed", False))


def _restore_streams() -> str:
    """Name the standard stream the plugin closed ("" when none), putting a usable one back."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        if _closed(stream) or not _fd_open(fd):
            if not _fd_open(fd):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, fd)
                os.close(devnull)
            if _closed(stream):
                setattr(sys, name, os.fdopen(os.dup(fd), "w", buffering=1))
            return name
    return ""


def _plugin_thread(t: threading.Thread) -> bool:
    """Whether ``t`` runs code outside the standard and installed libraries (``_after``)."""
    target = getattr(t, "_target", None) or type(t).run
    code = getattr(target, "__code__", None)
    where = code.co_filename if code is not None else ""
    return bool(where) and not any(part in where for part in ("site-packages", "dist-packages",
                                                              os.path.dirname(threading.__file__) + os.sep))


def _after(system: str, hook: str, cwd: str, threads: int) -> None:
    """The checks after a hook returned (module docstring)."""
    if threading.active_count() > threads:
        for t in threading.enumerate():
            if t.ident not in _KNOWN_THREADS:
                _KNOWN_THREADS.add(t.ident or 0)
                if not t.daemon and t is not threading.current_thread() and _plugin_thread(t):
                    _STARTED[t] = (system, hook)
    closed = _restore_streams()
    if closed:
        raise PluginError(f"system {system}: {hook} closed {closed}; a plugin must leave the standard streams open")
    now = _cwd()
    if cwd and now != cwd:
        os.chdir(cwd)
        raise PluginError(f"system {system}: {hook} changed the working folder (os.chdir to {one_line(now)}); it "
                          "was put back and the run refused: a plugin must not change the process's folder")


def check_threads() -> None:
    """Refuse a run in which a hook left a non-daemon thread running, or a plugin's thread called ``os._exit``
    (module docstring)."""
    if _EXIT_ATTEMPTS:
        name, code = _EXIT_ATTEMPTS.pop(0)
        _EXIT_ATTEMPTS.clear()
        raise PluginError(f"thread {one_line(name)!r} of a plugin called os._exit({code!r}) during the run; a plugin "
                          "may not end the process: the run is refused")
    for t, (system, hook) in list(_STARTED.items()):
        if t.is_alive():
            t.join(THREAD_GRACE_S)
        if t.is_alive():
            raise PluginError(f"system {system}: {hook} started thread {one_line(t.name)!r} (not a daemon), still "
                              "running after the run; it would keep the process from exiting: stop it in close() "
                              "or make it a daemon", hard_exit=True)
        del _STARTED[t]


def call(system: str, hook: str, fn: Callable[..., R], *args: object, **kwargs: object) -> R:
    """``fn(*args, **kwargs)``; any failure but an interrupt becomes a one-line ``PluginError``; what the hook did
    to the process is checked after it (module docstring)."""
    cwd, threads = _cwd(), threading.active_count()
    if not _KNOWN_THREADS:
        _KNOWN_THREADS.update(t.ident or 0 for t in threading.enumerate())
    outer = _GUARD_DEPTH[0] == 0
    if outer:
        _GUARD_PID[0] = os.getpid()
        _set_exit(_guarded_exit)
    _GUARD_DEPTH[0] += 1
    try:
        result = fn(*args, **kwargs)
    except (KeyboardInterrupt, HookTimeout):
        raise
    except PluginExit as exc:
        raise PluginError(f"system {system}: {hook} called os._exit({exc.code!r}); a plugin may not end the "
                          "process: raise an exception instead", traceback.format_exc()) from None
    except BenchError as exc:
        if _raised_by_harness(exc):
            raise  # the harness's own one line, naming its input and the fix
        raise PluginError(f"system {system}: {hook}: {one_line(exc)}", traceback.format_exc()) from None
    except BaseException as exc:  # noqa: BLE001 - plugin code: SystemExit and MemoryError are its failures too
        raise PluginError(f"system {system}: {hook} raised {describe_exception(exc)} (-traceback shows the "
                          "whole trace)", traceback.format_exc()) from None
    finally:
        _GUARD_DEPTH[0] -= 1
        if outer:
            _set_exit(_REAL_EXIT)
        if sys.exc_info()[0] is not None:
            _restore_streams()  # the one line about the failure must be writable
        if threading.active_count() < threads:  # a thread ended: forget idents that may be reused
            _KNOWN_THREADS.intersection_update(t.ident or 0 for t in threading.enumerate())
    _after(system, hook, cwd, threads)
    return result


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
