"""docs/studies.md is generated from the committed results files (tools.readme.docs_studies) and is current."""

from __future__ import annotations

from pathlib import Path

from tools.readme import docs_studies

ROOT = Path(__file__).resolve().parents[1]


def test_the_studies_page_is_current():
    assert (ROOT / "docs" / "studies.md").read_text() == docs_studies.page(ROOT / "results"), \
        "docs/studies.md is out of date: run python -m tools.readme.docs_studies"


def test_every_section_names_its_command_and_missing_files_are_left_out(tmp_path):
    text = docs_studies.page(ROOT / "results")
    for title, name, command, _ in docs_studies.SECTIONS:
        assert ((ROOT / "results" / name).exists()) == (f"## {title}\n\n`{command}`" in text)
    assert docs_studies.page(tmp_path) == docs_studies.HEADER
    assert "\n| 60 | " in text and "| 52.8 / - |" in text   # the rrfK 60 row, memini's published figure beside
