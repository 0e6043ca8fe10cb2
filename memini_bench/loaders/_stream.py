"""Reading a large JSON array one element at a time, so a multi-GB data file is never held parsed in memory at once.

``json_array(path, suite)`` returns the top-level array's elements and a function giving the file's ``Source``
once they have been consumed. A regular file larger than ``STREAM_ABOVE`` bytes (LongMemEval-S is 277 MB, -M
2.7 GB) is streamed: read in blocks, each block hashed (SHA-256 of exactly the bytes read, a leading UTF-8 byte
order mark included, as ``read_bytes`` does) and decoded as UTF-8 by one incremental decoder call, and each element
parsed by ``json``'s C scanner (``raw_decode``) from the text holding it, reading further blocks when an element
runs past its end. Anything else (smaller files, FIFOs, pipes, special files) goes through ``read_json_source``,
so its checks and messages apply unchanged; a streamed file gets the same one-line BenchErrors (not UTF-8, not
valid JSON, not an array), ``NaN``/``Infinity`` refused as ``orjson`` refuses them.

Where the optional C scanner ``_jsonscan`` was built (setup.py; off with ``MEMINI_BENCH_KERNELS=0``), the stream
stays in bytes instead (``_ByteStream``, one buffer read into again and again): the scanner finds where each
element ends, ``orjson`` parses exactly those bytes (checking them, UTF-8 included), and a block that ends inside an
element makes the next read at least as large as what of the element is buffered, so no element is parsed twice and
a long one is scanned a bounded number of times.

``shared=KEY`` (the byte stream only): in each element that is an object holding the array ``KEY`` once (LongMemEval's
``haystack_sessions``, whose sessions recur across records), that array comes back as one ``Shared`` per element:
the SHA-256 of the element's bytes and, the first time those bytes are seen in the file, the element parsed
(``orjson`` on exactly those bytes: the value the whole record's parse gives it); a later element with the same
bytes is not parsed again (its ``value`` is ``UNPARSED``), so the caller keeps what it made of the first one by its
digest. The rest of the record is parsed with ``[]`` in the array's place; a record that is not so simple (a key
with an escape, the key twice, a malformed separator) or whose parts do not parse is parsed whole, as without
``shared``, so its errors are the same.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from memini_bench.errors import BenchError
from memini_bench.loaders._json import At, Source, _os_error, out_of_memory, read_json_source, value_of

try:
    from memini_bench.loaders import _jsonscan
except ImportError:  # not built (no C compiler at install): json's own scanner
    _jsonscan = None  # type: ignore[assignment]

STREAM_ABOVE = 64 << 20
BLOCK_BYTES = 1 << 24
_TOKEN_TAIL = 64  # a literal or number cut by the end of the text fails within this many characters of it
_WHITESPACE = " \t\n\r"
_BOM = b"\xef\xbb\xbf"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


UNPARSED = object()  # a ``Shared`` element whose bytes were seen (and parsed) earlier in the file


class Shared(NamedTuple):
    """One element of a ``shared`` array (module docstring): its bytes' SHA-256 and, at first sight, its value."""

    digest: bytes
    value: Any = UNPARSED


def json_array(path: str | Path, suite: str, shared: str = "") -> tuple[Iterable[Any], Callable[[], Source]]:
    """The elements of the JSON array in ``path`` and the file's ``Source`` (see the module docstring)."""
    p = str(path)
    try:
        info = os.stat(p) if p and "\0" not in p else None
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode) or info.st_size <= STREAM_ABOVE:
        rows, source = read_json_source(path, suite)
        value_of(rows, list, At(p))
        return rows, lambda: source
    scanner = _jsonscan if os.environ.get("MEMINI_BENCH_KERNELS", "1") != "0" else None
    stream = _ByteStream(p, suite, BLOCK_BYTES, scanner, shared) if scanner is not None else \
        _ArrayStream(p, suite, BLOCK_BYTES)
    return stream, stream.source


class _ArrayStream:
    """One pass over a regular file's top-level array; ``source()`` once the pass is complete."""

    def __init__(self, p: str, suite: str, block: int) -> None:
        self.p, self.suite, self.block = p, suite, block
        self.digest, self.size, self.done = hashlib.sha256(), 0, False
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()  # skips a leading byte order mark
        self.buf, self.pos, self.eof, self.fd = "", 0, False, -1

    def source(self) -> Source:
        if not self.done:
            raise RuntimeError("the stream was not read to its end")
        return Source(self.p, self.digest.hexdigest(), self.size)

    def __iter__(self) -> Iterator[Any]:
        try:
            self.fd = os.open(self.p, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            _os_error(self.p, exc, self.suite)
        try:
            yield from self._elements()
        finally:
            os.close(self.fd)

    def _more(self) -> bool:
        """Append the next block of text (dropping what was consumed); False at the end of the file."""
        if self.eof:
            return False
        try:
            while True:  # a block may end inside a character: read on until some text comes or the file ends
                raw = os.read(self.fd, self.block)
                self.digest.update(raw)
                self.size += len(raw)
                text = self.decoder.decode(raw, final=not raw)
                if text or not raw:
                    break
        except UnicodeDecodeError as exc:
            raise BenchError(f"{self.p}: not valid JSON (not UTF-8: {exc.reason}); is this the {self.suite} file?") \
                from None
        except OSError as exc:
            _os_error(self.p, exc, self.suite)
        if not text:
            self.eof = True
            return False
        self.buf, self.pos = self.buf[self.pos:] + text, 0
        return True

    def _peek(self) -> str:
        """The next non-whitespace character ("" at the end of the file)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def _malformed(self, why: str) -> BenchError:
        return BenchError(f"{self.p}: not valid JSON ({why}); is this the {self.suite} file?")

    def _elements(self) -> Iterator[Any]:
        first = self._peek()
        if first == "{":
            At(self.p).fail("expected an array, got an object")
        if first != "[":
            raise BenchError(f"{self.p}: not a JSON data file (it does not start with {{ or [); pass the data set "
                             "file")
        self.pos += 1
        count = 0
        while True:
            c = self._peek()
            if c == "]":
                self.pos += 1
                break
            if count:
                if c != ",":
                    raise self._malformed("expected ',' or ']' between elements")
                self.pos += 1
                c = self._peek()
                if c == "]":
                    raise self._malformed("a ',' before ']'")
            if not c:
                raise self._malformed("the file ends inside the array")
            yield self._element()
            count += 1
        if self._peek():
            raise self._malformed("extra data after the array")
        self.done = True

    def _element(self) -> Any:
        """Decode the element at the cursor, reading further blocks while it runs past the end of the text."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except ValueError as exc:
                # An element cut by the end of the text fails there (or, for a string, says so): read on.
                cut = not isinstance(exc, json.JSONDecodeError) or exc.pos >= len(self.buf) - _TOKEN_TAIL or \
                    exc.msg.startswith("Unterminated")
                if cut and self._more():
                    continue
                raise self._malformed(str(exc)) from None
            if not isinstance(value, dict | list | str) and end > len(self.buf) - _TOKEN_TAIL and self._more():
                continue  # a bare number near the end of the text may go on in the next block
            self.pos = end
            return value


class _ByteStream(_ArrayStream):
    """``_ArrayStream`` over bytes: the C scanner cuts each element, ``orjson`` parses it (module docstring)."""

    def __init__(self, p: str, suite: str, block: int, scanner: Any, shared: str = "") -> None:
        super().__init__(p, suite, block)
        self.scanner = scanner
        self.raw: bytes | memoryview = b""  # the unread bytes so far: ``buf[:filled]``
        self.started = False
        self.buf, self.filled = bytearray(), 0  # one buffer, read into again and again (no new pages per block)
        self.shared = shared.encode()
        self.seen: set[bytes] = set()  # the digests of the shared elements parsed so far

    def _more(self, want: int = 0) -> bool:
        """Append at least ``want`` (and a block's worth of) further bytes; False at the end of the file. The
        unconsumed bytes move to the front of the buffer and the file is read into the rest (a larger buffer only
        when they and the block do not fit)."""
        if self.eof:
            return False
        size, keep = max(self.block, want), self.filled - self.pos
        if keep + size > len(self.buf):
            buf = bytearray(max(keep + size, 2 * self.block))
            buf[:keep] = memoryview(self.buf)[self.pos:self.filled]
            self.buf = buf
        elif self.pos:
            view = memoryview(self.buf)
            view[:keep] = bytes(view[self.pos:self.filled])
        self.filled, self.pos = keep, 0
        try:
            got = os.readv(self.fd, [memoryview(self.buf)[keep:keep + size]])
        except OSError as exc:
            _os_error(self.p, exc, self.suite)
        chunk = memoryview(self.buf)[keep:keep + got]
        self.digest.update(chunk)
        self.size += got
        self.filled += got
        self.raw = memoryview(self.buf)[:self.filled]
        if not got:
            self.eof = True
            return False
        head = bytes(self.raw[:len(_BOM)])
        if not self.started and (len(head) >= len(_BOM) or not _BOM.startswith(head)):
            self.started = True
            if head.startswith(_BOM):
                self.pos = len(_BOM)
        return True

    def _peek(self) -> str:
        while True:
            raw = self.raw
            while self.pos < len(raw) and raw[self.pos] in b" \t\n\r":
                self.pos += 1
            if self.pos < len(raw) and self.started:
                return chr(raw[self.pos]) if raw[self.pos] < 128 else "\ufffd"
            if not self._more():
                return "" if self.pos >= len(self.raw) else chr(self.raw[self.pos])

    def _element(self) -> Any:
        while (end := self.scanner.value_end(self.raw, self.pos, self.eof)) < 0:
            self._more(len(self.raw) - self.pos)  # at least as much again as the element holds so far
        try:
            value = self._shared(end) if self.shared and self.raw[self.pos] == 0x7B else None
            if value is None:
                value = orjson.loads(memoryview(self.raw)[self.pos:end])
        except MemoryError:
            raise BenchError(out_of_memory(Source(self.p, "", os.fstat(self.fd).st_size))) from None
        except orjson.JSONDecodeError as exc:
            why = str(exc)
            if "UTF-8" in why:
                why = f"not UTF-8: {why}"
            raise self._malformed(why) from None
        self.pos = end
        return value

    def _shared(self, end: int) -> dict | None:
        """The object at the cursor with its ``shared`` array as ``Shared`` elements (module docstring); None where
        the whole object is to be parsed instead."""
        got = self.scanner.member_elements(self.raw, self.pos, end, self.shared)
        if got is None:
            return None
        start, stop, packed = got
        view = memoryview(self.raw)
        try:
            value = orjson.loads(b"".join((view[self.pos:start], b"[]", view[stop:end])))
            spans = memoryview(packed).cast("n")
            elements = []
            first: dict[bytes, Any] = {}
            for j in range(0, len(spans), 2):
                part = view[spans[j]:spans[j + 1]]
                digest = hashlib.sha256(part).digest()
                if digest in self.seen:
                    elements.append(Shared(digest))
                elif digest in first:  # twice in this record, first seen here
                    elements.append(Shared(digest))
                else:
                    first[digest] = orjson.loads(part)
                    elements.append(Shared(digest, first[digest]))
        except orjson.JSONDecodeError:
            return None  # the whole object's parse says what is wrong, as without ``shared``
        if type(value) is not dict:
            return None
        self.seen.update(first)
        value[self.shared.decode()] = elements
        return value
