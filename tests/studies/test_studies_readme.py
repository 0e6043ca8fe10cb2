"""The studies' sections (docs/memini/studies.md) render from the committed results files (the generator the README
uses)."""

from __future__ import annotations

from pathlib import Path

from docgen import studies as readme

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_every_committed_study_renders():
    text = readme.sections(RESULTS)
    for title, name, command, _ in readme.STUDIES:
        if (RESULTS / name).exists():
            assert f"### {title}\n\n`{command}`" in text
    assert ("### Poison" in text) == all((RESULTS / n).exists() for n in readme.POISON[:2])


def test_missing_files_are_left_out(tmp_path):
    assert readme.sections(tmp_path) == ""
