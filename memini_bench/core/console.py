"""Running a click command under the CLI's contract, for every entry point (the CLI, its subcommands, the studies,
the quality scoreboard, the benchmark scripts): bad input (a usage error or a BenchError) is one line on stderr
and exit code 2, an interrupt is one line and exit code 130, never a traceback for either.
"""

from __future__ import annotations

import sys

import click

from memini_bench.errors import BenchError


def run_command(cmd: click.Command, argv: list[str] | None, prog: str) -> object:
    """Run a click command with one-line errors: exit 2 for bad input (usage or BenchError), 130 when
    interrupted, never a traceback for either; returns what the command returned."""
    try:
        return cmd.main(args=argv, prog_name=prog, standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"{prog}: error: {exc.format_message()} (see --help)", err=True)
        sys.exit(2)
    except BenchError as exc:
        click.echo(f"{prog}: error: {exc}", err=True)
        sys.exit(2)
    except (click.Abort, KeyboardInterrupt):
        click.echo(f"{prog}: interrupted", err=True)
        sys.exit(130)
