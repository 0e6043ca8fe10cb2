"""Every example command of the README and the docs pages (cmd/docexamples) leaves ``git status`` clean in a
fresh clone: each parses with the CLI's own options, everything it writes is git-ignored or outside the clone
(the maintainer targets write only the committed results/, docs/ and README.md, by design), and the ones that run
here offline do run, in a fresh clone with ../shared beside it as CI has it, and leave ``git status --porcelain``
empty. The slow ones (MiniLM over a full set) run under ``-m slow`` (make test-all)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import docexamples as examples

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
EXAMPLES = examples.extract(ROOT)
CLASSES = {ex: examples.classify(ex) for ex in EXAMPLES}
CHECKED = [ex for ex in EXAMPLES if CLASSES[ex] not in ("placeholder", "mention")]
#: Committed paths a maintainer target regenerates (results/ by make results and kin, the generated blocks, the
#: README's leaderboard picture); every other destination of every example must be ignored or outside the clone.
MAINTAINED = ("results/", "docs/", "README.md")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A fresh clone of this checkout, its uncommitted changes committed in the clone (so it is this working tree),
    with ../shared beside it when the checkout has one."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs git and a git checkout of the project")
    base = tmp_path_factory.mktemp("examples")
    repo = base / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    changed = _git(ROOT, "status", "--porcelain", "-z", "--untracked-files=all").split("\0")
    for entry in filter(None, changed):
        path = entry[3:]
        if (ROOT / path).is_file():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / path, repo / path)
        elif (repo / path).exists() and not (ROOT / path).exists():
            (repo / path).unlink()
    if _git(repo, "status", "--porcelain"):
        _git(repo, "add", "-A")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "working tree")
    if SHARED.is_dir():
        (base / "shared").symlink_to(SHARED)
    assert _git(repo, "status", "--porcelain") == ""
    return repo


def test_every_example_is_classified_with_a_reason():
    assert len(EXAMPLES) > 100, len(EXAMPLES)
    assert {CLASSES[ex] for ex in EXAMPLES} <= set(examples.CLASSES)
    assert {name for name, _ in examples.RULES} == set(examples.CLASSES)
    assert all(reason.strip() for reason in examples.CLASSES.values())
    readme = [ex for ex in EXAMPLES if ex.page == "README.md" and not ex.inline and "-system" in ex.argv]
    assert [CLASSES[ex] for ex in readme] == ["run"], readme


@pytest.mark.parametrize("ex", CHECKED, ids=[f"{ex.where}:{ex.text[:60]}" for ex in CHECKED])
def test_every_example_parses_and_writes_only_ignored_paths(ex, clone):
    """Parsed with the command's own options (a bad flag, or one its mode would refuse, is a docs bug); each
    destination is git-ignored in a fresh clone or outside it; a maintainer target may also write the committed
    results/, docs/ and README.md."""
    try:
        where = examples.destinations(ex, clone)
    except examples.ExampleError as exc:
        pytest.fail(f"{ex.where}: `{ex.text}` does not parse: {exc}")
    dirty = []
    for what, path in where:
        full = Path(os.path.abspath(clone / path))
        if not full.is_relative_to(clone):
            continue
        rel = str(full.relative_to(clone)) + ("/" if path.endswith("/") else "")
        probe = rel + "memini-probe" if rel.endswith("/") else rel
        ignored = subprocess.run(["git", "-C", str(clone), "check-ignore", "-q", "--no-index", probe]).returncode == 0
        # make gpu (class gpu) is a maintainer target too: it writes results/bench/gpu.json
        if not ignored and not (CLASSES[ex] in ("maintainer", "gpu") and rel.startswith(MAINTAINED)):
            dirty.append(f"{what} {path}")
    assert not dirty, f"{ex.where}: `{ex.text}` writes into the tree: {dirty}"


def test_the_checker_catches_a_bad_flag_and_a_tracked_destination():
    ex = examples.Example("x.md", 1, ("memini-bench", "-suite", "sample", "-nosuch", "1"))
    with pytest.raises(examples.ExampleError, match="No such option"):
        examples.destinations(ex)
    ex = examples.Example("x.md", 1, ("memini-bench", "-suite", "sample", "-rerank-cats", "1"))
    with pytest.raises(examples.ExampleError, match="not used by"):
        examples.destinations(ex)
    ex = examples.Example("x.md", 1, ("memini-bench", "-suite", "sample", "-per-question", "q.jsonl"))
    assert ("-per-question", "q.jsonl") in examples.destinations(ex)


def test_extraction_joins_lines_drops_comments_and_splits_commands(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "Run `memini-bench -list` or `pip install x`.\n\n```sh\n$ memini-bench -suite sample \\\n    -k 5  # five\n"
        "source .venv/bin/activate && make run ARGS=\"-suite sample\"\necho hi\n```\n\n```python\nx = 1\n```\n")
    got = [(ex.line, ex.argv, ex.inline) for ex in examples.extract(tmp_path)]
    assert got == [(1, ("memini-bench", "-list"), True), (4, ("memini-bench", "-suite", "sample", "-k", "5"), False),
                   (6, ("make", "run", "ARGS=-suite sample"), False)]


def _runnable(cls: str) -> list[examples.Example]:
    """One example per distinct command line of class ``cls`` (the same command written on several pages runs
    once)."""
    seen: dict[str, examples.Example] = {}
    for ex in EXAMPLES:
        if CLASSES[ex] == cls:
            key = repr(examples.command_lines(ex, "python"))
            seen.setdefault(key, ex)
    return list(seen.values())


RUN = [pytest.param(ex, id=f"{ex.where}:{ex.text[:60]}") for ex in _runnable("run")]
SLOW = [pytest.param(ex, id=f"{ex.where}:{ex.text[:60]}", marks=pytest.mark.slow) for ex in _runnable("slow")]


@pytest.mark.parametrize("ex", RUN + SLOW)
def test_the_example_runs_and_leaves_git_status_clean(ex, clone):
    """Run from the clone's root with this venv's interpreter, PYTHONPATH naming the clone only (so the package is
    the clone's, not the venv's editable install), offline; an absolute /tmp destination goes to a temporary
    folder instead (outside the clone either way)."""
    if re.search(r"\.\./shared\b", ex.text) and not (clone.parent / "shared").is_dir():
        pytest.skip(f"needs {SHARED} (the ../shared folder beside the project)")
    outside = clone.parent / "outside"
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith(("MEMINI_EMBED_", "MEMINI_LLM_", "MEMINI_RERANK_"))}
    env.update(PYTHONPATH=str(clone), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               MEMINI_BENCH_CACHE=str(clone.parent / "cache"), MEMINI_BENCH_DATA=str(clone.parent / "data-cache"))
    for name, code in examples.plugin_files(ex, clone).items():
        (clone / name).write_text(code)
    # A line may read what a line above it on its page wrote (docs/report.md: a run, then its report)
    needs = [a for a in ex.argv if a.startswith("runs/") and not (clone / a).exists()]
    earlier = [e for e in EXAMPLES if e.page == ex.page and e.line < ex.line and CLASSES[e] == "run"] if needs else []
    try:
        for argv in [a for e in earlier for a in examples.command_lines(e, sys.executable, clone)] + \
                examples.command_lines(ex, sys.executable, clone):
            # the example's own /tmp paths; never the interpreter's or the clone's (both may live under /tmp)
            argv = [argv[0], *(a if a.startswith(str(clone.parent)) else re.sub(r"^/tmp/", f"{outside}/", a)
                               for a in argv[1:])]
            out = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, timeout=900)
            _skip_for_a_missing_extra(ex, out)
            assert out.returncode == 0, f"{ex.where}: `{ex.text}` exit {out.returncode}:\n{out.stderr[-3000:]}"
        status = _git(clone, "status", "--porcelain", "--untracked-files=all")
        assert status == "", f"{ex.where}: `{ex.text}` leaves git status dirty:\n{status}"
    finally:
        _git(clone, "checkout", "-q", "--", ".")
        _git(clone, "clean", "-q", "-fd")


def _skip_for_a_missing_extra(ex, out: subprocess.CompletedProcess) -> None:
    """Skip, saying which, an example that ends with the one line of an extra this install lacks (a core + dev
    install has no MiniLM, report or plot extra); the line itself is held by tests/core/test_extras_messages.py."""
    from memini_bench.core.registry import extra_installed

    missing = re.search(r"needs the ([\w-]+) extra \((\S+) is not installed\)", out.stderr)
    if out.returncode == 2 and missing and extra_installed(missing.group(1)) is not True:
        pytest.skip(f"{ex.where}: needs the {missing.group(1)} extra ({missing.group(2)} is not installed here): "
                    f"pip install 'memini-bench[{missing.group(1)}]'")
