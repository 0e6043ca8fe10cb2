"""The command line: ``python -m memini_bench -suite locomo -data locomo10.json -k 5,10``.

Every flag works Go-style (``-suite locomo``, as memini's cmd/bench) and GNU-style (``--suite locomo``). Bad
input ends as one line on stderr naming the input and the fix, with exit code 2 and no results file written.
"""

from __future__ import annotations

import sys

import click
from click.core import ParameterSource

from memini_bench import __version__
from memini_bench.cli.help import GroupedCommand, show_all, topics
from memini_bench.core.console import run_command
from memini_bench.core.settings import HELP_SETTINGS, click_options
from memini_bench.modes import dispatch, modes
from memini_bench.modes.options import RunOptions
from memini_bench.results.provenance import set_command


def _options() -> list:
    """Every flag: the core and concern options, then each mode's own (``settings.click_options``)."""
    from memini_bench.modes import mode_option_classes

    return [opt for cls in RunOptions.concern_classes() + mode_option_classes() for opt in click_options(cls)]


@click.command(cls=GroupedCommand, context_settings=HELP_SETTINGS)
@click.version_option(__version__, "-version", "--version")
@click.option("--help-all", is_flag=True, expose_value=False, is_eager=True, callback=show_all,
              help="Every flag, grouped by topic.")
def command(**values: object) -> None:
    """memini-bench: measure whether agent-memory systems recall the gold memories.

    Every flag works Go-style (-suite locomo, as memini's cmd/bench) and GNU-style (--suite locomo)."""
    ctx = click.get_current_context()
    given = frozenset(name for name in values
                      if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP))
    sys.exit(dispatch(RunOptions.build(values, given)))


for _opt in _options():
    command = _opt(command)
command.topic_list = topics(RunOptions.concern_classes(), modes())


@click.command(context_settings=HELP_SETTINGS)
@click.argument("topic", required=False)
def help_command(topic: str | None) -> None:
    """One help topic in full (without TOPIC: the grouped --help)."""
    ctx = click.Context(command, info_name="memini-bench", max_content_width=HELP_SETTINGS["max_content_width"],
                        terminal_width=HELP_SETTINGS["terminal_width"])
    click.echo(command.get_help(ctx) if topic is None else command.topic_help(ctx, topic), nl=topic is None)


#: Subcommands: the first argument names one (``memini-bench report ...``); anything else is the flat, Go-style
#: run of memini's ``cmd/bench`` (``memini-bench -suite locomo ...``). Each target is ``module:attr``, a click
#: command, imported only when named.
SUBCOMMANDS: dict[str, str] = {"help": "memini_bench.cli:help_command",
                               "report": "memini_bench.report.cli:command", "data": "memini_bench.data.cli:command",
                               "score": "memini_bench.modes.score:command"}


def repeated_flag(cmd: click.Command, args: list[str]) -> str | None:
    """The first flag that is not repeatable yet appears twice in ``args`` (``-k 5 -k 10`` would silently keep
    the last), as typed; None when there is none. Values are skipped the way click reads them (``-k 5``,
    ``-k=5``, ``--k 5``); ``--`` ends the flags."""
    takes_value: dict[str, tuple[str, bool]] = {}
    for param in cmd.params:
        if isinstance(param, click.Option):
            for opt in (*param.opts, *param.secondary_opts):
                takes_value[opt] = (param.name or opt, param.is_flag or param.count)
    seen: dict[str, str] = {}
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            break
        name, eq, _ = token.partition("=")
        known = takes_value.get(name)
        if known is not None:
            dest, is_flag = known
            param = next(p for p in cmd.params if p.name == dest)
            if not getattr(param, "multiple", False):
                if dest in seen:
                    return f"{seen[dest]} (again as {name})" if seen[dest] != name else name
                seen[dest] = name
            if not is_flag and not eq:
                i += 1
        i += 1
    return None


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``memini-bench`` and ``python -m memini_bench``."""
    args = sys.argv[1:] if argv is None else list(argv)
    set_command(["memini-bench", *args])
    if args and args[0] in SUBCOMMANDS:
        from memini_bench.core.registry import load_target

        sub = load_target(SUBCOMMANDS[args[0]], args[0])
        run_command(sub, args[1:], f"memini-bench {args[0]}")
        return
    twice = repeated_flag(command, args)
    if twice is not None:
        from memini_bench.core.console import fail_usage

        fail_usage("memini-bench", f"{twice} given twice; give each flag once (comma lists: -k 5,10)")
    run_command(command, args, "memini-bench")
