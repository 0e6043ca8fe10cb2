"""The package's shape holds: the import-linter contract in pyproject (layers, no cycles) is kept, and the package
root stays small (entry point and the few names every layer shares)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_layer_contract_is_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def test_the_package_root_holds_at_most_six_modules():
    modules = sorted(p.name for p in (ROOT / "memini_bench").glob("*.py"))
    assert len(modules) <= 6, modules
