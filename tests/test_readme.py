"""The README's generated blocks (results table, flag table) match results/ and the CLI."""

from __future__ import annotations

from pathlib import Path

from memini_bench.readme_table import FLAGS, RESULTS, flags_table, render, updated

ROOT = Path(__file__).resolve().parents[1]


def test_readme_tables_are_current():
    readme = (ROOT / "README.md").read_text()
    expected = updated(updated(readme, RESULTS, render(ROOT / "results")), FLAGS, flags_table())
    assert readme == expected, "README is out of date: run `python cmd/results_table.py`"
