"""docs/api.md: every Python example on the page runs as written (in order, in a folder holding the README's
``my_memory.py``), and ``evaluate`` on the sample with the README's plugin returns a Report whose tables are the
ones ``memini-bench run`` prints for the same run."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from cli_run import run_cli

from tests.conftest import needs_extra

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "api.md"
#: The measured columns of a run's table (wall-clock times): they differ between any two runs.
TIMED = {"latency_p50", "latency_p95", "load (ms)", "embed (ms)", "ingest (ms)"}


def readme_plugin() -> str:
    """The README's own-system example: its Python block that defines ``make(ctx)``."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    found = [b for b in blocks if "def make(ctx)" in b]
    assert found, "the README's own-system example (a ```python block with def make(ctx)) is gone"
    return found[0]


@pytest.fixture
def plugin_folder(tmp_path, monkeypatch):
    (tmp_path / "my_memory.py").write_text(readme_plugin())
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MEMINI_BENCH_CACHE", str(tmp_path / "cache"))
    yield tmp_path
    sys.modules.pop("my_memory", None)


def page_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


def test_the_page_documents_every_public_name():
    import memini_bench.api as api
    from memini_bench.api.report import Report

    text = PAGE.read_text()
    public = [n for n in api.__all__] + [n for n in vars(Report) if not n.startswith("_")]
    public += [f.name for f in Report.__dataclass_fields__.values()]
    missing = sorted({n for n in public if f"`{n}" not in text})
    assert not missing, f"docs/api.md does not document {missing}"


def test_every_example_on_the_page_runs(plugin_folder, capsys):
    needs_extra("api", "pandas")                   # the page's DataFrame example
    examples = page_examples()
    assert len(examples) >= 3
    for i, code in enumerate(examples):
        namespace: dict[str, object] = {"__name__": f"api_md_example_{i}"}
        exec(compile(code, f"docs/api.md example {i + 1}", "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out
    assert "| word-overlap |" in out and r"\begin{tabular}" in out


def _untimed(markdown: str) -> str:
    """``markdown`` with the cells of the measured (wall-clock) columns blanked."""
    out, timed = [], set()
    for line in markdown.splitlines():
        cells = line.split("|")
        if line.startswith("| System |"):
            timed = {i for i, c in enumerate(cells) if c.strip() in TIMED}
        elif not line.startswith("|"):
            timed = timed if line.strip() == "" else set()
        if line.startswith("| ") and timed:
            cells = ["-" if i in timed else c for i, c in enumerate(cells)]
        out.append("|".join(cells))
    return "\n".join(out)


def test_evaluate_with_the_readme_plugin_prints_the_clis_table(plugin_folder, capsys):
    """The Done-when check: ``from memini_bench import evaluate`` on the sample with the README's plugin returns a
    Report whose to_markdown() is the CLI's output for the same run (the timings apart: they are measured)."""
    from my_memory import make

    from memini_bench import evaluate

    report = evaluate(["memini-hybrid", "memini-vector", "memini-keyword", make], suite="sample", embedder="hash",
                      k=(5, 10), significance=True, resamples=300)
    code, cli_out, err = run_cli(["run", "-suite", "sample", "-embedder", "hash", "-k", "5,10", "-significance",
                                  "-resamples", "300", "-system", "./my_memory.py:make", "-out",
                                  str(plugin_folder / "runs")], capsys)
    assert code == 0, err
    assert "| word-overlap |" in report.to_markdown() and "paired on the same questions" in report.to_markdown()
    assert _untimed(report.to_markdown()) == _untimed(cli_out)
    assert _untimed(report.to_markdown()) != _untimed(cli_out.replace("word-overlap", "word-overlay"))
    written = plugin_folder / "runs" / report.file_name
    assert written.is_file()                                       # the CLI wrote the file the Report names
    import json

    cli_doc = json.loads(written.read_text())
    assert cli_doc["config"]["identity"] == report.to_dict()["config"]["identity"]
    assert cli_doc["significance"] == list(report.significance)


def test_save_writes_the_clis_results_file_and_refuses_another_run(plugin_folder):
    from memini_bench import Report, evaluate
    from memini_bench.errors import BenchError

    report = evaluate("./my_memory.py:make", suite="sample", embedder="hash")
    assert isinstance(report, Report) and report.systems == ["word-overlap"]
    path = report.save(plugin_folder)
    assert path.name == "memini-sample-sys-word-overlap.json"
    other = evaluate("./my_memory.py:make", suite="sample", embedder="hash", limit=4)
    with pytest.raises(BenchError, match="another|other settings"):
        other.save(path)
    assert report.save(path) == path                               # the same run: rewritten in place


def test_to_dataframe_without_pandas_is_one_clear_error(plugin_folder, monkeypatch):
    from memini_bench import evaluate
    from memini_bench.errors import BenchError

    report = evaluate("memini-keyword", suite="sample")
    monkeypatch.setitem(sys.modules, "pandas", None)               # import pandas -> ImportError
    with pytest.raises(BenchError, match="needs pandas"):
        report.to_dataframe()


def test_import_memini_bench_stays_light():
    import subprocess

    code = "import sys, memini_bench; print('memini_bench.api' in sys.modules, 'memini_bench.modes' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_evaluate_writes_nothing_and_says_so_for_the_writing_flags(plugin_folder):
    from memini_bench import evaluate
    from memini_bench.errors import BenchError

    with pytest.raises(BenchError, match="per_question writes files"):
        evaluate("memini-keyword", per_question="pq.jsonl")
    report = evaluate("memini-keyword", k=5, name="mine")
    assert report.file_name == "memini-sample-mine.json" and not list(plugin_folder.glob("**/*.json"))
