"""A mistyped flag names the closest valid one, in the spelling typed: ``-sytems`` -> ``did you mean -systems?``,
``--sytems`` -> ``--systems`` (click alone reads ``-sytems`` as ``-s`` plus letters and says "No such option: -s")."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

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
    skipped the way click reads it (``-k 5``, ``-k=5``, ``-fusion -1``); ``--`` ends the flags. ``owners`` maps a
    flag that another verb takes (``-sweep``) to that verb, which the message then names."""
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
        if token[:2] in known and not token.startswith("--") and known[token[:2]]:  # -k5: a short flag's value
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
    close = difflib.get_close_matches(name, same, n=1, cutoff=0.7)
    hint = f"; did you mean {close[0]}?" if close else " (see --help)"
    return f"no such flag {name}{hint}"
