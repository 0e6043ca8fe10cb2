"""The report under large or hostile input: the site is one unit (staged, renamed at the end; a failed build
leaves the previous site), a folder of other files is refused, inputs above the row bound are refused before any
page, and a data set above the chart bound gets no significance matrices and a reduced recall-latency plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import run_cli

from memini_bench.report import cli as report_cli
from memini_bench.report import site
from tests.conftest import needs_report

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT / "results" / "locomo.json"


def _many(tmp_path: Path, systems: int) -> Path:
    doc = json.loads(LOCOMO.read_text())
    first = [r for r in doc["results"] if r["system"] == doc["results"][0]["system"]]
    doc["results"] = [{**r, "system": f"sys-{i:05d}"} for i in range(systems) for r in first]
    doc.pop("significance", None)
    path = tmp_path / "many.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_data_set_above_the_chart_bound_gets_no_matrices_and_a_reduced_plot(tmp_path, capsys):
    needs_report()
    path = _many(tmp_path, site.MAX_CHARTED_SYSTEMS + 1)
    code, _, err = run_cli(["report", str(path), "-o", str(tmp_path / "site")], capsys)
    assert code == 0, err
    page = (tmp_path / "site" / "ds-locomo.html").read_text()
    assert f"{site.MAX_CHARTED_SYSTEMS + 1} systems: no significance matrices" in page
    # recall against latency draws the top rows only, the rest in a table under it
    assert page.count("<svg") == 2 and "Rows not drawn" in page
    assert "sys-00050" in (tmp_path / "site" / "runs.html").read_text()


def test_inputs_above_the_row_bound_are_refused_before_any_page(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(report_cli, "MAX_REPORT_ROWS", 5)
    code, _, err = run_cli(["report", str(_many(tmp_path, 3)), "-o", str(tmp_path / "site")], capsys)
    assert code == 2 and "6 score rows, more than the 5" in err and not (tmp_path / "site").exists()


def test_the_site_is_one_unit(tmp_path, capsys, monkeypatch):
    needs_report()
    out = tmp_path / "site"
    assert run_cli(["report", str(LOCOMO), "-o", str(out)], capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (out / "stale.html").write_text("from an older build")
    real = site.build

    def interrupted(inputs, folder):  # a build stopped after its first pages (Ctrl-C)
        real(inputs, folder)
        raise KeyboardInterrupt

    monkeypatch.setattr(site, "build", interrupted)
    code, _, _ = run_cli(["report", str(LOCOMO), "-o", str(out)], capsys)
    assert code != 0
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != "stale.html"} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]          # no staging folder left
    monkeypatch.setattr(site, "build", real)
    assert run_cli(["report", str(LOCOMO), "-o", str(out)], capsys)[0] == 0
    assert not (out / "stale.html").exists()                              # the earlier site replaced whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_folder_of_other_files_is_refused(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("keep")
    code, _, err = run_cli(["report", str(LOCOMO), "-o", str(tmp_path)], capsys)
    assert code == 2 and "a folder of other files" in err
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


@pytest.mark.parametrize("name", ["<!--<script>", "</script><script>alert(1)</script>", "a\u2028b", "x&amp;<b>"])
def test_inline_json_never_closes_the_script_or_opens_a_comment(name):
    text = site.script_json({"system": name})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"system": name}
