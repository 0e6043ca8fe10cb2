"""Reading a data file once and checking its shape, with one clear error line naming the input on any problem.

``read_json_source`` opens the path once, refuses what is not a data file (a folder, a device such as
``/dev/zero``, a socket), reads the bytes once (a FIFO or ``-data <(cat file)`` works; a FIFO nobody writes to is an
error after ``FIFO_WAIT_S``), hashes exactly the bytes it parsed and returns them with the document. Every OS error
(missing, unreadable, a symlink loop, a name too long) is a BenchError naming the path.

The checkers (``At``, ``field_of``, ``text_of``, ``id_of``, ``strings_of``, ``number_of``) name the place of a
problem as a JSON path in the file: ``data.json: questions[3].gold[0]: expected a string, got null``. A JSON ``null``
counts as absent (as Go's decoder, which memini uses, leaves the zero value): an optional field then takes its
default, a required one is an error.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import select
import stat
from pathlib import Path
from typing import Any, NoReturn

import orjson

from memini_bench.core.dataset import Source
from memini_bench.errors import BenchError

#: A stream (FIFO, pipe, a /proc file of unknown size) longer than this is refused rather than read to the end.
MAX_STREAM_BYTES = 4 << 30
#: How long a FIFO may stay silent (no writer, no data) before it is refused.
FIFO_WAIT_S = 3.0
_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"
#: C0 controls, DEL and the Unicode line breaks: never allowed in an id (ids go into line-based files and logs).
_ID_FORBIDDEN = frozenset(chr(c) for c in (*range(0x20), 0x7F, 0x85)) | {"\u2028", "\u2029"}
ID_FORBIDDEN_RE = re.compile("[" + "".join(sorted(_ID_FORBIDDEN)).replace("\\", "\\\\") + "]")


def _os_error(p: str, exc: OSError, suite: str) -> NoReturn:
    why = {
        errno.ENOENT: f"no such file; pass the {suite} data set with -data PATH",
        errno.ENOTDIR: f"no such file (a part of the path is not a folder); pass the {suite} data set with -data PATH",
        errno.EISDIR: f"is a directory; -suite {suite} wants a JSON file",
        errno.ELOOP: "is a symbolic link loop; pass the data file itself",
        errno.ENAMETOOLONG: "the file name is too long for this system; pass a shorter path",
        errno.EACCES: "cannot read (permission denied); make it readable or pass a copy",
        errno.EPERM: "cannot read (operation not permitted); make it readable or pass a copy",
        errno.EAGAIN: "cannot read (the file would block: not a data file); pass a regular JSON file",
    }.get(exc.errno, f"cannot read ({exc.strerror or exc}); pass a regular JSON file")
    raise BenchError(f"{p}: {why}") from None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _read_all(fd: int, p: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, _CHUNK):
        if not chunks and chunk.lstrip()[:1] not in (b"", b"{", b"[", _BOM[:1]):
            raise BenchError(f"{p}: not a JSON data file (it does not start with {{ or [); pass the data set file")
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise BenchError(f"{p}: longer than {limit >> 20} MiB without an end; pass a regular JSON file")
    return b"".join(chunks)


def _wait_for_writer(fd: int, p: str) -> None:
    poll = select.poll()
    poll.register(fd, select.POLLIN | select.POLLHUP)
    if not poll.poll(FIFO_WAIT_S * 1000):
        raise BenchError(f"{p}: a FIFO with no data after {FIFO_WAIT_S:g} s (nothing writes to it); start its writer "
                         "first, or pass the file itself")
    os.set_blocking(fd, True)


def read_bytes(path: str | Path, suite: str) -> tuple[bytes, Source]:
    """The bytes of the data file at ``path``, read exactly once, with their SHA-256."""
    p = str(path)
    if not p:
        raise BenchError(f"-suite {suite} needs -data PATH (the data set file)")
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # O_NONBLOCK: opening a FIFO must not hang
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        if isinstance(exc, ValueError):
            raise BenchError(f"{p!r}: the path contains a NUL character; pass a real file name") from None
        _os_error(p, exc, suite)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise BenchError(f"{p}: is a directory; -suite {suite} wants a JSON file")
        if stat.S_ISFIFO(mode):
            _wait_for_writer(fd, p)
        elif not stat.S_ISREG(mode):
            raise BenchError(f"{p}: is {_kind(mode)}, not a data file; pass a regular JSON file")
        size = os.fstat(fd).st_size if stat.S_ISREG(mode) else 0
        raw = _read_all(fd, p, max(size, MAX_STREAM_BYTES))  # a regular file of known size is read whole
    except OSError as exc:
        _os_error(p, exc, suite)
    finally:
        os.close(fd)
    return raw, Source(p, hashlib.sha256(raw).hexdigest(), len(raw))


def read_json_source(path: str | Path, suite: str) -> tuple[Any, Source]:
    """Parse the JSON file at ``path`` (read once; a leading UTF-8 byte order mark is skipped) and say what was read."""
    try:
        raw, source = read_bytes(path, suite)
    except MemoryError:
        raise BenchError(f"{path}: ran out of memory while reading it; free memory, raise the process's memory "
                         "limit or pass a smaller file") from None
    try:
        return orjson.loads(raw[len(_BOM):] if raw.startswith(_BOM) else raw), source
    except MemoryError:
        raise BenchError(out_of_memory(source)) from None
    except orjson.JSONDecodeError as exc:
        if "not enough memory" in str(exc).lower():  # orjson reports a failed allocation as a decode error
            raise BenchError(out_of_memory(source)) from None
        raise BenchError(f"{source.path}: not valid JSON ({exc}); is this the {suite} file?") from None


def out_of_memory(source: Source) -> str:
    return (f"{source.path}: ran out of memory while parsing it ({source.size / 1e6:.0f} MB); free memory, raise "
            "the process's memory limit or pass a smaller file")


def read_json(path: str | Path, suite: str) -> Any:
    """Parse a JSON file; a missing, unreadable, special or malformed file is a BenchError naming it."""
    return read_json_source(path, suite)[0]


# ---- checking the shape ------------------------------------------------------------------------------------------


def json_type(value: Any) -> str:
    """The JSON name of a parsed value, with its article: ``null``, ``a string``, ``an array``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return {str: "a string", list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


class At:
    """A place in a JSON file: the file and the JSON path inside it. ``at / "gold" / 0`` is ``<path>.gold[0]``.

    Cheap to make (a loader makes one per field it reads): a step only links to its parent; the path string is
    spelled out when an error needs it."""

    __slots__ = ("source", "_parent", "_key")

    def __init__(self, source: str, parent: At | None = None, key: str | int | None = None) -> None:
        self.source = source
        self._parent = parent
        self._key = key

    def __truediv__(self, key: str | int) -> At:
        return At(self.source, self, key)

    @property
    def path(self) -> str:
        steps: list[str | int] = []
        at: At | None = self
        while at is not None and at._key is not None:
            steps.append(at._key)
            at = at._parent
        out = ""
        for key in reversed(steps):
            out = f"{out}[{key}]" if isinstance(key, int) else (f"{out}.{key}" if out else key)
        return out

    def __str__(self) -> str:
        path = self.path
        return f"{self.source}: {path}" if path else self.source

    def __repr__(self) -> str:
        return f"At({str(self)!r})"

    def fail(self, what: str) -> NoReturn:
        raise BenchError(f"{self}: {what}")


def expect(cond: bool, where: object, what: str) -> None:
    """Raise a BenchError ``<where>: <what>`` unless ``cond``."""
    if not cond:
        raise BenchError(f"{where}: {what}")


_KIND_NAMES = {str: "a string", list: "an array", dict: "an object", bool: "a boolean", int: "a number",
               float: "a number"}


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(dict.fromkeys(_KIND_NAMES.get(k, k.__name__) for k in kinds))


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)


def object_at(value: Any, at: At, what: str = "an object") -> dict:
    """``value`` checked to be a JSON object."""
    if not isinstance(value, dict):
        at.fail(f"expected {what}, got {json_type(value)}")
    return value


def value_of(value: Any, kind: type | tuple[type, ...], at: At) -> Any:
    """``value`` checked to be of ``kind`` (a JSON boolean is never a number)."""
    if not _is(value, kind):
        at.fail(f"expected {_kind_name(kind)}, got {json_type(value)}")
    return value


def field_of(obj: Any, key: str, kind: type | tuple[type, ...], at: At | str, *, required: bool = True,
             default: Any = None) -> Any:
    """``obj[key]`` checked to be of ``kind``; absent or null is ``default`` unless ``required``. A plain string
    ``at`` names a place that is not a JSON path (a JSONL line ``file:3``)."""
    at = at if isinstance(at, At) else At(at)
    obj = object_at(obj, at)
    value = obj.get(key)
    if value is None:
        if required:
            (at / key).fail(f"expected {_kind_name(kind)}, got null" if key in obj
                            else f"missing (expected {_kind_name(kind)})")
        return default
    return value_of(value, kind, at / key)


def text_of(obj: Any, key: str, at: At, *, required: bool = True, default: str = "", nonblank: bool = False) -> str:
    """A string field (any characters, NUL and newlines included: it is text); ``nonblank`` refuses ``""``."""
    value = field_of(obj, key, str, at, required=required, default=default)
    if nonblank and not value.strip():
        (at / key).fail("is empty")
    return value


def check_id(value: str, at: At) -> str:
    """An id: non-empty, without control characters or line breaks (ids go into TREC files, logs and keys)."""
    if not value:
        at.fail("is an empty id")
    if bad := ID_FORBIDDEN_RE.search(value):
        at.fail(f"id {value!r} contains the control character {bad.group()!r}; ids must be printable")
    return value


def id_of(obj: Any, key: str, at: At, *, required: bool = True, default: str = "") -> str:
    """An id field (see ``check_id``); absent or null gives ``default`` when not ``required``."""
    value = field_of(obj, key, str, at, required=required, default=None)
    return default if value is None else check_id(value, at / key)


def strings_of(obj: Any, key: str, at: At, *, required: bool = True, ids: bool = False) -> tuple[str, ...]:
    """An array of strings (of ids when ``ids``), each element checked with its index."""
    values = field_of(obj, key, list, at, required=required, default=[])
    out = []
    for i, v in enumerate(values):
        v = value_of(v, str, at / key / i)
        out.append(check_id(v, at / key / i) if ids else v)
    return tuple(out)


def number_of(obj: Any, key: str, at: At, *, required: bool = True, default: float = 0.0,
              lo: float = -math.inf, hi: float = math.inf) -> float:
    """A finite number in ``[lo, hi]``."""
    value = float(field_of(obj, key, (int, float), at, required=required, default=default))
    if not (math.isfinite(value) and lo <= value <= hi):
        (at / key).fail(f"{value:g} is out of range; expected a number from {lo:g} to {hi:g}")
    return value


def scalar_text(value: Any) -> str:
    """A JSON scalar as Go's bench renders it: strings as is, numbers as their JSON text, null/absent as ""."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)
