"""The flag reference of docs/flags.md (the ``flags`` block), rendered from the click commands themselves: one
section per verb and per study, each listing that verb's flags in its own groups (the headings of its ``--help``)
with type, default and meaning; the subcommands that are not modes (``report``, ``data``) and the study
scripts likewise; then the flat form's mapping onto the verbs. A flag added, removed or changed in the CLI changes
this text, so the docs test (``tests/docs/test_readme.py``) fails until the page is regenerated. Command lines are
plain text, not code spans: the docs' examples test runs every code span that is a command, and these are names.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from memini_bench.core.settings import HELP_SETTINGS
from memini_bench.core.table import markdown, table_of

ROOT = str(Path(__file__).resolve().parents[2]) + os.sep
WIDTH = {"max_content_width": HELP_SETTINGS["max_content_width"], "terminal_width": HELP_SETTINGS["terminal_width"]}


def type_of(param: click.Parameter) -> str:
    """What a flag takes, as a reader wants it: ``flag`` (no value), the choices, ``list of ...``, ``integer``..."""
    from memini_bench.core.settings import CommaList

    kind = param.type
    if getattr(param, "is_flag", False) and isinstance(kind, click.types.BoolParamType):
        return "flag"
    if isinstance(kind, click.Choice):
        text = _choices(kind)
    elif isinstance(kind, CommaList):
        inner = kind.item
        text = "list" if inner is None else "list of " + (_choices(inner) if isinstance(inner, click.Choice)
                                                          else inner.name)
    else:
        text = kind.name
    if getattr(param, "multiple", False):
        text += " (repeatable)"
    if getattr(param, "_flag_needs_value", False):
        text += " (its value optional)"
    return text


def _choices(kind: click.Choice) -> str:
    return " \\| ".join(str(c) if c != "" else '""' for c in kind.choices)


def default_of(param: click.Parameter) -> str:
    """The default as ``--help`` shows it; a path inside this checkout (a study script's input) relative to it."""
    value = param.default
    if getattr(param, "is_flag", False) or callable(value):
        return ""
    if value in ("", None) or (isinstance(value, list | tuple) and not value):
        return ""
    if isinstance(value, list | tuple):
        value = ",".join(map(str, value))
    return f"`{str(value).replace(ROOT, '').replace('|', chr(92) + '|')}`"


def rows(params: list[click.Parameter]) -> list[list[str]]:
    """One table row per option (an argument is named in the section's usage line instead)."""
    out = []
    for param in params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        names = sorted(param.opts + param.secondary_opts, key=len)
        text = " ".join((param.help or "").split()).replace("|", "\\|")
        out.append([f"`{'`, `'.join(names)}`", type_of(param), default_of(param), text])
    return out


def table(title: str, params: list[click.Parameter]) -> str:
    body = rows(params)
    if not body:
        return ""
    return f"**{title}**\n\n" + markdown(table_of("flag:l|type:l|default:l|meaning:l", body))


def usage(cmd: click.Command, prog: str) -> str:
    return cmd.get_usage(click.Context(cmd, info_name=prog, **WIDTH)).removeprefix("Usage: ").strip()


def verb_section(verb: str) -> str:
    """A mode verb's section: its summary, its usage, then its flags under the headings of its ``--help``."""
    from memini_bench.cli.verbs import verb_command

    cmd = verb_command(verb)
    prog = f"memini-bench {verb}"
    parts = [f"### {prog}\n\n{cmd.help}\n\nUsage: {usage(cmd, prog)} ({prog} --help shows the same flags)\n"]
    placed: set[str] = set()
    for topic in cmd.topic_list:
        params = cmd.params_of(topic)
        placed.update(p.name for p in params)
        parts.append(table(topic.title, params))
    parts.append(table("Other", [p for p in cmd.params if p.name not in placed]))
    return "\n".join(p for p in parts if p)


def command_section(prog: str, cmd: click.Command, level: int = 3) -> str:
    """A subcommand that is not a mode (or a study script): its help's first paragraph, usage and flags; a group's
    subcommands each in turn, one heading level down."""
    summary = " ".join((cmd.help or "").split("\n\n")[0].split())
    parts = [f"{'#' * level} {prog}\n\n{summary}\n\nUsage: {usage(cmd, prog)}\n", table("Flags", cmd.params)]
    if isinstance(cmd, click.Group):
        parts += [command_section(f"{prog} {name}", sub, level + 1) for name, sub in cmd.commands.items()]
    return "\n".join(p for p in parts if p)


def flat_section() -> str:
    """The flat form: every flag above, the verb picked by the first row of ``FLAT_ROUTES`` whose flags are given."""
    from memini_bench.modes.routes import FLAT_ROUTES

    routes = markdown(table_of("flags given:l|runs:l", [[f"`{r.flags}`", f"`{r.verb}`"] for r in FLAT_ROUTES]))
    return ("### The flat form: memini-bench [FLAGS]\n\nThe Go-style form of memini's `cmd/bench` takes every flag "
            "above (`memini-bench --help-all` lists them) and runs the verb of the first row whose flags are given:"
            "\n\n" + routes)


def reference() -> str:
    """The whole block: each mode verb, each study (modes, then the study scripts), the other subcommands, the flat
    form."""
    from memini_bench.cli import SUBCOMMANDS
    from memini_bench.cli.verbs import SCRIPTS
    from memini_bench.core.registry import load_target
    from memini_bench.modes import STUDIES, VERBS

    sections = [verb_section(v) for v in VERBS]
    sections += [verb_section(f"study {name}") for name in STUDIES]
    sections += [command_section(f"memini-bench study {name}", load_target(target, f"study {name}"))
                 for name, target in SCRIPTS.items()]
    sections += [command_section(f"memini-bench {name}", load_target(target, name))
                 for name, target in SUBCOMMANDS.items() if name != "help"]
    return "\n".join([*sections, flat_section()])
