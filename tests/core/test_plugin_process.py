"""A plugin that misbehaves towards the process (os._exit, closing stdout, a stray non-daemon thread, os.chdir, a
describe() that raises or returns no JSON) ends the run as one line naming the system and the hook, exit 2, nothing
written; each case runs the real CLI in its own process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "memini_bench" / "data" / "sample.json"

PLUGIN = '''
import os, sys, threading, time
from memini_bench.core.contract import Hit

class Odd:
    name = "odd"
    def ingest(self, items):
        self.items = list(items)
        {ingest}
    def recall(self, group, query, k, *, now=None, context=None):
        {recall}
        return [Hit((it.id,), 1.0, it.content) for it in self.items if it.group == group][:k]
    {extra}

def make(ctx):
    return Odd()
'''

SPIN_ONCE = ("self.__dict__.get('t') or self.__dict__.setdefault('t', threading.Thread(target=lambda: "
             "time.sleep(10**6), name='spin')).start()")   # a non-daemon thread, started by the first recall

CASES = {
    "os._exit in recall": ({"recall": "os._exit(0)"}, ("system odd: recall for question", "called os._exit(0)")),
    "os._exit(3) in ingest": ({"ingest": "os._exit(3)"}, "system odd: ingest called os._exit(3)"),
    "os._exit in a thread": ({"ingest": "t = threading.Thread(target=lambda: os._exit(0)); t.start(); t.join()"},
                             "of a plugin called os._exit(0) during the run"),
    "closes sys.stdout": ({"recall": "sys.stdout.close()"}, ("system odd: recall for question", "closed stdout")),
    "closes descriptor 1": ({"ingest": "os.close(1)"}, "system odd: ingest closed stdout"),
    "closes sys.stderr": ({"recall": "sys.stderr.close()"}, ("system odd: recall for question", "closed stderr")),
    "chdir": ({"ingest": "os.chdir('elsewhere')"}, "system odd: ingest changed the working folder"),
    # the recalls run under one guard for the whole loop (core.hooks.HookLoop): each call is still checked
    "chdir in recall": ({"recall": "os.chdir('elsewhere')"},
                        ("system odd: recall for question", "changed the working folder")),
    "closes descriptor 1 in recall": ({"recall": "os.close(1)"}, ("system odd: recall for question", "closed stdout")),
    "stray thread in recall": ({"recall": SPIN_ONCE}, ("system odd: recall for question",
                                                       "started thread 'spin' (not a daemon)")),
    # a run that fails after a plugin left a thread running still ends (the thread would keep it from exiting)
    "stray thread, then a failing recall": ({"recall": f"1 / 0 if self.__dict__.get('t') else {SPIN_ONCE}"},
                                            ("system odd: recall for question", "raised ZeroDivisionError")),
    "stray thread": ({"ingest": "threading.Thread(target=lambda: time.sleep(10**6), name='spin').start()"},
                     "system odd: ingest started thread 'spin' (not a daemon)"),
    "describe raises": ({"extra": "def describe(self):\n        raise KeyError('x')"},
                        "system odd: describe raised KeyError"),
    "describe returns an object": ({"extra": "def describe(self):\n        return {'x': object()}"},
                                   "system odd: describe() returned"),
    "describe returns a list": ({"extra": "def describe(self):\n        return [1]"},
                                "system odd: describe() returned a list, not a dict"),
    "describe returns int keys": ({"extra": "def describe(self):\n        return {1: 2}"},
                                  "system odd: describe() returned"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_plugin_hurting_the_process_is_one_line_exit_2_nothing_written(tmp_path, case):
    parts, expected = CASES[case]
    code = PLUGIN.format(ingest=parts.get("ingest", "pass"), recall=parts.get("recall", "pass"),
                         extra=parts.get("extra", ""))
    plugin = tmp_path / "odd.py"
    plugin.write_text(code)
    (tmp_path / "elsewhere").mkdir()
    done = subprocess.run([sys.executable, "-m", "memini_bench", "-suite", "file", "-data", str(SAMPLE), "-embedder",
                           "hash", "-systems", f"{plugin}:make", "-out", "out", "-per-question", "pq.jsonl"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,  # a hang guard only
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr)
    fragments = expected if isinstance(expected, tuple) else (expected,)
    assert lines and lines[-1].startswith("memini-bench: error: "), done.stderr
    assert all(f in lines[-1] for f in fragments), done.stderr
    assert "Traceback" not in done.stderr
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["odd.py"], written      # no results, no per-question file, here or under elsewhere/


def test_a_forked_child_of_a_plugin_may_still_exit_with_os_exit(tmp_path):
    """The guard is for this process only: a child the plugin forks ends with its own os._exit."""
    code = PLUGIN.format(ingest="pid = os.fork()\n        if pid == 0:\n            os._exit(7)\n        "
                                "assert os.waitpid(pid, 0)[1] >> 8 == 7", recall="pass", extra="")
    plugin = tmp_path / "forks.py"
    plugin.write_text(code)
    done = subprocess.run([sys.executable, "-m", "memini_bench", "-suite", "file", "-data", str(SAMPLE), "-embedder",
                           "hash", "-systems", f"{plugin}:make", "-no-write"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr


def test_outputs_are_resolved_before_plugin_code_runs(tmp_path):
    """A plugin module that changes the working folder as it is imported (before any hook) cannot move a relative
    -out or -per-question: they were made absolute against the folder the run started in."""
    code = "import os\nos.chdir('elsewhere')\n" + PLUGIN.format(ingest="pass", recall="pass", extra="")
    plugin = tmp_path / "moves.py"
    plugin.write_text(code)
    (tmp_path / "elsewhere").mkdir()
    done = subprocess.run([sys.executable, "-m", "memini_bench", "-suite", "file", "-data", str(SAMPLE), "-embedder",
                           "hash", "-systems", f"{plugin}:make", "-out", "out", "-per-question", "pq.jsonl"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "pq.jsonl").is_file() and list((tmp_path / "out").glob("*.json"))
    assert list((tmp_path / "elsewhere").iterdir()) == []
