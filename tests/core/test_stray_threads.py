"""A plugin's thread the run's guard cannot attribute (a ``threading.Timer``, a thread pool's worker, a thread
whose target is a built-in) does not keep ``memini-bench`` alive after the results are written: the process ends
with the run's exit code and a line naming the threads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = '''
import concurrent.futures, threading, time
from memini_bench.systems.memini import make_keyword

def make(ctx):
    threading.Timer(3600, print).start()
    threading.Thread(target=time.sleep, args=(3600,)).start()
    concurrent.futures.ThreadPoolExecutor(1).submit(time.sleep, 3600)
    system = make_keyword(ctx)
    system.name = "stray-keyword"
    return system
'''


def test_stray_plugin_threads_do_not_keep_the_process_alive(tmp_path):
    (tmp_path / "stray_plugin.py").write_text(PLUGIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    out = subprocess.run([sys.executable, "-m", "memini_bench", "-suite", "sample", "-embedder", "hash", "-system",
                          "stray_plugin:make", "-systems", "keyword", "-out", str(tmp_path / "runs")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["memini-sample-sys-keyword+stray-keyword.json"]
    assert "ended 3 thread(s) a plugin left running" in out.stderr
