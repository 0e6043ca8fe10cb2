"""The results manifest (``cmd/results_manifest.txt``): every committed results file and the one command that
writes it. ``make results`` runs it (``python cmd/make_results.py``), the reproduction page shows it (the
``results-manifest`` block) and the examples test checks each command's destinations.

A line is ``PATH[,PATH...]  COMMAND`` (the first path is the file or folder the command writes, the rest the
companions it also writes); ``NAME = VALUE`` lines define the variables ``$(NAME)`` of the commands; ``#`` starts
a comment line.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.table import render, table_of

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "cmd" / "results_manifest.txt"
#: What make results leaves in results/: the measurements of make speed, make scale and make ray-estimate
#: (results/bench/), the reference system's search and held runs (results/reference/), BEAM's runs.
KEPT = ("bench", "reference", "beam-*")


@dataclass(frozen=True)
class Entry:
    paths: tuple[str, ...]
    command: str  # variables not expanded


def read(path: Path = MANIFEST) -> tuple[dict[str, str], list[Entry]]:
    """The manifest's variables and its entries, in order."""
    variables: dict[str, str] = {}
    entries: list[Entry] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Z_]+) = (.*)", line)
        if m:
            variables[m.group(1)] = m.group(2).strip()
            continue
        paths, sep, command = line.partition("  ")
        if not sep or not paths.startswith("results/"):
            raise ValueError(f"{path.name}:{n}: not `PATH  COMMAND` nor `NAME = VALUE`: {line!r}")
        entries.append(Entry(tuple(paths.split(",")), command.strip()))
    return variables, entries


def expand(text: str, variables: Mapping[str, str]) -> str:
    """``$(NAME)`` -> its value, repeatedly (a value may name another variable)."""
    for _ in range(10):
        text = re.sub(r"\$\((\w+)\)", lambda m: variables[m.group(1)], text)
    return text


def commands(overrides: Mapping[str, str] = {}, path: Path = MANIFEST) -> list[tuple[Entry, list[str]]]:
    """Each entry with its command's words, variables expanded (``overrides`` first)."""
    variables, entries = read(path)
    variables = {**variables, **overrides}
    return [(e, shlex.split(expand(e.command, variables))) for e in entries]


def argv(words: list[str], python: str) -> list[str]:
    """A manifest command as the process to run: ``memini-bench`` and ``python`` become ``python`` (this
    interpreter, so a venv's package runs)."""
    if words[0] == "memini-bench":
        return [python, "-m", "memini_bench", *words[1:]]
    if words[0] == "python":
        return [python, *words[1:]]
    raise ValueError(f"results manifest: {words[0]!r}: a command starts with memini-bench or python")


def markdown(path: Path = MANIFEST) -> str:
    """The reproduction page's block: every file and its command, the variables at their defaults."""
    variables, entries = read(path)
    rows = []
    for e in entries:
        cmd = shlex.join(shlex.split(expand(e.command, variables))).replace("|", "\\|")
        rows.append(["<br>".join(f"`{p}`" for p in e.paths), f"`{cmd}`"])
    return render(table_of("results file:l|command:l", rows), "md").rstrip("\n")


def _remove(paths: Iterable[Path]) -> None:
    """Each of ``paths`` removed, a folder with what it holds; a missing one is no error."""
    import shutil

    for p in paths:
        shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)


def _empty_results(root: Path) -> None:
    import fnmatch

    _remove(p for p in (root / "results").iterdir() if not any(fnmatch.fnmatch(p.name, k) for k in KEPT))


#: What a committed sweep folder keeps: the summary (every cell's scores, paired tests and rerun command) and plot.
SWEEP_KEPT = ("summary.json", "summary.json.gz", "sweep.png")
#: A summary larger than this (a grid of hundreds of cells) is committed gzip-compressed, as ``summary.json.gz``.
GZIP_OVER_BYTES = 1_000_000


def prune_sweep(folder: Path) -> list[Path]:
    """A sweep folder as committed: its cell files (``<cell>.json``, ``baseline.json``, ``held-*.json``) removed,
    its ``SWEEP_KEPT`` kept, and a ``summary.json`` over ``GZIP_OVER_BYTES`` replaced by the same bytes
    gzip-compressed (``summary.json.gz``, level 9, no name or time in the header: the same summary always gives
    the same bytes; ``results.read.load`` reads either). The paths removed; only a folder whose summary is a sweep
    summary is touched."""
    import gzip

    from memini_bench.results.read import load, sweep_summary
    from memini_bench.results.schema import SweepSummary

    summary = sweep_summary(folder)
    if summary is None or not isinstance(load(summary), SweepSummary):
        return []
    gone = sorted(p for p in folder.iterdir() if p.is_file() and p.name not in SWEEP_KEPT and p.suffix == ".json")
    _remove(gone)
    if summary.name == "summary.json" and summary.stat().st_size > GZIP_OVER_BYTES:
        packed = folder / "summary.json.gz"
        part = folder / "summary.json.gz.part"
        part.write_bytes(gzip.compress(summary.read_bytes(), compresslevel=9, mtime=0))
        os.replace(part, packed)
        summary.unlink()
        gone.append(summary)
    return gone


def systems_of(words: list[str]) -> set[str]:
    """The systems a manifest command runs: its ``-systems`` list (empty when the command names none)."""
    for flag, value in itertools.pairwise(words):
        if flag in ("-systems", "--systems"):
            return set(value.split(","))
    return set()


def main(argv_: list[str] | None = None) -> int:
    """``python cmd/make_results.py [NAME=VALUE...] [--list] [--system NAME] [--only PATH,...]``: empty results/
    (but KEPT), run every command in order, then regenerate the README's and docs' tables; ``--list`` prints the
    commands and runs nothing; ``--system NAME`` runs only the commands whose ``-systems`` names NAME (a system
    whose defaults changed), ``--only PATH,...`` only the commands that write those files (any of a line's paths),
    and neither empties anything else.

    ``--system``'s and ``--only``'s commands rewrite their own files whole (each removed just before its command
    runs, so the run does not write beside it under a hashed name); every other committed file is left as it is.
    A sweep's cell files are removed once its summary is written (``prune_sweep``): the summary holds every
    cell's scores and the command that reruns each cell."""
    args = sys.argv[1:] if argv_ is None else argv_
    if any(a in ("-h", "--help", "-help") for a in args):
        print(main.__doc__.split("\n\n")[0].replace("    ", " "))  # type: ignore[union-attr]
        return 0
    variables, _ = read()
    picked: dict[str, str] = {}
    for flag, example in (("--system", "--system reference"), ("--only", "--only results/locomo.json")):
        if flag in args:
            at = args.index(flag)
            if at + 1 >= len(args) or args[at + 1].startswith("-") or "=" in args[at + 1]:
                print(f"make_results: error: {flag}: give a value (e.g. {example})", file=sys.stderr)
                return 2
            picked[flag], args = args[at + 1], args[:at] + args[at + 2:]
    system, only = picked.get("--system"), picked.get("--only")
    wrong = [a for a in args if a != "--list" and not ("=" in a and a.split("=", 1)[0] in variables)]
    if wrong:
        print(f"make_results: error: {wrong[0]}: not --list, --system NAME nor NAME=VALUE with NAME one of "
              f"{', '.join(variables)}", file=sys.stderr)
        return 2
    overrides = dict(a.split("=", 1) for a in args if "=" in a)
    todo = commands(overrides)
    if system is not None:
        todo = [(e, words) for e, words in todo if system in systems_of(words)]
        if not todo:
            print(f"make_results: error: --system {system}: no command in cmd/results_manifest.txt runs it "
                  "(its -systems lists)", file=sys.stderr)
            return 2
    if only is not None:
        wanted = [p.strip() for p in only.split(",") if p.strip()]
        unknown = [p for p in wanted if not any(p in e.paths for e, _ in todo)]
        if unknown or not wanted:
            print(f"make_results: error: --only {unknown[0] if unknown else only!r}: no line of "
                  "cmd/results_manifest.txt writes it (give the paths --list prints)", file=sys.stderr)
            return 2
        todo = [(e, words) for e, words in todo if set(wanted) & set(e.paths)]
    partial = system is not None or only is not None
    if "--list" in args:
        for e, words in todo:
            print(f"{','.join(e.paths)}  {shlex.join(words)}")
        return 0
    if os.environ.get("MEMINI_LLM_BASE_URL"):
        print("make results: unset MEMINI_LLM_BASE_URL (mem0 would become mem0-infer)", file=sys.stderr)
        return 2
    (ROOT / "results").mkdir(exist_ok=True)
    if not partial:
        _empty_results(ROOT)
    for e, words in todo:
        print(f"make results: {e.paths[0]}", file=sys.stderr, flush=True)
        if partial:  # as make results' emptying: the files this command writes, not a hashed twin
            _remove(ROOT / p for p in e.paths)
        done = subprocess.run(argv(words, sys.executable), cwd=ROOT)
        if done.returncode != 0:
            print(f"make results: {e.paths[0]}: exit {done.returncode}", file=sys.stderr)
            return 1
        missing = [p for p in e.paths if not (ROOT / p).exists()]
        if missing:
            print(f"make results: {e.paths[0]}: the command did not write {', '.join(missing)} "
                  f"(cmd/results_manifest.txt names it)", file=sys.stderr)
            return 1
        if (ROOT / e.paths[0]).is_dir():
            prune_sweep(ROOT / e.paths[0])
    return subprocess.run([sys.executable, str(ROOT / "cmd" / "results_table.py")], cwd=ROOT).returncode
