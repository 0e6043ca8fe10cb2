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
