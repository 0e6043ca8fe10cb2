"""A mistyped flag names the closest valid one, in the spelling typed: ``-sytems`` -> ``did you mean -systems?``,
``--sytems`` -> ``--systems`` (click alone reads ``-sytems`` as ``-s`` plus letters and says "No such option: -s").
The same holds for every click command the CLI runs (``check_args``): a verb, a subcommand (``score``, ``report``),
a group's subcommand (``data list``), a study script; a mistyped subcommand or verb names the closest one too."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

import click

#: Flags every command takes besides its parameters (click's help; the version and --help-all where declared).
ALWAYS = ("-h", "--help")
NUMBER = re.compile(r"-\d|-\.\d")


def _takes_value(cmd: click.Command) -> dict[str, bool]:
    """Every option name of ``cmd`` -> whether it reads a value (the next argument when not ``-f=v``)."""
    out = {name: False for name in ALWAYS}
    for param in cmd.params:
        if isinstance(param, click.Option):
            for opt in (*param.opts, *param.secondary_opts):
                out[opt] = not (param.is_flag or param.count)
    return out


def unknown_flag(cmd: click.Command, args: list[str], owners: Mapping[str, str] | None = None) -> str | None:
    """The error for the first argument of ``args`` that looks like a flag ``cmd`` lacks (None: none): ``no
    such flag X; did you mean Y?`` with Y the closest flag spelled with as many dashes as X. A flag's value is
    skipped the way click reads it (``-k 5``, ``-k=5``, ``-fusion -1``); ``--`` ends the flags. A short flag's
    value joined to it (``-k5``) is read as click does unless it starts with a letter: ``-kk 5`` is a mistyped
    flag, not ``-k k``. ``owners`` maps a flag that another verb takes (``-sweep``) to that verb, which the message
    then names."""
    known = _takes_value(cmd)
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            return None
        name, eq, _ = token.partition("=")
        if name in known:
            i += 2 if known[name] and not eq else 1
            continue
        if (token[:2] in known and not token.startswith("--") and known[token[:2]]
                and not token[2:3].isalpha()):  # -k5: a short flag's value
            i += 1
            continue
        if token.startswith("-") and len(token) > 1 and not NUMBER.match(token):
            return _message(name, known, (owners or {}).get(name.lstrip("-")))
        i += 1
    return None


def _message(name: str, known: dict[str, bool], owner: str | None) -> str:
    dashes = "--" if name.startswith("--") else "-"
    same = [k for k in known if k.startswith(dashes) and (dashes == "--" or not k.startswith("--"))]
    if owner is not None:
        return f"no such flag {name} here; it is memini-bench {owner}'s (see memini-bench {owner} --help)"
    close = closest(name, same)
    if close is None and dashes == "-" and name[:2] in known:  # -kk: a short flag with letters after it
        close = name[:2]
    hint = f"; did you mean {close}?" if close else " (see --help)"
    if close is not None and len(close) == 2 and name.startswith(close) and known.get(close):
        hint += f" (its value goes after a space: {close} VALUE)"
    return f"no such flag {name}{hint}"


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``name`` (``difflib``, cutoff 0.7), None when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.7)
    return close[0] if close else None


def resolve(cmd: click.Command, args: list[str], prog: str) -> tuple[click.Command, list[str], str] | str:
    """The command ``args`` run under ``cmd`` (a group's subcommand, followed down), its own arguments and its
    name; or the error for a mistyped subcommand (``no such command X; did you mean Y?``)."""
    while isinstance(cmd, click.Group):
        known = _takes_value(cmd)
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] != "--":
            i += 2 if known.get(args[i].partition("=")[0]) and "=" not in args[i] else 1
        if i >= len(args) or args[i] == "--":
            return cmd, args, prog
        head = unknown_flag(cmd, args[:i])
        if head is not None:
            return head
        name, verb = args[i], prog.removeprefix("memini-bench").strip()
        if name not in cmd.commands:
            close = closest(name, cmd.commands)
            hint = f"did you mean {verb} {close}? " if close else ""
            return f"{verb} {name}: no such command; {hint}use one of {', '.join(cmd.commands)}"
        cmd, args, prog = cmd.commands[name], args[i + 1:], f"{prog} {name}"
    return cmd, args, prog


def check_args(cmd: click.Command, args: list[str], prog: str,
               owners: Mapping[str, str] | None = None) -> str | None:
    """The error for ``args`` given to ``cmd`` (None: none): a mistyped subcommand or flag (``resolve``,
    ``unknown_flag``), at whatever depth of a group it is typed."""
    found = resolve(cmd, args, prog)
    if isinstance(found, str):
        return found
    leaf, rest, name = found
    problem = unknown_flag(leaf, rest, owners)
    if problem is None and isinstance(leaf, click.Group) and not set(rest) & set(ALWAYS):
        verb = name.removeprefix("memini-bench").strip()
        return f"{verb}: give a command, one of {', '.join(leaf.commands)} ({name} --help says what each does)"
    return problem
