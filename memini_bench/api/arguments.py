"""The Python API's arguments made into a verb's options exactly as the CLI makes its flags into them
(``modes.options.RunOptions.build``), with every refusal one ``BenchError`` naming the function and the argument:
a keyword no flag of the verb takes (the closest named), a flag that writes files (the API writes none:
``Report.save`` does), and a value of the wrong type or out of range (``k=5.5``, ``k=None``, ``resamples=5``,
``limit=-1``, ``suite=None``), which click's own checks would otherwise raise as click's exception or a
``TypeError``."""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Mapping, Sequence
from typing import Any

import click

from memini_bench.errors import BenchError

#: The CLI's flags that write files beside the results file: not arguments of the API (``Report.save`` writes).
WRITERS = frozenset({"out", "per_question", "trec", "plot"})


def _fields(verb: str) -> dict[str, dataclasses.Field]:
    """Every flag field the verb's mode honours, by python name."""
    from memini_bench.core.settings import flag_fields
    from memini_bench.modes import mode_option_classes, used_fields
    from memini_bench.modes.options import RunOptions
    from memini_bench.modes.specs import spec_for

    used = used_fields(spec_for(verb))
    return {f.name: f for cls in RunOptions.concern_classes() + mode_option_classes() for f in flag_fields(cls)
            if f.name in used}


def ks(fn: str, k: Any) -> str:
    """``k`` (one K or a sequence of them) as the CLI's ``-k`` text; anything else is a BenchError."""
    values = (k,) if isinstance(k, int) and not isinstance(k, bool) else k
    if isinstance(values, str) or not isinstance(values, Sequence) or not values or \
            not all(isinstance(x, int) and not isinstance(x, bool) for x in values):
        raise BenchError(f"{fn}(): k={k!r}: give a whole number >= 1 or a list of them, e.g. k=5 or k=(5, 10)")
    return ",".join(map(str, values))


def text(fn: str, name: str, value: Any, *, path: bool = False) -> str:
    """A text argument (a path where ``path``: a ``str`` or an ``os.PathLike``); anything else is a BenchError."""
    if isinstance(value, str):
        return value
    if path and isinstance(value, os.PathLike):
        return os.fspath(value)  # type: ignore[return-value]
    kind = "a path (str or pathlib.Path)" if path else "a string"
    raise BenchError(f"{fn}(): {name}={value!r}: give {kind}")


def _checked(fn: str, f: dataclasses.Field, value: Any, shown: Any) -> Any:
    """One flag's value checked as the CLI checks it (its click type), or a BenchError naming the argument as the
    caller gave it (``shown``)."""
    from memini_bench.core.settings import CommaList

    name, kind, default = f.name, f.metadata["click"].get("type"), f.default
    if isinstance(default, bool) and not isinstance(value, bool):
        raise BenchError(f"{fn}(): {name}={value!r}: give True or False")
    if isinstance(kind, CommaList) and not isinstance(value, str):
        if isinstance(value, Sequence) and not isinstance(value, bytes):
            value = ",".join(map(str, value))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        else:
            raise BenchError(f"{fn}(): {name}={value!r}: give a value or a list of them")
    if isinstance(kind, click.ParamType):
        if value is None:
            raise BenchError(f"{fn}(): {name}=None: give a value (leave the argument out for the default)")
        try:
            return kind.convert(value, None, None)
        except click.ClickException as exc:
            raise BenchError(f"{fn}(): {name}={shown!r}: {exc.message}") from None
    if isinstance(default, str) and not isinstance(value, str):
        return text(fn, name, value, path=True)
    return value


def options(fn: str, verb: str, values: Mapping[str, Any], given: frozenset[str],
            shown: Mapping[str, Any] | None = None):
    """The verb's ``RunOptions`` from ``values`` keyed by flag python name (see the module docstring); ``shown``:
    the arguments as the caller gave them, where ``values`` holds them as the CLI's text (``k=(5, 10)`` is
    ``"5,10"``), for the messages."""
    shown = {**values, **(shown or {})}
    from memini_bench.modes.options import RunOptions

    known = _fields(verb)
    for name in sorted(set(values) & WRITERS):
        raise BenchError(f"{fn}(): {name} writes files, and {fn} writes none; use Report.save(path) for the "
                         f"results file, or memini-bench {verb} -{name.replace('_', '-')}")
    for name in sorted(set(values) - set(known) - {"no_write"}):
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else f" (see memini-bench {verb} --help)"
        raise BenchError(f"{fn}(): no setting {name}{hint}")
    checked = {name: value if name == "no_write" else _checked(fn, known[name], value, shown[name])
               for name, value in values.items()}
    return RunOptions.build(checked, given)
