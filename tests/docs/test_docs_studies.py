"""The study-rows block of docs/memini/studies.md (docgen.docs_studies): each section names its command and shows
only when its results file is committed; memini's published figures stand beside ours."""

from __future__ import annotations

from pathlib import Path

from docgen import docs_studies

ROOT = Path(__file__).resolve().parents[2]


def test_every_section_names_its_command_and_missing_files_are_left_out(tmp_path):
    text = docs_studies.block(ROOT / "results")
    for title, name, command, _ in docs_studies.SECTIONS:
        assert ((ROOT / "results" / name).exists()) == (f"### {title}\n\n`{command}`" in text)
    assert "is committed yet" in docs_studies.block(tmp_path)
    assert "\n| 60 | " in text and "| 52.8 / - |" in text   # the rrfK 60 row, memini's published figure beside
