"""``make report-scale`` (cmd/report_scale.py) runs to the end wherever chromium is installed: it waits for rows
that the boards (``section#board-<set>-<protocol>``), the all-runs table and the receipts really have (it waited
for ``#board`` on the index, which the boards no longer carry, and exited 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"


def test_report_scale_times_every_page_in_chromium(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (run .ci/install-browser: apt-get install chromium)")
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[report]')")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "cmd")])}
    out = subprocess.run([sys.executable, str(ROOT / "cmd" / "report_scale.py"), "-items", "500", "-questions",
                          "60", "-systems", "2", "-dir", str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"leaderboard_ms", "all_runs_ms", "receipts_first_page_ms", "filter_switch_ms"} <= set(report)
    assert report["per_question_rows"] == 120
