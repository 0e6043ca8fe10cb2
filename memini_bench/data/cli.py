"""``memini-bench data list | fetch NAME... | verify [NAME...]``: the registered data sets, and your copies of them.

- ``list``: every registered set, one line each: its suite, number of files, size, whether it is fetched and its
  license (with ``-v`` each set in full: description, citation, each file's checksum and URLs, checksum source).
- ``fetch NAME...``: download each missing file of the named sets (``data.download``: resumed, verified, placed
  atomically, bounded in size and time, from the catalog's URLs or a ``-mirror``) into ``$MEMINI_BENCH_DATA/<name>``;
  a file already in place is checked and kept when it matches. Then ``-data NAME`` reads the set.
- ``verify [NAME...]``: re-hash every file of the named sets (default: every set with a file on this machine) and
  report each one that is missing or differs; exit code 2 when any does.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import click

from memini_bench.core.settings import HELP_SETTINGS
from memini_bench.data import registry
from memini_bench.data.download import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_BYTES,
    MIRROR_ENV,
    check_mirror,
    fetch_file,
    mismatch,
)
from memini_bench.errors import BenchError


def _mb(size: int | None) -> str:
    return "size unknown" if size is None else f"{size / 1e6:,.1f} MB"


@click.group(context_settings=HELP_SETTINGS)
def command() -> None:
    """The data sets memini-bench knows: list, fetch and verify them (see docs/datasets.md)."""


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n:,} files"


@command.command("list")
@click.option("-v", "--verbose", is_flag=True, help="Each set in full: its description, license, citation, every "
              "file with its checksum and URLs, and where the checksums come from.")
def list_command(verbose: bool) -> None:
    """Every registered set, one line each: suite, files, size, state and license (-v: each in full)."""
    click.echo(f"data folder: {registry.data_root()} (${registry.ENV})")
    sets = list(registry.catalog().values())
    if not verbose:
        rows = [(ds.name, ds.suite, _files(len(ds.files)), _mb(ds.size),
                 "fetched" if registry.is_fetched(ds) else "not fetched", re.split(r" \(|:", ds.license)[0])
                for ds in sets]
        head = ("set", "suite", "files", "size", "state", "license")
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        for row in [head, *rows]:
            click.echo("  ".join(c.rjust(w) if i == 3 else c.ljust(w)
                                 for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip())
        click.echo("memini-bench data list -v: each set's description, files, checksums, URLs and "
                   "citation; memini-bench data fetch NAME fetches one", err=True)
        return
    for ds in sets:
        state = "fetched" if registry.is_fetched(ds) else "not fetched"
        click.echo(f"\n{ds.name}  (-suite {ds.suite}, {_files(len(ds.files))}, {_mb(ds.size)}, {state})")
        click.echo(f"  {ds.description}")
        click.echo(f"  license: {ds.license}")
        click.echo(f"  citation: {ds.citation}")
        click.echo(f"  checksums from: {ds.checksum_source}")
        for f in ds.files:
            size = "" if f.size is None else f"  {f.size:,} bytes"
            click.echo(f"  {f.path}  {f.checksum}{size}")
            for url in f.urls:
                click.echo(f"    {url}")


@command.command("fetch")
@click.argument("names", nargs=-1, required=True)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds a connection or a read may stall before the transfer is cut (and resumed).")
@click.option("--attempts", type=click.IntRange(min=1, max=100), default=4, show_default=True,
              help="Rounds over a file's mirrors before giving up (a cut transfer resumes in the next).")
@click.option("-deadline", "--deadline", type=click.FloatRange(min=0.1), default=DEFAULT_DEADLINE_S,
              show_default=True, help="Seconds one file may take in all (every attempt and mirror); past it the "
              "transfer is cut and its .part kept for the same command to resume.")
@click.option("-max-bytes", "--max-bytes", "max_bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES,
              show_default=True, help="Size bound of a file the catalog registers without a size (a registered "
              "size is its own bound); a server sending more is refused and nothing is kept.")
@click.option("-mirror", "--mirror", default="", help=f"Fetch from a copy of the data hosts instead: every "
              f"catalog URL becomes MIRROR/<host>/<path> (what wget -x makes), still checked by size and "
              f"checksum (default: ${MIRROR_ENV}).")
def fetch_command(names: tuple[str, ...], timeout: float, attempts: int, deadline: float, max_bytes: int,
                  mirror: str) -> None:
    """Download, verify and place the named sets."""
    mirror = check_mirror(mirror) if mirror else check_mirror(os.environ.get(MIRROR_ENV, "").strip(),
                                                              f"${MIRROR_ENV}")
    sets = [registry.get(n) for n in names]
    _check_root()
    for ds in sets:
        folder = ds.folder()
        fetched = kept = 0
        for i, f in enumerate(ds.files, 1):
            dest = folder / f.path
            label = f"{ds.name} [{i}/{len(ds.files)}] {f.path}"
            try:
                if dest.is_file() and not dest.is_symlink():
                    if not mismatch(f, dest):
                        kept += 1
                        continue
                    dest.unlink()  # a copy that is not the registered file: fetch it again
            except OSError as exc:
                raise BenchError(f"{label}: {dest}: cannot check the copy in place ({exc.strerror or exc}); "
                                 "check the data folder's permissions") from None
            fetch_file(f, dest, timeout=timeout, attempts=attempts, label=label, deadline=deadline,
                       max_bytes=max_bytes, mirror=mirror)
            fetched += 1
        click.echo(f"{ds.name}: {fetched} files fetched, {kept} already in place, all verified, in {folder}; "
                   f"use -suite {ds.suite} -data {ds.name}", err=True)


def _check_root() -> None:
    """The data folder must be a folder (or not exist yet, its nearest existing parent being one)."""
    root = registry.data_root()
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise BenchError(f"${registry.ENV} {root}: {probe} is a file, not a folder; point ${registry.ENV} at a "
                         "folder")


def _problem(f, path: Path) -> str:
    """Why the file at ``path`` is not ``f`` ("" when it is), a read fault included."""
    try:
        return "missing" if not path.is_file() else mismatch(f, path)
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"


@command.command("verify")
@click.argument("names", nargs=-1)
def verify_command(names: tuple[str, ...]) -> None:
    """Re-hash the named sets (default: every set with a file here); exit 2 when a file is missing or differs."""
    sets = [registry.get(n) for n in names] if names else [
        ds for ds in registry.catalog().values() if any((ds.folder() / f.path).exists() for f in ds.files)]
    if not sets:
        click.echo(f"no registered set has a file in {registry.data_root()}; fetch one with memini-bench data fetch "
                   "NAME", err=True)
        return
    bad = 0
    for ds in sets:
        problems = []
        for f in ds.files:
            why = _problem(f, ds.folder() / f.path)
            if why:
                problems.append(f"{f.path}: {why}")
        bad += bool(problems)
        if problems:
            click.echo(f"{ds.name}: {len(problems)} of {len(ds.files)} files fail: " + "; ".join(problems[:5])
                       + (f" and {len(problems) - 5} more" if len(problems) > 5 else "")
                       + f"; run {registry.fetch_command(ds.name)}")
        else:
            click.echo(f"{ds.name}: {len(ds.files)} files verified")
    if bad:
        raise BenchError(f"{bad} of {len(sets)} data sets failed verification")
    sys.stdout.flush()
