"""The light core (``pip install .``: numpy, click and orjson) runs the CLI and the README's own-system example,
and every capability beyond it names its extra in one line.

Each run is a subprocess that sees only a core install: its ``sitecustomize`` (first on PYTHONPATH) drops every
site-packages folder from ``sys.path`` and puts in their place a folder holding links to the core's dependencies
only, so torch, sentence-transformers, scipy, lancedb, ray, openvino, matplotlib and every other package are not
installed there (``importlib.util.find_spec`` finds none of them, as on a machine without them)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ("numpy", "click", "orjson", "memini_bench")
#: The optional libraries `import memini_bench.cli` must not import (the brief's list and their kin).
HEAVY = ("torch", "sentence_transformers", "transformers", "scipy", "lancedb", "ray", "openvino", "matplotlib",
         "jinja2", "nltk", "Stemmer", "bm25s", "chromadb", "qdrant_client", "mem0", "sqlite_vec", "wordllama",
         "huggingface_hub", "tokenizers", "pandas", "sklearn", "playwright")
CORE_ONLY = '''
import os, sys

sys.path[:] = [p for p in sys.path if not p.rstrip(os.sep).endswith("site-packages")]
sys.path.append(os.environ["MEMINI_TEST_CORE_SITE"])
'''


def _core_site(folder: Path) -> Path:
    """A site folder with links to the core dependencies as this venv installed them (package, its .libs and
    its metadata, so ``importlib.metadata`` sees a core install)."""
    folder.mkdir()
    for name in CORE[:-1]:
        spec = importlib.util.find_spec(name)
        site = Path(spec.origin).parent.parent
        for entry in site.iterdir():
            if re.match(rf"{name}([.-]|$)", entry.name, re.I) and not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry)
    return folder


@pytest.fixture
def core_only(tmp_path):
    """Run ``python -m memini_bench ARGS`` (or ``python -c CODE``) with only the core installed."""
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "sitecustomize.py").write_text(CORE_ONLY)
    env = {**os.environ, "PYTHONPATH": f"{custom}{os.pathsep}{ROOT}",
           "MEMINI_TEST_CORE_SITE": str(_core_site(tmp_path / "core-site")),
           "MEMINI_BENCH_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}

    def run(*args: str, cwd: Path = tmp_path, code: str = "") -> subprocess.CompletedProcess:
        argv = [sys.executable, "-c", code] if code else [sys.executable, "-m", "memini_bench", *args]
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)

    return run


def test_only_the_core_is_installed(core_only):
    code = f"import importlib.util as u; print([m for m in {HEAVY!r} if u.find_spec(m)])"
    done = core_only(code=code)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
    assert core_only(code="import numpy, click, orjson, memini_bench.cli").returncode == 0


def test_importing_the_cli_imports_no_optional_library():
    code = f"import sys, memini_bench.cli; print([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "[]"


def test_a_core_run(core_only, tmp_path):
    done = core_only("-suite", "sample", "-embedder", "hash", "-out", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\| memini-hybrid +\|", done.stdout, re.M), done.stdout
    assert list((tmp_path / "runs").glob("*.json"))


def _readme_example() -> tuple[str, list[str]]:
    """The README's own-system plugin (its python block) and the command that runs it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Measure your own memory system"):]
    plugin = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    line = re.search(r"^(\S*memini-bench .*my_memory\.py:make.*)$", section, re.M).group(1)
    words = shlex.split(line.partition("#")[0])
    return plugin, words[1:]


def test_the_readmes_own_system_example(core_only, tmp_path):
    plugin, args = _readme_example()
    (tmp_path / "my_memory.py").write_text(plugin)
    done = core_only(*args, "-out", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\| word-overlap +\|", done.stdout, re.M), done.stdout


@pytest.mark.parametrize("args, extra", [
    (("-embedder", "minilm"), "minilm"),
    ((), "minilm"),  # the default embedder is MiniLM
    (("-embedder", "st:/nowhere"), "minilm"),
    (("-embedder", "hash", "-systems", "reference"), "reference"),
    (("-embedder", "hash", "-systems", "lancedb"), "lancedb"),
    (("-embedder", "wordllama"), "wordllama"),
    (("-embedder", "hash", "-executor", "ray"), "ray"),
    (("-embedder", "hash", "-plot"), "plot"),
])
def test_a_missing_extra_is_one_line_naming_it(core_only, tmp_path, args, extra):
    done = core_only("-suite", "sample", *args, "-out", str(tmp_path / "runs"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("memini-bench: error: ")
    assert f"needs the {extra} extra" in lines[0] and f"pip install 'memini-bench[{extra}]'" in lines[0], lines[0]
    assert not (tmp_path / "runs").exists()


def test_a_sweep_without_matplotlib_writes_its_files_but_the_figure(core_only, tmp_path):
    done = core_only("-suite", "sample", "-embedder", "hash", "-sweep", "pool=30,50", "-out", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    assert "no sweep.png: matplotlib is not installed (pip install 'memini-bench[plot]')" in done.stderr
    (folder,) = (tmp_path / "runs").iterdir()
    assert (folder / "summary.json").is_file() and not (folder / "sweep.png").exists()


def test_report_names_its_extra(core_only, tmp_path):
    done = core_only("report", str(ROOT / "results"), "-o", str(tmp_path / "site"))
    assert done.returncode == 2, done.stderr
    assert "needs the report extra" in done.stderr and "pip install 'memini-bench[report]'" in done.stderr
    assert not (tmp_path / "site").exists()
