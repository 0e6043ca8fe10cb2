"""The command line: ``python -m memini_bench -suite locomo -data locomo10.json -k 5,10``.

Every flag works Go-style (``-suite locomo``, as memini's cmd/bench) and GNU-style (``--suite locomo``). Bad
input ends as one line on stderr naming the input and the fix, with exit code 2 and no results file written.
"""

from __future__ import annotations

import sys

import click
from click.core import ParameterSource

from memini_bench import __version__
from memini_bench.core.settings import click_options
from memini_bench.errors import BenchError
from memini_bench.modes import dispatch
from memini_bench.modes.options import RunOptions


def _options() -> list:
    """Every flag: the core and concern options, then each mode's own (``settings.click_options``)."""
    from memini_bench.modes import mode_option_classes

    return [opt for cls in RunOptions.concern_classes() + mode_option_classes() for opt in click_options(cls)]


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, "-version", "--version")
def command(**values: object) -> None:
    """memini-bench: measure whether agent-memory systems recall the gold memories."""
    ctx = click.get_current_context()
    given = frozenset(name for name in values
                      if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP))
    sys.exit(dispatch(RunOptions.build(values, given)))


for _opt in _options():
    command = _opt(command)


def run_command(cmd: click.Command, argv: list[str] | None, prog: str) -> None:
    """Run a click command with one-line errors: exit 2 for bad input (usage or BenchError), 130 when
    interrupted, never a traceback for either."""
    try:
        cmd.main(args=argv, prog_name=prog, standalone_mode=False)
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


#: Subcommands: the first argument names one (``memini-bench report ...``); anything else is the flat, Go-style
#: run of memini's ``cmd/bench`` (``memini-bench -suite locomo ...``). Each target is ``module:attr``, a click
#: command, imported only when named.
SUBCOMMANDS: dict[str, str] = {"data": "memini_bench.data.cli:command"}


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``memini-bench`` and ``python -m memini_bench``."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] in SUBCOMMANDS:
        from memini_bench.core.registry import load_target

        sub = load_target(SUBCOMMANDS[args[0]], args[0])
        run_command(sub, args[1:], f"memini-bench {args[0]}")
        return
    run_command(command, args, "memini-bench")
