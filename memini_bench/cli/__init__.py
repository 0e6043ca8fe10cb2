"""The command line: ``memini-bench VERB [FLAGS]`` (``run``, ``sweep``, ``compare``, ``qa``, ``study NAME``,
``vetobench``, ``score``, ``report``, ``data``, ``list``, ``help``), and the flat form of memini's cmd/bench,
``python -m memini_bench -suite locomo -data locomo10.json -k 5,10``, which runs the verb its flags pick
(``modes.routes.FLAT_ROUTES``) with the same outputs and results identity.

Every flag works Go-style (``-suite locomo``, as memini's cmd/bench) and GNU-style (``--suite locomo``). Bad
input ends as one line on stderr naming the input and the fix, with exit code 2 and no results file written; a
mistyped flag names the closest valid one (``cli.typos``).

The flat form's command (every flag) is built on first use (``flat_command``; ``command`` names it): a verb builds
only its own flags from its mode's spec (``cli.verbs``), and no mode's module is imported before its verb runs, so
``import memini_bench.cli`` loads no numpy and no mode.
"""

from __future__ import annotations

import functools
import sys

import click
from click.core import ParameterSource

from memini_bench import __version__
from memini_bench.cli.help import FlatCommand, show_all, topics
from memini_bench.cli.typos import closest
from memini_bench.core.console import fail_usage, run_command
from memini_bench.core.settings import HELP_SETTINGS, click_options
from memini_bench.modes import VERBS, dispatch
from memini_bench.results.provenance import set_command


@click.command("command", cls=FlatCommand, context_settings=HELP_SETTINGS)
@click.version_option(__version__, "-version", "--version")
@click.option("--help-all", is_flag=True, expose_value=False, is_eager=True, callback=show_all,
              help="Every flag, grouped by topic.")
@click.option("-plan", "--plan", "plan_only", is_flag=True, help="Print what would run and where it would write; "
              "run nothing.")
def _flat(plan_only: bool = False, **values: object) -> None:
    """memini-bench: measure whether agent-memory systems recall the gold memories.

    Every flag works Go-style (-suite locomo, as memini's cmd/bench) and GNU-style (--suite locomo)."""
    from memini_bench.modes.options import RunOptions

    ctx = click.get_current_context()
    given = frozenset(name for name in values
                      if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP))
    sys.exit(dispatch(RunOptions.build(values, given), plan_only=plan_only))


@functools.cache
def flat_command() -> FlatCommand:
    """The flat form's command with every flag: the core and concern options, then each mode's own
    (``settings.click_options``), grouped by topic; built once, on first use."""
    from memini_bench.modes import mode_option_classes
    from memini_bench.modes.options import RunOptions
    from memini_bench.modes.specs import SPECS

    for cls in RunOptions.concern_classes() + mode_option_classes():
        for option in click_options(cls):
            option(_flat)
    _flat.topic_list = topics(RunOptions.concern_classes(), SPECS)
    return _flat


def __getattr__(name: str):
    if name == "command":  # the flat form's command, built on first use
        return flat_command()
    raise AttributeError(f"module 'memini_bench.cli' has no attribute {name!r}")


@click.command(context_settings=HELP_SETTINGS)
@click.argument("topic", required=False)
def help_command(topic: str | None) -> None:
    """One help topic in full, or one verb's help (without TOPIC: the overview of the verbs)."""
    if topic == "study":
        from memini_bench.cli.verbs import study_help

        click.echo(study_help(), nl=False)
        return
    width = {"max_content_width": HELP_SETTINGS["max_content_width"],
             "terminal_width": HELP_SETTINGS["terminal_width"]}
    if topic in VERBS or topic in SUBCOMMANDS:
        cmd = _command_of(topic) if topic in VERBS else _subcommand(topic)
        click.echo(cmd.get_help(click.Context(cmd, info_name=f"memini-bench {topic}", **width)))
        return
    command = flat_command()
    ctx = click.Context(command, info_name="memini-bench", **width)
    click.echo(command.get_help(ctx) if topic is None else command.topic_help(ctx, topic), nl=topic is None)


#: Subcommands that are not modes: each target is ``module:attr``, a click command, imported only when named.
SUBCOMMANDS: dict[str, str] = {"help": "memini_bench.cli:help_command",
                               "report": "memini_bench.report.cli:command", "data": "memini_bench.data.cli:command"}


def _subcommand(name: str) -> click.Command:
    """The click command of a subcommand that is not a mode (``SUBCOMMANDS``), imported now."""
    from memini_bench.core.registry import load_target

    return load_target(SUBCOMMANDS[name], name)


def _command_of(verb: str) -> click.Command:
    """The click command of a mode verb (``modes.VERBS``)."""
    from memini_bench.cli.verbs import verb_command

    return verb_command(verb)


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


def run_checked(cmd: click.Command, args: list[str], prog: str, owners: dict[str, str] | None = None) -> None:
    """Run ``cmd`` after refusing a mistyped subcommand or flag (``typos.check_args``, at any depth of a group)
    and a flag given twice. ``owners``: each other verb's own flag -> that verb (``flag_verbs``)."""
    from memini_bench.cli.typos import check_args, resolve

    problem = check_args(cmd, args, prog, owners)
    if problem is None:
        found = resolve(cmd, args, prog)
        if not isinstance(found, str):
            problem = _twice(found[0], found[1])
    if problem is not None:
        fail_usage(prog.split(" ")[0], problem)
    run_command(cmd, args, prog)


def flag_verbs() -> dict[str, str]:
    """Each mode's own flag (no dash) -> its verb (``sweep`` for ``sweep``), for the message of a flag given to
    another verb."""
    from memini_bench.core.settings import flag_fields
    from memini_bench.modes.specs import SPECS

    return {f.metadata["flag"]: spec.verb for spec in SPECS if spec.options is not None
            for f in flag_fields(spec.options)}


def _twice(cmd: click.Command, args: list[str]) -> str | None:
    twice = repeated_flag(cmd, args)
    return None if twice is None else f"{twice} given twice; give each flag once (comma lists: -k 5,10)"


def run_study(args: list[str]) -> None:
    """``memini-bench study NAME [FLAGS]``."""
    from memini_bench.cli.verbs import SCRIPTS, study_help, study_names, verb_command
    from memini_bench.core.registry import load_target

    if not args or args[0] in ("-h", "--help"):
        click.echo(study_help(), nl=False)
        return
    name, rest = args[0], args[1:]
    if name in SCRIPTS:
        run_checked(load_target(SCRIPTS[name], f"study {name}"), rest, f"memini-bench study {name}")
    elif name in study_names():
        run_checked(verb_command(f"study {name}"), rest, f"memini-bench study {name}", flag_verbs())
    else:
        close = closest(name, study_names())
        hint = f"did you mean {close}? " if close else ""
        fail_usage("memini-bench", f"study {name}: no such study; {hint}use one of {', '.join(study_names())}")


def run_subcommand(name: str, args: list[str]) -> None:
    """A subcommand that is not a mode (``SUBCOMMANDS``), its flags checked (a typo gets the closest flag)."""
    run_checked(_subcommand(name), args, f"memini-bench {name}")


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``memini-bench`` and ``python -m memini_bench``. Run as the program (``argv`` None), the
    process ends when the command does: a thread a plugin left running that the run's guard could not attribute
    (a ``threading.Timer``, a thread pool's worker, a thread whose target is a built-in) is ended with the process
    after the results are written, and a line says so (``_end_with_stray_threads``)."""
    if argv is not None:
        _main(list(argv))
        return
    try:
        _main(sys.argv[1:])
    except SystemExit as exc:
        _end_with_stray_threads(exc.code)
        raise
    _end_with_stray_threads(0)


def _end_with_stray_threads(code: object) -> None:
    """``os._exit(code)`` after flushing, when a non-daemon thread other than this one still runs (the interpreter
    would wait for it forever); nothing otherwise."""
    import os
    import threading

    stray = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon
             and t.is_alive()]
    if not stray:
        return
    status = code if isinstance(code, int) else (0 if code is None else 1)
    try:
        names = ", ".join(sorted({t.name for t in stray})[:5])
        sys.stderr.write(f"memini-bench: ended {len(stray)} thread(s) a plugin left running ({names}); they would "
                         "have kept the process alive\n")
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    os._exit(status)


def _main(args: list[str]) -> None:
    set_command(["memini-bench", *args])
    first, rest = (args[0], args[1:]) if args else ("", [])
    if first == "study":
        run_study(rest)
    elif first in SUBCOMMANDS:
        run_subcommand(first, rest)
    elif first in VERBS:
        run_checked(_command_of(first), rest, f"memini-bench {first}", flag_verbs())
    elif first and not first.startswith("-") and not {"-h", "--help"} & set(args):  # a mistyped verb
        verbs = ["study", *SUBCOMMANDS, *VERBS]
        close = closest(first, verbs)
        hint = f"did you mean memini-bench {close}? " if close else ""
        fail_usage("memini-bench", f"{first}: no such verb; {hint}use one of {', '.join(verbs)} (memini-bench "
                                   "--help lists them)")
    else:
        run_checked(flat_command(), args, "memini-bench", flag_verbs())
