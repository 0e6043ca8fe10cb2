"""Reading a data file and checking its shape, with one clear error line naming the input on any problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from memini_bench.errors import BenchError


def read_json(path: str | Path, suite: str) -> Any:
    """Parse a JSON file; a missing, unreadable or malformed file is a BenchError naming it."""
    p = Path(path)
    if not str(path):
        raise BenchError(f"-suite {suite} needs -data PATH (the data set file)")
    if not p.exists():
        raise BenchError(f"{p}: no such file; pass the {suite} data set with -data PATH")
    if p.is_dir():
        raise BenchError(f"{p}: is a directory; -suite {suite} wants a JSON file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise BenchError(f"{p}: cannot read ({exc.strerror})") from None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BenchError(f"{p}: not valid JSON ({exc}); is this the {suite} file?") from None


def scalar_text(value: Any) -> str:
    """A JSON scalar as Go's bench renders it: strings as is, numbers as their JSON text, null/absent as ""."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def expect(cond: bool, where: str, what: str) -> None:
    """Raise a BenchError ``<where>: <what>`` unless ``cond``."""
    if not cond:
        raise BenchError(f"{where}: {what}")


def field_of(obj: Any, key: str, kind: type | tuple[type, ...], where: str, *, required: bool = True,
             default: Any = None) -> Any:
    """``obj[key]`` checked to be of ``kind``; a missing required key or a wrong type names ``where``."""
    expect(isinstance(obj, dict), where, f"expected a JSON object, got {type(obj).__name__}")
    if key not in obj or obj[key] is None:
        expect(not required, where, f"missing required field {key!r}")
        return default
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        names = "/".join(t.__name__ for t in _as_tuple(kind))
        raise BenchError(f"{where}: field {key!r} should be {names}, got {type(value).__name__}")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
