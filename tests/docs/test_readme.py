"""The README and the docs pages: every generated block matches results/ and the CLI, every number table is a
generated one, every relative link resolves, the README stays a first page, and its "measure your own memory
system" example runs exactly as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from docgen import table
from docgen.links import anchors, broken, links, slug

ROOT = Path(__file__).resolve().parents[2]
PAGES = table.pages(ROOT / "README.md", ROOT / "docs")
# Pages other branches bring (linked from the README's "More" list before they are merged): only their absence is
# excused; once a page is here its links and anchors are checked like any other.
PENDING: set[str] = set()


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_docs_pages_exist():
    names = {p.name for p in PAGES}
    assert {"usage.md", "flags.md", "extending.md", "metrics.md", "datasets.md", "reproduction.md", "peers.md",
            "studies.md", "vetobench.md", "performance.md", "development.md"} <= names


def test_every_generated_block_is_current():
    stale = [_rel(p) for p, (old, new) in table.rewritten(PAGES, ROOT / "results").items() if old != new]
    assert not stale, f"out of date: {stale}; run `python cmd/results_table.py`"


def test_the_headline_tables_stay_in_the_readme():
    """The README holds the headline table and the reference system's row on the same sets; every other generated
    block lives in docs/."""
    readme = (ROOT / "README.md").read_text()
    assert re.findall(r"^<!-- (\S+):begin -->$", readme, re.M) == ["results", "reference-rows"]


def test_every_number_table_is_generated():
    """A markdown table row with a numeric cell (digits, dots, %, / and signs only, e.g. ``58.7 / 67.1``) must sit
    inside a generated block, in the README and in every docs page: numbers are never typed by hand."""
    typed = []
    for page in PAGES:
        inside = None
        for n, line in enumerate(page.read_text().splitlines(), 1):
            begin, end = re.match(r"<!-- (\S+):begin -->", line), re.match(r"<!-- (\S+):end -->", line)
            if begin:
                inside = begin.group(1)
            elif end:
                inside = None
            elif inside is None and line.startswith("|") and any(
                    re.fullmatch(r"[\d.\s/%+-]*\d[\d.\s/%+-]*", cell) for cell in line.strip("|").split("|")):
                typed.append(f"{_rel(page)}:{n}: {line[:80]}")
    assert not typed, "hand-typed number rows:\n" + "\n".join(typed)


def test_blocks_render_a_note_for_missing_files(tmp_path):
    for name, render in table.blocks().items():
        text = render(tmp_path)
        assert isinstance(text, str) and text.endswith("\n"), name


def test_every_relative_link_resolves():
    bad = []
    for page in PAGES:
        for line in broken(page):
            target = line.split(": ", 2)[1]
            if not (page.name == "README.md" and target in PENDING and not (ROOT / target).exists()):
                bad.append(f"{_rel(page.parent)}/{line}")
    assert not bad, "\n".join(bad)


def test_every_docs_page_is_linked_from_the_readme():
    readme = ROOT / "README.md"
    linked = {(readme.parent / t.partition("#")[0]).resolve() for _, t in links(readme.read_text())}
    assert not [_rel(p) for p in PAGES[1:] if p.resolve() not in linked]


def test_slugs_and_link_checks_on_hand_made_pages(tmp_path):
    assert slug("End-to-end QA with an LLM judge (`-qa`)") == "end-to-end-qa-with-an-llm-judge--qa"
    assert slug("memini's published numbers and ours") == "meminis-published-numbers-and-ours"
    assert slug("Scale (`make scale`)") == "scale-make-scale"
    (tmp_path / "a.md").write_text("# Top\n\n## Twice\n\n## Twice\n\n```\n# not a heading [x](nowhere.md)\n```\n"
                                   "[ok](b.md#real) [gone](c.md) [bad](b.md#fake) [self](#twice-1) `[code](x.md)`"
                                   " [web](https://example.org/x)\n")
    (tmp_path / "b.md").write_text("# Real\n")
    assert anchors((tmp_path / "a.md").read_text()) == {"top", "twice", "twice-1"}
    assert broken(tmp_path / "a.md") == ["a.md:10: c.md: no such file", "a.md:10: b.md#fake: no heading with "
                                                                         "anchor #fake"]


def test_the_readme_is_a_first_page():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move the manual into docs/"


def _example() -> tuple[str, str]:
    """The README's "measure your own memory system" section: its Python block and its command line."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Measure your own memory system", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    cmd = re.search(r"```sh\n(.*?)```", section, re.S)
    assert code and cmd, "the README's example needs a ```python block and a ```sh block"
    return code.group(1), cmd.group(1).strip()


def test_the_readme_example_runs_as_written(tmp_path):
    """Write the README's file, run its command line with this venv's memini-bench from that folder, only ``-out``
    added so nothing lands in the repository. PYTHONPATH names this checkout only (so the package under test is
    this one, whatever the venv's editable install points at); the plugin's folder is on no path."""
    code, line = _example()
    assert len([x for x in code.splitlines() if x.strip()]) <= 15, "keep the example short"
    argv = shlex.split(line)
    assert argv[0] == ".venv/bin/memini-bench", argv[0]
    plugin = next(a for a in argv if a.endswith(":make")).split(":")[0]
    (tmp_path / plugin).write_text(code)
    exe = Path(sys.executable).with_name("memini-bench")
    if not exe.exists():
        pytest.skip(f"{exe} is not installed (make install puts it there)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MEMINI_EMBED_BASE_URL")}
    env.update(PYTHONPATH=str(ROOT), MEMINI_BENCH_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    out = subprocess.run([str(exe), *argv[1:], "-out", str(tmp_path / "runs")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "| word-overlap |" in out.stdout and "| memini-hybrid |" in out.stdout
    files = list((tmp_path / "runs").glob("*.json"))
    assert len(files) == 1, files
    assert "word-overlap" in json.dumps(json.loads(files[0].read_text())["results"])


def _pages(tmp_path: Path, readme: str, page: str = "") -> list[str]:
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "README.md").write_text(readme)
    if page:
        (tmp_path / "docs" / "x.md").write_text(page)
    return ["-readme", str(tmp_path / "README.md"), "-docs", str(tmp_path / "docs"), "-results", str(ROOT / "results")]


def _every_block() -> str:
    return "".join(f"<!-- {n}:begin -->\n<!-- {n}:end -->\n" for n in table.renderers())


def test_the_generator_rewrites_blocks_in_any_page_and_check_reports_them(tmp_path, capsys):
    args = _pages(tmp_path, "# r\n\n<!-- results:begin -->\nold\n<!-- results:end -->\n",
                  "# x\n\nquoted `<!-- NAME:begin -->` stays\n\n" + _every_block().replace(
                      "<!-- results:begin -->\n<!-- results:end -->\n", ""))
    with pytest.raises(SystemExit) as exc:
        table.main([*args, "-check"])
    assert exc.value.code == 1 and "README.md" in capsys.readouterr().err
    assert "old" in (tmp_path / "README.md").read_text()                  # -check writes nothing
    table.main(args)
    readme, page = (tmp_path / "README.md").read_text(), (tmp_path / "docs" / "x.md").read_text()
    assert "| locomo | 1982 | memini-hybrid |" in readme and "old" not in readme
    assert "| `-suite`, `--suite` | text | `sample` |" in page and "quoted `<!-- NAME:begin -->` stays" in page
    table.main([*args, "-check"])                                          # now current: exit 0


@pytest.mark.parametrize(("page", "says"), [
    ("<!-- nosuch:begin -->\n<!-- nosuch:end -->\n", "unknown generated block 'nosuch'"),
    ("<!-- flags:begin -->\n", "has no <!-- flags:end -->"),
    ("", "no page holds the generated block(s)"),
])
def test_bad_pages_are_one_line_and_exit_2(tmp_path, capsys, page, says):
    args = _pages(tmp_path, _every_block().replace("<!-- flags:begin -->\n<!-- flags:end -->\n", ""), page)
    before = (tmp_path / "README.md").read_text()
    with pytest.raises(SystemExit) as exc:
        table.main(args)
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and says in err and len(err.splitlines()) == 1, err
    assert (tmp_path / "README.md").read_text() == before
