"""Running a click command under the CLI's contract, for every entry point (the CLI, its subcommands, the studies,
the quality scoreboard, the benchmark scripts): bad input (a usage error or a BenchError) is one line on stderr
and exit code 2, an interrupt is one line and exit code 130, never a traceback for either.

The line stays one line: a newline in a message (a path holding one) is written ``\\n``. Output that cannot be
written is bad input too: a closed stdout (``>&-``) is refused before the command runs, and a reader that exits
early (``... | head -1``, ``... | true``) ends the run with one line and exit 2 instead of a silent exit 1 (the run
stops at that point, so the results file that follows the tables is not written). Running out of memory is one
line, exit 2.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import click

from memini_bench.errors import BenchError


class _BrokenPipe(Exception):
    """stdout's reader went away while the command wrote to it."""


def _fail(prog: str, message: str, code: int = 2) -> None:
    text = message.replace("\r", "\\r").replace("\n", "\\n")
    try:
        click.echo(f"{prog}: error: {text}", err=True)
    except (OSError, ValueError):
        pass
    sys.exit(code)


def _fail_hard(prog: str, message: str) -> None:
    """``_fail`` ended with ``os._exit(2)`` after flushing, for a process whose threads would block a normal exit."""
    try:
        text = message.replace("\r", "\\r").replace("\n", "\\n")
        click.echo(f"{prog}: error: {text}", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(2)


def fail_usage(prog: str, message: str) -> None:
    """A usage error found before the command runs: one line, exit 2."""
    _fail(prog, message)


def _stdout_usable() -> bool:
    """False for a closed stdout (``>&-``: no ``sys.stdout``, or a descriptor that is not open)."""
    if sys.stdout is None:
        return False
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # an in-memory stream (a test's capture): usable
        return True
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def run_command(cmd: click.Command, argv: list[str] | None, prog: str) -> object:
    """Run a click command with one-line errors: exit 2 for bad input (usage or BenchError), 130 when
    interrupted, never a traceback for either; returns what the command returned."""
    if not _stdout_usable():
        _fail(prog, "stdout is closed; run with stdout open (redirect it to a file or /dev/null instead of >&-)")
    callback = cmd.callback
    if callback is not None:  # click turns EPIPE into a silent exit 1: catch it inside, where it happens
        def guarded(*args: object, **kwargs: object) -> object:
            try:
                return callback(*args, **kwargs)
            except BrokenPipeError:
                raise _BrokenPipe from None

        cmd.callback = guarded
    previous = _term_as_interrupt()
    try:
        return cmd.main(args=argv, prog_name=prog, standalone_mode=False)
    except _BrokenPipe:
        _silence_stdout()
        _fail(prog, "stdout was closed by its reader (a pipe that ended early, e.g. | head); the run stopped "
                    "there and wrote nothing after it")
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        _fail(prog, f"{exc.format_message()} (see --help)")
    except BenchError as exc:
        if getattr(exc, "hard_exit", False):  # a plugin's thread would keep the interpreter from exiting
            _fail_hard(prog, str(exc))
        _fail(prog, str(exc))
    except MemoryError:
        _fail(prog, "ran out of memory; free memory, raise the process's memory limit or use -limit N")
    except (click.Abort, KeyboardInterrupt):
        try:
            click.echo(f"{prog}: interrupted", err=True)
        except (OSError, ValueError):
            pass
        sys.exit(130)
    finally:
        cmd.callback = callback
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _term_as_interrupt():
    """SIGTERM behaves like SIGINT (an interrupt: a run's staged outputs are discarded, one line, exit 130); the
    handler it replaces, or None where none can be set (not the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)
