"""The README's generated blocks match results/ and the CLI, and every number table in it is a generated one."""

from __future__ import annotations

import re
from pathlib import Path

from tools.readme.table import FLAGS, blocks, flags_table, updated

ROOT = Path(__file__).resolve().parents[1]


def test_readme_tables_are_current():
    readme = (ROOT / "README.md").read_text()
    expected = updated(readme, FLAGS, flags_table())
    for name, render in blocks().items():
        marker = (f"<!-- {name}:begin -->", f"<!-- {name}:end -->")
        if marker[0] in expected:
            expected = updated(expected, marker, render(ROOT / "results"))
    assert readme == expected, "README is out of date: run `python cmd/results_table.py`"


def test_every_number_table_in_the_readme_is_generated():
    """A markdown table row with a numeric cell (digits, dots, %, / and signs only, e.g. ``58.7 / 67.1``) must sit
    inside a generated block: numbers are never typed by hand."""
    inside, typed = None, []
    for n, line in enumerate((ROOT / "README.md").read_text().splitlines(), 1):
        begin, end = re.match(r"<!-- (\S+):begin -->", line), re.match(r"<!-- (\S+):end -->", line)
        if begin:
            inside = begin.group(1)
        elif end:
            inside = None
        elif inside is None and line.startswith("|") and any(
                re.fullmatch(r"[\d.\s/%+-]*\d[\d.\s/%+-]*", cell) for cell in line.strip("|").split("|")):
            typed.append(f"README.md:{n}: {line[:80]}")
    assert not typed, "hand-typed number rows:\n" + "\n".join(typed)


def test_blocks_render_a_note_for_missing_files(tmp_path):
    for name, render in blocks().items():
        text = render(tmp_path)
        assert isinstance(text, str) and text.endswith("\n"), name
