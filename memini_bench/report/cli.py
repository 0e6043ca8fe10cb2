"""``memini-bench report PATH... -o DIR`` (the site) or ``-format md|csv|latex|html|json`` (a table, to stdout or -o).

The site is written as one unit: built in a hidden staging folder beside DIR and renamed onto DIR at the end (a
previous site there is replaced whole; a kill leaves DIR as it was and at most the staging folder, which the next
build removes). DIR must be new, empty, or a site this command wrote (it holds ``report.js``): a folder of other
files is refused rather than replaced. Inputs with more than ``MAX_REPORT_ROWS`` score rows are refused before
any page is built. Measured: 10,000 systems at two K (20,000 rows, one file) build in 30 s of CPU (135 s of wall
time on a busy 2-core machine), every data set above ``site.MAX_CHARTED_SYSTEMS`` rows drawn without figures.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import time
from pathlib import Path

import click

from memini_bench.core.settings import HELP_SETTINGS
from memini_bench.errors import BenchError

#: The most score rows (system x K x file) a report takes.
MAX_REPORT_ROWS = 100_000


@click.command(context_settings=HELP_SETTINGS)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--out", "out", default="", help="The site's folder (made if missing); with -format, the table's "
              "file (default: stdout).")
@click.option("-format", "--format", "fmt", default="", type=click.Choice(["", "md", "csv", "latex", "html", "json"]),
              help="Write the leaderboard as a table instead of the site.")
@click.option("-k", "--k", "k", default=None, type=int, help="The table's K for recall_all, nDCG and tokens "
              "(default: the largest K of the inputs); -format md and latex only.")
@click.option("-screenshot", "--screenshot", "shot", default="", type=click.Path(),
              help="Also write a PNG of the leaderboard (needs chromium and playwright: .ci/install-browser).")
def command(paths: tuple[str, ...], out: str, fmt: str, k: int | None, shot: str) -> None:
    """Build the static report (leaderboard, data set pages, per-question receipts) from results files."""
    from memini_bench.report import exports
    from memini_bench.report.collect import collect

    if k is not None and fmt not in ("md", "latex"):
        raise BenchError("-k: only -format md and -format latex take a K; drop it")
    if shot and fmt:
        raise BenchError("-screenshot: a table export has no page to photograph; drop -screenshot or -format")
    if not fmt and not out:
        raise BenchError("report: give -o DIR (the site's folder) or -format md|csv|latex|html|json")
    _check_out(out, fmt)
    _check_not_an_input(out, paths)
    inputs = collect(list(paths))
    rows = sum(len(s.results.scores) for s in inputs.sources)
    if rows > MAX_REPORT_ROWS:
        raise BenchError(f"report: the inputs hold {rows:,} score rows, more than the {MAX_REPORT_ROWS:,} one report "
                         "takes; give fewer files or systems")
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
    pages = _build_as_one_unit(inputs, Path(out))
    click.echo(f"wrote {len(pages)} pages to {out}/ in {time.perf_counter() - start:.1f} s "
               f"(open {Path(out) / 'index.html'})", err=True)
    if shot:
        from memini_bench.report.screenshot import screenshot

        screenshot(Path(out) / "index.html", Path(shot))
        click.echo(f"wrote {shot}", err=True)


def _check_out(out: str, fmt: str) -> None:
    """Before reading any input: a table's ``-o`` must be a new or regular non-results file, not a link
    (``atomic_io.check_target``); the site's must be a new folder or a real one, not a link or a file."""
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
    if mode is not None and any(os.scandir(out)) and not os.path.isfile(os.path.join(out, "report.js")):
        raise BenchError(f"-o {out}: a folder of other files, which the site would replace; give a new or empty "
                         "folder, or one an earlier report wrote")
    check_destinations(folders=[("-o", out)])


def _check_not_an_input(out: str, paths: tuple[str, ...]) -> None:
    """``-o`` must not be one of the inputs, nor a file inside an input folder (a per-question JSONL given as an
    input would be replaced by the table): refused before anything is read."""
    if not out:
        return
    target = os.path.realpath(out)
    for path in paths:
        real = os.path.realpath(path)
        if target == real or target.startswith(real.rstrip(os.sep) + os.sep):
            raise BenchError(f"-o {out}: is an input of this report ({path}), which the output would replace; "
                             "choose another path")


STAGING = ".{name}.staging-"


def _build_as_one_unit(inputs, out: Path) -> list[Path]:
    """``site.build`` into a staging folder beside ``out``, then renamed onto ``out`` (module docstring)."""
    from memini_bench.report import site

    out = Path(os.path.abspath(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    prefix = STAGING.format(name=out.name)
    for old in out.parent.glob(prefix + "*"):  # a build that was killed
        pid = old.name.removeprefix(prefix).split("-")[0]
        if not (pid.isdigit() and _alive(int(pid))):
            shutil.rmtree(old, ignore_errors=True)
    staging = out.parent / f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        pages = site.build(inputs, staging)
        previous = None
        if out.exists():
            previous = out.parent / f".{out.name}.previous-{os.getpid()}-{secrets.token_hex(4)}"
            os.replace(out, previous)
        try:
            os.replace(staging, out)
        except BaseException:
            if previous is not None:
                os.replace(previous, out)
            raise
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
    except OSError as exc:
        raise BenchError(f"-o {out}: cannot write the site ({exc.strerror or exc}); choose another folder") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / p.relative_to(staging) for p in pages]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
