"""Plugins: a System factory from any module (``-system module:attr``) and from an installed distribution's entry
points (``memini_bench.systems`` / ``.suites`` / ``.embedders``), beside the built-ins, listed by ``-list``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_run import run_cli

PLUGIN = textwrap.dedent('''
    """A test plugin: word-overlap memory, a one-file suite and a constant embedder."""
    import numpy as np

    from memini_bench.core.contract import Hit
    from memini_bench.core.dataset import Dataset, Item, Question


    class WordOverlap:
        """Ranks a group's items by shared query words (a test plugin)."""

        def __init__(self, ctx):
            self.name = "word-overlap"
            self.dims = ctx.encoder.dims if ctx.encoder is not None else 0

        def ingest(self, items):
            self.items = list(items)

        def recall(self, group, query, k, *, now=None, context=None):
            words = set(query.lower().split())
            scored = [(len(words & set(it.content.lower().split())), it) for it in self.items if it.group == group]
            scored.sort(key=lambda pair: -pair[0])
            return [Hit((it.id,), float(s), it.content) for s, it in scored[:k]]

        def describe(self):
            return {"version": "0.1", "encoder_dims": self.dims}


    def make(ctx):
        """word-overlap: shared query words (a test plugin)."""
        return WordOverlap(ctx)


    def not_a_system(ctx):
        return object()


    def tiny_suite(path, options):
        """A two-item suite that reads nothing."""
        items = (Item("a", "the staging key is in vault", "g"), Item("b", "lunch is at noon", "g"))
        return Dataset("tiny", items, (Question("q1", "where is the staging key", ("a",), "g"),))


    class Constant:
        identity, dims, max_chars = "constant-4", 4, None

        def encode(self, texts):
            return np.ones((len(texts), 4), dtype=np.float32)


    def constant(settings, argument):
        return Constant()
''')


@pytest.fixture()
def plugin_dir(tmp_path, monkeypatch):
    (tmp_path / "tests_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_module_factory_runs_beside_the_builtins(plugin_dir, tmp_path, capsys):
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-system", "tests_plugin:make",
                           "-out", str(tmp_path / "out")], capsys)
    assert code == 0, err
    for name in ("memini-hybrid", "memini-vector", "memini-keyword", "word-overlap"):
        assert f"| {name} |" in out
    files = list((tmp_path / "out").glob("*.json"))
    assert len(files) == 1 and "sys-" in files[0].name           # a lineup other than the default is in the name
    config = json.loads(files[0].read_text())["config"]
    described = {d["name"]: d for d in config["systems"]}
    assert described["word-overlap"] == {"name": "word-overlap", "version": "0.1", "encoder_dims": 256}
    assert described["memini-hybrid"]["fusion"] == 0.5           # the built-ins describe their settings too


def test_systems_takes_module_factories_and_bad_factories_are_one_line(plugin_dir, capsys):
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-systems", "keyword,tests_plugin:make",
                           "-no-write"], capsys)
    assert code == 0, err
    assert "| word-overlap |" in out and "| memini-keyword |" in out and "memini-hybrid" not in out
    for spec, fragment in [("tests_plugin:not_a_system", "lacks the System contract"),
                           ("tests_plugin:missing", "has no attribute"),
                           ("no_such_module_xyz:make", "cannot import no_such_module_xyz"),
                           ("nope", "unknown system; use one of memini-hybrid")]:
        code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-systems", spec, "-no-write"], capsys)
        assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1, err


def _fake_distribution(root: Path) -> None:
    """An installed distribution as importlib.metadata finds one: a dist-info folder on sys.path."""
    info = root / "memini_test_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: memini-test-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[memini_bench.systems]\nword-overlap = tests_plugin:make\n\n"
        "[memini_bench.suites]\ntiny = tests_plugin:tiny_suite\n\n"
        "[memini_bench.embedders]\nconstant = tests_plugin:constant\n")


def _cli(args: list[str], path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(path), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "memini_bench", *args], capture_output=True, text=True, env=env,
                          timeout=600, cwd=Path(__file__).resolve().parents[2])


def test_entry_point_plugin_is_listed_and_runs(tmp_path):
    (tmp_path / "tests_plugin.py").write_text(PLUGIN)
    _fake_distribution(tmp_path)
    listed = _cli(["-list"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert any(line.startswith("  word-overlap [entry point of memini-test-plugin]: word-overlap: shared")
               for line in lines), listed.stdout
    assert any(line.startswith("  tiny [entry point") for line in lines)
    assert any(line.startswith("  constant [entry point") for line in lines)
    run = _cli(["-suite", "tiny", "-data", str(tmp_path / "tests_plugin.py"), "-embedder", "constant",
                "-systems", "hybrid,word-overlap", "-k", "1", "-out", str(tmp_path / "out")], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "| word-overlap | 100.0% |" in run.stdout and "| memini-hybrid |" in run.stdout
    config = json.loads(next((tmp_path / "out").glob("tiny*.json")).read_text())["config"]
    assert config["embed_model"] == "constant-4" and config["suite"] == "tiny"
