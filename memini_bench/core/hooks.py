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
thread of a POSIX process; elsewhere the call runs unbounded. ``HookLoop`` is ``call_bounded`` for a loop of calls
(the run's recalls): the same checks after each call, with what holds for the whole loop set up once, and the
alarm armed only when a call's deadline needs it (``_AlarmClock``: most calls make no system call for it).
"""

from __future__ import annotations

import _signal
import _thread
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
    outer = _enter_exit_guard()
    try:
        yield
    finally:
        _leave_exit_guard(outer)


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


try:
    from fcntl import F_GETFD as _F_GETFD
    from fcntl import fcntl as _fcntl
except ImportError:  # not POSIX
    _fcntl = None


def _fd_open(fd: int) -> bool:
    try:
        if _fcntl is not None:
            _fcntl(fd, _F_GETFD)  # an int back, where os.fstat builds a stat result (a recall's cost)
        else:
            os.fstat(fd)
    except OSError:
        return False
    return True


def _closed(stream: object) -> bool:
    return stream is None or bool(getattr(stream, "closed", False))


def _streams_open() -> bool:
    """Whether ``sys.stdout``, ``sys.stderr`` and descriptors 1 and 2 are all open (the quick check before
    ``_restore_streams``)."""
    return not (_closed(sys.stdout) or _closed(sys.stderr)) and _fd_open(1) and _fd_open(2)


def _restore_streams() -> str:
    """Name the standard stream the plugin closed ("" when none), putting a usable one back."""
    if _streams_open():
        return ""
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


#: The threads ``_thread`` started that still run: no lock taken (``threading.active_count`` takes one), so a
#: loop of calls sees cheaply whether any thread began or ended during a call.
_thread_count = _thread._count


def _scan_threads(system: str, hook: str, before: int) -> int:
    """The number of threads now; when it grew since ``before``, each new non-daemon thread of the plugin's own
    code is remembered as started by ``hook``; when it shrank, the idents of ended threads are forgotten (they may
    be reused)."""
    now = threading.active_count()
    if now > before:
        for t in threading.enumerate():
            if t.ident not in _KNOWN_THREADS:
                _KNOWN_THREADS.add(t.ident or 0)
                if not t.daemon and t is not threading.current_thread() and _plugin_thread(t):
                    _STARTED[t] = (system, hook)
    else:
        _forget_ended(before, now)
    return now


def _forget_ended(before: int, now: int | None = None) -> None:
    """Forget the idents of ended threads (they may be reused) when fewer run now than ``before``."""
    if (threading.active_count() if now is None else now) < before:
        _KNOWN_THREADS.intersection_update(t.ident or 0 for t in threading.enumerate())


def _after(system: str, hook: str, cwd: str) -> None:
    """The checks of the streams and the working folder after a hook returned (module docstring)."""
    if not _streams_open():
        closed = _restore_streams()
        if closed:
            raise PluginError(f"system {system}: {hook} closed {closed}; a plugin must leave the standard streams "
                              "open")
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


def _failure(system: str, hook: str, exc: BaseException) -> BaseException:
    """What a hook's exception becomes (module docstring): ``exc`` itself for an interrupt, a bound's alarm and the
    harness's own ``BenchError``, else a one-line ``PluginError`` (called in the ``except`` block: it keeps the
    trace)."""
    if isinstance(exc, KeyboardInterrupt | HookTimeout):
        return exc
    if isinstance(exc, PluginExit):
        return PluginError(f"system {system}: {hook} called os._exit({exc.code!r}); a plugin may not end the "
                           "process: raise an exception instead", traceback.format_exc())
    if isinstance(exc, BenchError):
        if _raised_by_harness(exc):
            return exc  # the harness's own one line, naming its input and the fix
        return PluginError(f"system {system}: {hook}: {one_line(exc)}", traceback.format_exc())
    # plugin code: SystemExit and MemoryError are its failures too
    return PluginError(f"system {system}: {hook} raised {describe_exception(exc)} (-traceback shows the whole "
                       "trace)", traceback.format_exc())


def _enter_exit_guard() -> bool:
    """Guard ``os._exit`` (nested: only the outermost sets it); True when this was the outermost."""
    outer = _GUARD_DEPTH[0] == 0
    if outer:
        _GUARD_PID[0] = os.getpid()
        _set_exit(_guarded_exit)
    _GUARD_DEPTH[0] += 1
    return outer


def _leave_exit_guard(outer: bool) -> None:
    _GUARD_DEPTH[0] -= 1
    if outer:
        _set_exit(_REAL_EXIT)


def threads_left() -> bool:
    """Whether a non-daemon thread a hook started still runs (a run that fails with one is ended with ``os._exit``
    after its line: the thread would keep the process from exiting)."""
    return any(t.is_alive() for t in list(_STARTED))


def call(system: str, hook: str, fn: Callable[..., R], *args: object, **kwargs: object) -> R:
    """``fn(*args, **kwargs)``; any failure but an interrupt becomes a one-line ``PluginError``; what the hook did
    to the process is checked after it (module docstring)."""
    cwd, threads = _cwd(), threading.active_count()
    if not _KNOWN_THREADS:
        _KNOWN_THREADS.update(t.ident or 0 for t in threading.enumerate())
    outer = _enter_exit_guard()
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - translated by _failure
        failed = _failure(system, hook, exc)
        if failed is exc:
            raise
        raise failed from None
    finally:
        _leave_exit_guard(outer)
        if sys.exc_info()[0] is not None:
            _restore_streams()  # the one line about the failure must be writable
            _forget_ended(threads)
    _scan_threads(system, hook, threads)
    _after(system, hook, cwd)
    return result


def _alarm(signum: int, frame: object) -> None:
    raise HookTimeout


def _past(system: str, hook: str, seconds: float) -> str:
    return f"system {system}: {hook} ran past -recall-timeout {seconds:g} s; raise the bound or fix the system"


if hasattr(signal, "setitimer"):
    _setitimer, _getitimer, _ITIMER_REAL = signal.setitimer, signal.getitimer, signal.ITIMER_REAL


def call_bounded(system: str, hook: str, seconds: float, fn: Callable[..., R], *args: object,
                 **kwargs: object) -> R:
    """``call`` with the call's wall clock bounded by ``seconds`` (0 or inf = unbounded; see the module doc)."""
    bounded = (0 < seconds < math.inf and hasattr(signal, "setitimer")
               and threading.current_thread() is threading.main_thread())
    outer = signal.getitimer(signal.ITIMER_REAL)[0] if bounded else 0.0
    if bounded and (outer == 0 or _signal.getsignal(signal.SIGALRM) is _CLOCK.handler):
        with HookLoop(system, seconds) as loop:  # no alarm running, or an open loop's: the shared alarm
            return loop.call(hook, fn, *args, **kwargs)
    if not bounded or outer <= seconds:  # another's alarm that fires first keeps its own meaning
        return call(system, hook, fn, *args, **kwargs)
    previous = _signal.signal(signal.SIGALRM, _alarm)  # another's alarm, later than the bound: ours first
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call(system, hook, fn, *args, **kwargs)
    except HookTimeout:
        raise PluginError(_past(system, hook, seconds), traceback.format_exc()) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _signal.signal(signal.SIGALRM, previous)
        # the other alarm resumes with what it had left
        signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-6))


_OWN: set[type] = set()


def own_system(cls: type[R]) -> type[R]:
    """Class decorator: instances of exactly ``cls`` (not of a subclass) are memini-bench's own systems, whose
    hooks never start a thread, change the working folder or close a standard stream; ``HookLoop`` leaves those
    per-call checks out for them (what they raise and the recall bound are handled as for any system)."""
    _OWN.add(cls)
    return cls


def is_own(system: object) -> bool:
    """Whether ``system`` is exactly of a class marked ``own_system``."""
    return type(system) in _OWN


class _AlarmClock:
    """The process's one ``ITIMER_REAL`` alarm, shared by every ``HookLoop`` (several may be open at once, one per
    system of a mode): the deadline of the bounded call now running (``monotonic`` time; ``inf`` between calls)
    and when the alarm will fire (``fires_at``; ``inf`` when unarmed).

    The bound without two system calls per call: a call's deadline is ``monotonic() + seconds``; the alarm
    (one-shot) is armed only when it would fire after that deadline or not at all. When it fires, ``tick`` raises
    ``HookTimeout`` if the call is past its deadline, re-arms it for the rest of a call still within its bound (so
    the bound is exact), and leaves it unarmed between calls. A loop of calls quicker than ``seconds`` thus arms
    it about once per ``seconds``; a call of a plugin (which could reset the timer itself) also reads it back
    (``getitimer``) and re-arms it when it was disarmed."""

    def __init__(self) -> None:
        self.deadline = self.fires_at = math.inf
        self.handler = self.tick  # one bound method: its identity is what each call compares

    def tick(self, signum: int, frame: object) -> None:
        """The alarm's handler: past the deadline, ``HookTimeout``; within a call, the alarm again at its
        deadline; between calls, nothing (left unarmed)."""
        if self.deadline <= time.monotonic():
            self.deadline = self.fires_at = math.inf
            raise HookTimeout
        self.fires_at = math.inf
        if self.deadline < math.inf:
            self.arm(self.deadline)

    def claim(self, trusted: bool) -> None:
        """Before a call: the handler put back if a call's hook replaced it, and ``fires_at`` forgotten when the
        alarm is not what it says (replaced, or, under a plugin, found disarmed)."""
        if _signal.getsignal(signal.SIGALRM) is not self.handler:  # a call's hook replaced it
            _signal.signal(signal.SIGALRM, self.handler)
            self.fires_at = math.inf
        elif not trusted and self.fires_at < math.inf and _getitimer(_ITIMER_REAL)[0] == 0:
            self.fires_at = math.inf  # a plugin's call disarmed it

    def arm(self, at: float) -> None:
        """The alarm to fire at monotonic time ``at`` (at once if that is past)."""
        self.fires_at = at
        _setitimer(_ITIMER_REAL, max(at - time.monotonic(), 1e-6))

    def disarm(self) -> None:
        _setitimer(_ITIMER_REAL, 0)
        self.fires_at = math.inf


_CLOCK = _AlarmClock()


class HookLoop:
    """``call_bounded`` for one system's calls of one hook in a loop (the run's recalls), under the same contract,
    with what holds for the whole loop done once, on entering: ``os._exit`` guarded, the alarm's handler
    installed, the working folder read, the threads counted. Each call then does only what can change with it:
    its deadline set on the shared alarm (``_AlarmClock``: no system call for most calls), the threads counted
    (and looked at when there are more), the standard streams and the working folder checked against the loop's;
    for one of memini-bench's own systems (``own``, see ``own_system``) the last three are left out. Off the main
    thread, or under an outer alarm already running (one not of a loop), each call is ``call_bounded`` itself."""

    def __init__(self, system: str, seconds: float, *, own: bool = False) -> None:
        self.system, self.seconds, self.own = system, seconds, own
        self.bounded = 0 < seconds < math.inf and hasattr(signal, "setitimer")
        self.fast, self.outer, self.previous, self.cwd, self.threads, self.started = False, False, None, "", 0, 0

    def __enter__(self) -> HookLoop:
        self.fast = threading.current_thread() is threading.main_thread() and not (
            self.bounded and signal.getitimer(signal.ITIMER_REAL)[0] > 0
            and _signal.getsignal(signal.SIGALRM) is not _CLOCK.handler)
        if self.fast:
            self.cwd, self.threads, self.started = _cwd(), threading.active_count(), _thread_count()
            if not _KNOWN_THREADS:
                _KNOWN_THREADS.update(t.ident or 0 for t in threading.enumerate())
            self.outer = _enter_exit_guard()
            if self.bounded:
                self.previous = _signal.signal(signal.SIGALRM, _CLOCK.handler)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fast:
            if self.bounded:
                _signal.signal(signal.SIGALRM, self.previous)
                if self.previous is not _CLOCK.handler:  # the outermost loop: no call is bounded now
                    _CLOCK.disarm()
            _leave_exit_guard(self.outer)
            self.fast = False

    def recount(self) -> None:
        """Count the threads afresh: for a loop whose calls other code runs between (a mode driving a
        ``GuardedSystem``), so that a thread started in between is not taken for one of this call's."""
        if self.fast:
            self.threads, self.started = threading.active_count(), _thread_count()

    def call(self, hook: str, fn: Callable[..., R], *args: object, **kwargs: object) -> R:
        """``fn(*args, **kwargs)`` as ``call_bounded(system, hook, seconds, fn, ...)`` calls it."""
        if not self.fast:
            return call_bounded(self.system, hook, self.seconds, fn, *args, **kwargs)
        try:
            if self.bounded:  # the call's deadline on the shared alarm (_AlarmClock), armed only when needed
                clock = _CLOCK
                clock.claim(self.own)
                outer, deadline = clock.deadline, time.monotonic() + self.seconds
                if deadline > outer:  # a call inside another's keeps the earlier deadline
                    deadline = outer
                clock.deadline = deadline
                if clock.fires_at > deadline:
                    clock.arm(deadline)
                try:
                    result = fn(*args, **kwargs)
                finally:
                    clock.deadline = outer  # the outer call's deadline back (inf between calls)
                    if clock.fires_at > outer:
                        clock.arm(outer)
            else:
                result = fn(*args, **kwargs)
        except HookTimeout:
            raise PluginError(_past(self.system, hook, self.seconds), traceback.format_exc()) from None
        except BaseException as exc:  # noqa: BLE001 - translated by _failure
            failed = _failure(self.system, hook, exc)
            _restore_streams()  # the one line about the failure must be writable
            _forget_ended(self.threads)
            if failed is exc:
                raise
            raise failed from None
        if self.own:
            return result
        if _thread_count() != self.started:  # a thread began or ended during the call
            self.threads = _scan_threads(self.system, hook, self.threads)
            self.started = _thread_count()
        try:  # _after's checks, inline (a recall's cost): the streams open, the folder the loop's
            ok = _streams_open() and os.getcwd() == self.cwd
        except OSError:  # the folder was removed
            ok = False
        if not ok:
            _after(self.system, hook, self.cwd)
        return result


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
