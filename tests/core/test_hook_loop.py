"""``core.hooks.HookLoop``, the guard of a run's recall loop, in this process: a plugin's call is checked after each
call as ``call_bounded`` checks it (the folder, the bound), the loop leaves the alarm's handler and ``os._exit`` as
it found them, and only exactly one of memini-bench's own system classes skips the process checks."""

from __future__ import annotations

import os
import signal
import time

import pytest

from memini_bench.core import hooks
from memini_bench.systems.memini import HybridSystem


def test_a_chdir_in_a_loop_call_is_refused_and_put_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    handler, exit_fn = signal.getsignal(signal.SIGALRM), os._exit
    with hooks.HookLoop("odd", 600.0) as loop:
        assert loop.call("recall for question 'q1'", lambda: 1) == 1
        with pytest.raises(hooks.PluginError, match=r"system odd: recall for question 'q2' changed the working"):
            loop.call("recall for question 'q2'", os.chdir, "elsewhere")
        assert os.getcwd() == str(tmp_path)
    assert signal.getsignal(signal.SIGALRM) is handler and os._exit is exit_fn


def test_a_loop_call_past_the_bound_is_one_line():
    with hooks.HookLoop("slow", 0.2) as loop, pytest.raises(hooks.PluginError, match="ran past -recall-timeout 0.2 s"):
        loop.call("recall for question 'q1'", time.sleep, 600)   # the alarm ends it; 600 s only if it never came


def test_own_systems_are_exactly_the_marked_classes():
    class Subclassed(HybridSystem):
        pass

    hybrid = HybridSystem.__new__(HybridSystem)
    assert hooks.is_own(hybrid) and not hooks.is_own(Subclassed.__new__(Subclassed))


def test_an_own_system_skips_the_process_checks(tmp_path, monkeypatch):
    """The trust boundary, stated: the folder check is left out for one of the harness's own systems (their code
    never changes it), not for anything else."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    with hooks.HookLoop("memini-hybrid", 600.0, own=True) as loop:
        loop.call("recall for question 'q1'", os.chdir, "elsewhere")
    assert os.getcwd() == str(tmp_path / "elsewhere")


def test_loops_open_together_each_bound_their_calls_and_leave_no_alarm():
    """Two loops open at once (one per system, as ``guarded_systems`` opens them) share the process's one alarm:
    a call of either past its bound is stopped, and leaving both puts the handler back with no alarm armed."""
    handler = signal.getsignal(signal.SIGALRM)
    with hooks.HookLoop("first", 0.2) as first, hooks.HookLoop("second", 0.2) as second:
        for _ in range(3):
            assert first.call("recall", lambda: 1) == 1 and second.call("recall", lambda: 2) == 2
        with pytest.raises(hooks.PluginError, match="system second: recall ran past"):
            second.call("recall", time.sleep, 600)
        with pytest.raises(hooks.PluginError, match="system first: recall ran past"):
            first.call("recall", time.sleep, 600)
    assert signal.getsignal(signal.SIGALRM) is handler and signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_quick_calls_arm_the_alarm_once_and_a_later_call_keeps_its_whole_bound(monkeypatch):
    """The alarm is armed when a call's deadline needs it, not per call; a call after many quick ones still gets
    its own full bound (the alarm, due at an earlier call's deadline, is re-armed for the rest of this one)."""
    armed = []
    real = hooks._setitimer
    monkeypatch.setattr(hooks, "_setitimer", lambda which, seconds: (armed.append(seconds), real(which, seconds))[1])
    with hooks.HookLoop("quick", 0.5, own=True) as loop:
        for _ in range(1000):
            loop.call("recall", int)
        assert len([s for s in armed if s > 0]) == 1
        time.sleep(0.3)  # the armed alarm is now due 0.2 s from here, before the next call's deadline
        start = time.monotonic()
        with pytest.raises(hooks.PluginError, match="ran past -recall-timeout 0.5 s"):
            loop.call("recall", time.sleep, 600)
        assert time.monotonic() - start >= 0.49  # stopped at its own deadline, not at the earlier call's


def test_a_plugin_that_disarms_or_replaces_the_alarm_is_still_bounded_on_its_next_call():
    def disarm():
        signal.setitimer(signal.ITIMER_REAL, 0)

    def replace():
        signal.signal(signal.SIGALRM, signal.SIG_IGN)

    for meddle in (disarm, replace):
        with hooks.HookLoop("meddling", 0.2) as loop:
            loop.call("recall", int)
            loop.call("recall", meddle)
            with pytest.raises(hooks.PluginError, match="system meddling: recall ran past"):
                loop.call("recall", time.sleep, 600)


def test_a_bounded_call_between_a_loops_calls_keeps_its_bound():
    with hooks.HookLoop("looped", 600.0) as loop:
        loop.call("recall", int)  # the alarm is armed, 600 s away
        with pytest.raises(hooks.PluginError, match="system other: ingest ran past -recall-timeout 0.2 s"):
            hooks.call_bounded("other", "ingest", 0.2, time.sleep, 600)
        loop.call("recall", int)
