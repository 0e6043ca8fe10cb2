"""Reading a large JSON array one element at a time, so a multi-GB data file is never held parsed in memory at once.

``json_array(path, suite)`` returns the top-level array's elements and a function giving the file's ``Source``
once they have been consumed. A regular file larger than ``STREAM_ABOVE`` bytes (LongMemEval-S is 277 MB, -M
2.7 GB) is streamed: read in blocks, each block hashed (SHA-256 of exactly the bytes read, a leading UTF-8 byte
order mark included, as ``read_bytes`` does) and decoded as UTF-8 by one incremental decoder call, and each element
parsed by ``json``'s C scanner (``raw_decode``) from the text holding it, reading further blocks when an element
runs past its end. Anything else (smaller files, FIFOs, pipes, special files) goes through ``read_json_source``,
so its checks and messages apply unchanged; a streamed file gets the same one-line BenchErrors (not UTF-8, not
valid JSON, not an array), ``NaN``/``Infinity`` refused as ``orjson`` refuses them.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from memini_bench.errors import BenchError
from memini_bench.loaders._json import At, Source, _os_error, read_json_source, value_of

STREAM_ABOVE = 64 << 20
BLOCK_BYTES = 1 << 24
_TOKEN_TAIL = 64  # a literal or number cut by the end of the text fails within this many characters of it
_WHITESPACE = " \t\n\r"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def json_array(path: str | Path, suite: str) -> tuple[Iterable[Any], Callable[[], Source]]:
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
    stream = _ArrayStream(p, suite, BLOCK_BYTES)
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
