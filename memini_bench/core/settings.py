"""Typed options declared beside their flags: one frozen dataclass per concern, each field a CLI flag.

A field made with ``setting("pool-factor", 0, "help", type=...)`` is both the dataclass field and the flag
``-pool-factor`` / ``--pool-factor`` (its python name is the field name, which must equal the flag's with ``_`` for
``-``). ``click_options(cls)`` turns a class's fields into click options; ``build(cls, values)`` makes the instance
from parsed values (missing ones take the field default). Value checks live in click types (``Int``, ``Real``,
``CommaList``: finite numbers, ranges, one comma-list policy) or in the class's ``__post_init__`` (raising
BenchError naming the flag), so a bad value is refused before any work, whoever builds the options.

Comma lists have one policy (``CommaList``): entries are stripped; an empty entry, an unparsable one or one out of
range is an error naming the flag; duplicates are dropped; ``sort`` sorts numbers; ``allow_empty`` lets ``""``
mean "none given" (for flags where that means "all").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

T = TypeVar("T")


#: One help layout for every command (the CLI, its subcommands, the studies, the benchmark scripts): ``-h`` as well
#: as ``--help``, one width in a terminal or not.
HELP_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 118, "terminal_width": 118}


def setting(name: str, default: Any, help: str, *, group: str = "", token: str | None = None,
            aliases: tuple[str, ...] = (), **click_kwargs: Any) -> Any:
    """A dataclass field that is also the CLI flag ``-name`` (see the module docstring). ``group`` is its heading
    in ``--help`` (default: its class's ``GROUP``); ``token``, where given, is how a non-default value is spelled in
    a results file's name (``"tboost"`` -> ``-tboost0.4``; see ``results.identity``); ``aliases``: other spellings
    of the same flag (``-grid`` for ``-sweep``), the same field and value."""
    return dataclasses.field(default=default, metadata={"flag": name, "help": help, "click": click_kwargs,
                                                        "group": group, "token": token, "aliases": aliases})


def group_of(cls: type, f: dataclasses.Field) -> str:
    """The ``--help`` heading of a flag field: its own ``group``, else its class's ``GROUP``, else "other"."""
    return f.metadata.get("group") or getattr(cls, "GROUP", "") or "other"


def flag_fields(cls: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if "flag" in f.metadata]


@dataclasses.dataclass(frozen=True)
class IdentityPart:
    """What one part of a run (its embedder, a system's settings, the loader, the lineup) adds to a results file's
    identity (``items``: keys of the identity dict) and to its readable name (``tokens``, in order). Each layer
    makes its own (``embed.settings.identity_part``, ``systems.lineup.identity_parts``, ``loaders.identity_part``);
    ``results.identity`` only merges them, knowing no system or embedder."""

    items: dict[str, object] = dataclasses.field(default_factory=dict)
    tokens: tuple[str, ...] = ()


def _token_value(v: object) -> str:
    if isinstance(v, bool):
        return ""
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def setting_tokens(obj: object) -> tuple[str, ...]:
    """One name token per field of ``obj`` that declares one (``setting(..., token=...)``) and differs from its
    default, in field order (``tboost0.4``; a flag is its token alone)."""
    defaults = type(obj)()
    return tuple(f.metadata["token"] + _token_value(getattr(obj, f.name)) for f in flag_fields(type(obj))
                 if f.metadata.get("token") is not None and getattr(obj, f.name) != getattr(defaults, f.name))


def flag_name(cls: type, field_name: str) -> str:
    """The ``-flag`` spelling of a field of ``cls``."""
    for f in flag_fields(cls):
        if f.name == field_name:
            return "-" + f.metadata["flag"]
    raise KeyError(field_name)


def click_options(cls: type) -> list[Callable]:
    """The click option decorators for every flag field of ``cls``."""
    out = []
    for f in flag_fields(cls):
        meta = f.metadata
        kwargs = dict(meta["click"])
        default = f.default
        if isinstance(kwargs.get("type"), CommaList) and isinstance(default, tuple):
            default = ",".join(map(str, default))
        if kwargs.get("multiple") and default == ():
            default = None  # click's "nothing given" for a repeatable flag
        if isinstance(default, bool) and "is_flag" not in kwargs:
            kwargs["is_flag"] = True
        spellings = [spelling for alias in meta.get("aliases", ()) for spelling in (f"-{alias}", f"--{alias}")]
        out.append(flag(meta["flag"], *spellings, f.name, default=default, help=meta["help"], **kwargs))
    return out


def build(cls: type[T], values: Mapping[str, object]) -> T:
    """``cls`` from parsed flag values keyed by field name (others ignored; missing -> default). A CommaList value
    given as a string is parsed here too, so programmatic callers get the CLI's checks."""
    kwargs = {}
    for f in flag_fields(cls):
        if f.name not in values:
            continue
        value = values[f.name]
        kind = f.metadata["click"].get("type")
        if isinstance(kind, CommaList) and isinstance(value, str):
            value = kind.convert(value, None, None)
        elif isinstance(kind, click.ParamType) and value is not None and not isinstance(value, tuple):
            value = kind.convert(value, None, None)
        kwargs[f.name] = value
    return cls(**kwargs)


class Real(click.ParamType):
    """A finite float within optional bounds (NaN and infinities are refused: they slip through FloatRange)."""

    name = "float"

    def __init__(self, min: float | None = None, max: float | None = None, *, min_open: bool = False) -> None:
        self.min, self.max, self.min_open = min, max, min_open

    def convert(self, value, param, ctx):
        if isinstance(value, float | int) and not isinstance(value, bool):
            x = float(value)
        else:
            try:
                x = float(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.min is not None and (x < self.min or (self.min_open and x == self.min)):
            self.fail(f"{x:g} is below the allowed minimum {self.min:g}" + (" (exclusive)" if self.min_open else ""),
                      param, ctx)
        if self.max is not None and x > self.max:
            self.fail(f"{x:g} is above the allowed maximum {self.max:g}", param, ctx)
        return x


INT64_MAX = 2**63 - 1


class Int(click.ParamType):
    """An integer within optional bounds and the 64-bit range; ``1e3``, ``1.5`` and ``""`` are refused."""

    name = "integer"

    def __init__(self, min: int | None = None, max: int | None = None) -> None:
        self.min, self.max = min, max

    def convert(self, value, param, ctx):
        if isinstance(value, bool):
            self.fail(f"{value!r} is not an integer", param, ctx)
        if isinstance(value, int):
            x = value
        else:
            try:
                x = int(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not an integer", param, ctx)
        if not -INT64_MAX <= x <= INT64_MAX:  # a results file (JSON via orjson) and numpy hold 64-bit integers
            self.fail(f"{value!r} is beyond the 64-bit integer range (|x| <= {INT64_MAX})", param, ctx)
        if self.min is not None and x < self.min:
            self.fail(f"{x} is below the allowed minimum {self.min}", param, ctx)
        if self.max is not None and x > self.max:
            self.fail(f"{x} is above the allowed maximum {self.max}", param, ctx)
        return x


class CommaList(click.ParamType):
    """A comma-separated list of ``item`` values (the one comma-list policy: see the module docstring)."""

    name = "list"

    def __init__(self, item: click.ParamType | None = None, *, sort: bool = False, allow_empty: bool = False,
                 unique: bool = False) -> None:
        self.item = item
        self.sort = sort
        self.allow_empty = allow_empty
        self.unique = unique  # refuse a repeated entry (where it cannot mean anything else: -compare A,A)

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        text = str(value).strip()
        if not text:
            if self.allow_empty:
                return ()
            self.fail("an empty list; give comma-separated values", param, ctx)
        out = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                self.fail(f"{value!r} has an empty entry", param, ctx)
            out.append(self.item.convert(part, param, ctx) if self.item is not None else part)
        if self.unique:
            twice = next((v for n, v in enumerate(out) if v in out[:n]), None)
            if twice is not None:
                self.fail(f"{value!r} names {twice!r} twice; give each entry once", param, ctx)
        out = list(dict.fromkeys(out))
        return tuple(sorted(out) if self.sort else out)


def flag(name: str, *dest: str, **kwargs):
    """A click option spelled both ``-name`` and ``--name`` (optional python name ``dest``), default shown."""
    kwargs.setdefault("show_default", True)
    return click.option(f"-{name}", f"--{name}", *dest, **kwargs)


def command(cls: type[T], *, name: str | None = None) -> Callable[[Callable[[T], Any]], click.Command]:
    """A click command whose flags are ``cls``'s setting fields (the one way to declare a flag, for the CLI's
    subcommands, the studies and the benchmark scripts alike); the decorated function receives the built
    ``cls``, checked as ``build`` checks it. Run it with ``core.console.run_command``."""

    def wrap(func: Callable[[T], Any]) -> click.Command:
        def callback(**values: object) -> Any:
            return func(build(cls, values))

        cmd = click.Command(name or func.__name__, callback=callback, help=func.__doc__,
                            context_settings=HELP_SETTINGS)
        for option in click_options(cls):
            cmd = option(cmd)
        return cmd

    return wrap
