"""What a results file records about where its numbers came from: data hash, harness version, git commit."""

from __future__ import annotations

import hashlib
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from memini_bench import __version__

ROOT = Path(__file__).resolve().parents[1]
CODE_PATHS = ("memini_bench", "quality", "cmd", "data", "pyproject.toml", "setup.py")  # what can change a number
T = TypeVar("T")


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def input_sha256(path: str | Path) -> str | None:
    """``file_sha256`` of an input named by a flag, or None when it is no regular file (a FIFO, read once by its
    reader, is never read here) or cannot be read (its reader then says what is wrong, in one line)."""
    try:
        return file_sha256(path) if Path(path).is_file() else None
    except OSError:
        return None


@lru_cache(maxsize=1)
def git_commit() -> str:
    """``git rev-parse --short HEAD`` of the harness checkout, with ``-dirty`` when its code (not results/ or docs)
    has local changes; "" outside a checkout."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--",
                                *CODE_PATHS],
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{head}-dirty" if dirty else head


_COMMAND: list[str] = []


def set_command(argv: list[str]) -> None:
    """The command line the CLI runs (``memini-bench`` and its arguments, given or from ``sys.argv``)."""
    _COMMAND[:] = argv


def command_line() -> str:
    """The command line that made this run's files, shell-quoted: the CLI's (``set_command``), else this
    process's script and arguments (for the report's provenance)."""
    import shlex
    import sys

    argv = _COMMAND or ([Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv else [])
    return " ".join(shlex.quote(a) for a in argv)


def harness() -> dict[str, str]:
    """What every results file records about what made it: the harness version, the git commit and the command."""
    return {"harness_version": __version__, "git_commit": git_commit(), "command": command_line()}


def bench_start() -> dict:
    """What a benchmark records as it starts: the machine's CPUs and load average, and the harness (its commit is
    the code that runs, even if the checkout moves on while a long benchmark runs)."""
    import os

    return {"cpus": os.cpu_count(), "load_average": list(os.getloadavg()), **harness()}


def bench_config(mode: str, settings: dict, start: dict, seconds: float) -> dict:
    """The ``config`` of a benchmark file in ``results/bench/`` (``make speed``, ``make scale``, ``make gpu``,
    ``cmd/ray_estimate.py``): the mode, its settings, ``bench_start``'s record and the duration."""
    return {"mode": mode, **settings, **start, "seconds": seconds}


def check_bench_out(path: str) -> None:
    """Refuse a benchmark's ``--out`` that cannot be written before any work (a BenchError, which
    ``core.console.run_command`` makes one line), so a long ``make speed`` or ``make scale`` never ends in a
    traceback with nothing saved."""
    from memini_bench.results.atomic_io import check_destinations

    check_destinations(results=[("--out", path)])


def _set_flag(words: list[str], flag: str, value: str | None, boolean: bool = False) -> list[str]:
    """``words`` (a command line) with ``-flag``'s value set to ``value`` (the flag appended when absent; ``None``:
    the flag and its value removed; a ``boolean`` flag takes no value: ``""`` sets it). ``-flag value``,
    ``-flag=value`` and the ``--flag`` spellings are matched."""
    out: list[str] = []
    found, i = False, 0
    while i < len(words):
        word = words[i]
        name, eq, _ = word.lstrip("-").partition("=")
        if word.startswith("-") and name == flag:
            i += 1 if eq or boolean else 2
            if value is not None and not found:
                out += [f"-{flag}", value] if value != "" else [f"-{flag}"]
            found = True
            continue
        out.append(word)
        i += 1
    if value is not None and not found:
        out += [f"-{flag}", value] if value != "" else [f"-{flag}"]
    return out


def cell_command(sweep_command: str, cell: str, split: str, system: str) -> str:
    """The plain run that reproduces one sweep cell: the sweep's command line (the ``sweep`` verb as ``run``)
    without ``-sweep`` (or ``-grid``), ``-select`` and ``-out`` (the rerun writes to the default ``runs/``),
    each ``flag=value`` of the cell's label (``ref-alpha=0.3 ref-fusion=rrf``; ``baseline``: none) set as
    ``-flag value`` (a boolean ``flag=True`` as ``-flag``, ``flag=False`` removed), ``-holdout`` set to the cell's
    ``split``, and ``-systems SYSTEM`` when the sweep named no system (the cell's scores are SYSTEM's row of that
    run)."""
    import shlex

    words = shlex.split(sweep_command)
    if words[1:2] == ["sweep"]:
        words[1] = "run"
    # -out: the rerun writes to the default runs/, beside no committed file
    for flag in ("sweep", "grid", "select", "out"):
        words = _set_flag(words, flag, None)
    for part in cell.split() if cell != "baseline" else []:
        flag, _, value = part.partition("=")
        boolean = value in ("True", "False")
        words = _set_flag(words, flag, None if value == "False" else "" if boolean else value, boolean)
    if split in ("tune", "held"):
        words = _set_flag(words, "holdout", split)
    if not any(w.lstrip("-").partition("=")[0] == "systems" for w in words if w.startswith("-")):
        words = _set_flag(words, "systems", system)
    return shlex.join(words)
