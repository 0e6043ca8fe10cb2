"""``memini-bench report PATH... -o DIR`` (the site) or ``-format md|csv|latex|json`` (a table, to stdout or -o)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from memini_bench.core.settings import HELP_SETTINGS
from memini_bench.errors import BenchError


@click.command(context_settings=HELP_SETTINGS)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--out", "out", default="", help="The site's folder (made if missing); with -format, the table's "
              "file (default: stdout).")
@click.option("-format", "--format", "fmt", default="", type=click.Choice(["", "md", "csv", "latex", "json"]),
              help="Write the leaderboard as a table instead of the site.")
@click.option("-k", "--k", "k", default=None, type=int, help="The table's K for recall_all, nDCG and tokens "
              "(default: the largest K of the inputs); -format md and latex only.")
@click.option("-screenshot", "--screenshot", "shot", default="", type=click.Path(),
              help="Also write a PNG of the leaderboard (needs chromium and playwright: .ci/install-browser).")
def command(paths: tuple[str, ...], out: str, fmt: str, k: int | None, shot: str) -> None:
    """Build the static report (leaderboard, data set pages, per-question receipts) from results files."""
    from memini_bench.report import exports, site
    from memini_bench.report.collect import collect

    if k is not None and fmt not in ("md", "latex"):
        raise BenchError("-k: only -format md and -format latex take a K; drop it")
    if shot and fmt:
        raise BenchError("-screenshot: a table export has no page to photograph; drop -screenshot or -format")
    if not fmt and not out:
        raise BenchError("report: give -o DIR (the site's folder) or -format md|csv|latex|json")
    _check_out(out, fmt)
    inputs = collect(list(paths))
    if fmt:
        text = exports.export(inputs, fmt, k)
        if out:
            from memini_bench.results.atomic_io import atomic_write

            atomic_write(Path(out), lambda w: w(text.encode()))  # checked again as it is written
            click.echo(f"wrote {out}", err=True)
        else:
            sys.stdout.write(text)
        return
    start = time.perf_counter()
    pages = site.build(inputs, Path(out))
    click.echo(f"wrote {len(pages)} pages to {out}/ in {time.perf_counter() - start:.1f} s "
               f"(open {Path(out) / 'index.html'})", err=True)
    if shot:
        from memini_bench.report.screenshot import screenshot

        screenshot(Path(out) / "index.html", Path(shot))
        click.echo(f"wrote {shot}", err=True)


def _check_out(out: str, fmt: str) -> None:
    """Before reading any input: a table's ``-o`` must be a new or regular non-results file, not a link
    (``atomic_io.check_target``); the site's must be a new folder or a real one, not a link or a file."""
    import os
    import stat

    from memini_bench.results.atomic_io import check_destinations

    if not out:
        return
    if fmt:
        check_destinations(files=[("-o", out)])
        return
    try:
        mode = os.lstat(out).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except (OSError, ValueError) as exc:
        raise BenchError(f"-o {out}: cannot be used ({getattr(exc, 'strerror', None) or exc}); choose another "
                         "folder") from None
    if mode is not None and stat.S_ISLNK(mode):
        raise BenchError(f"-o {out}: is a symbolic link (the report writes no site through a link it did not "
                         "make); give its target or another folder")
    if mode is not None and not stat.S_ISDIR(mode):
        raise BenchError(f"-o {out}: is a file, not a folder (the site is a folder); choose another path")
    check_destinations(folders=[("-o", out)])
