"""The QA checkpoint: an append-only JSONL file, so a killed or failed run resumes where it stopped.

Line 1 is a header ``{"qa_checkpoint": 1, "identity": {...}}`` (the run's settings, models and prompt fingerprint);
every further line is one graded record, keyed by ``key(record)`` (QA: ``(arm, id, run)``). Each record is
written with one ``write`` of the whole line, flushed and ``fsync``-ed before the next, under a lock (the workers
are threads).

Resume reads the file back: a header with another identity is an error (another run's answers are never mixed in);
an unreadable *last* line is a write torn by a kill and is dropped (the file is cut back to the last complete line,
so the next record starts on a fresh line); an unreadable line before it is an error naming the line. A missing
or empty file starts a new checkpoint. ``path=None`` keeps everything in memory (``-no-write``).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

import orjson

from memini_bench.core.inputs import read_regular
from memini_bench.errors import BenchError
from memini_bench.results.identity import NO_IDENTITY

VERSION = 1
R = TypeVar("R")

MAX_CHECKPOINT_BYTES = 16 << 30  # far above any run: a bound, so a device or endless file is refused


def header_identity(path: Path) -> object:
    """The identity line 1 of the checkpoint at ``path`` records (``results.identity.IdentityReader``);
    ``NO_IDENTITY`` when it is no regular file, or its first line is no checkpoint header."""
    if not path.is_file():
        return NO_IDENTITY
    try:
        with open(path, "rb") as fh:
            header = orjson.loads(fh.readline())
    except (OSError, ValueError):
        return NO_IDENTITY
    if not isinstance(header, dict) or header.get("qa_checkpoint") != VERSION:
        return NO_IDENTITY
    return header["identity"] if isinstance(header.get("identity"), dict) else NO_IDENTITY


class Checkpoint(Generic[R]):
    """Graded records of one QA run (see the module docstring); ``decode`` turns a JSON object into a record,
    ``encode`` a record into one, ``key`` names a record."""

    def __init__(self, path: Path | None, identity: dict, *, decode: Callable[[dict], R],
                 encode: Callable[[R], dict], key: Callable[[R], tuple]) -> None:
        self.path = path
        self.identity = identity
        self._decode, self._encode, self._key = decode, encode, key
        self._lock = threading.Lock()
        self._fh = None
        self.records: dict[tuple, R] = {}
        self.torn = False  # whether resume dropped a torn last line

    def open(self) -> dict[tuple, R]:
        """Read what an earlier run graded (see the module docstring) and open the file for appending."""
        if self.path is None:
            return dict(self.records)
        self._start(self._load())
        return dict(self.records)

    def read(self) -> dict[tuple, R]:
        """What an earlier run graded, without opening the file for writing (nothing is cut or written)."""
        if self.path is not None:
            self._load()
        return dict(self.records)

    def _load(self) -> int:
        """Parse the file into ``records``; the byte length of its complete lines (where appending resumes)."""
        assert self.path is not None
        raw = read_regular(self.path, "-qa-checkpoint", limit=MAX_CHECKPOINT_BYTES) if self.path.exists() else b""
        lines = raw.split(b"\n")
        complete = lines[:-1]  # text after the last newline is a torn write, or nothing
        self.torn = bool(lines[-1].strip())
        keep = len(raw) - len(lines[-1])
        if complete:
            header = self._parse(complete[0], 1, last=len(complete) == 1)
            if header is None:  # the header itself was torn: nothing was graded
                complete, keep, self.torn = [], 0, True
            else:
                self._check_header(header)
        for number, line in enumerate(complete[1:], start=2):
            obj = self._parse(line, number, last=number == len(complete))
            if obj is None:
                keep -= len(line) + 1
                self.torn = True
                continue
            record = self._decode(obj)
            self.records[self._key(record)] = record
        return keep

    def _parse(self, line: bytes, number: int, *, last: bool) -> dict | None:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return obj
        if last:
            return None
        raise BenchError(f"{self.path}: line {number} is not a checkpoint record; the file is damaged: delete it "
                         "(its questions are graded again) or give -qa-checkpoint another path")

    def _check_header(self, header: dict) -> None:
        if header.get("qa_checkpoint") != VERSION or not isinstance(header.get("identity"), dict):
            raise BenchError(f"{self.path}: not a QA checkpoint (no header line); give -qa-checkpoint another path")
        old = header["identity"]
        if old != self.identity:
            differing = sorted(k for k in set(old) | set(self.identity) if old.get(k) != self.identity.get(k))
            raise BenchError(f"{self.path}: a checkpoint of a QA run with other settings ({', '.join(differing)}); "
                             "delete it to start over, or give -qa-checkpoint another path (or -name LABEL)")

    def _start(self, keep: int) -> None:
        assert self.path is not None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise OSError(0, "not a regular file")
            self._fh = os.fdopen(fd, "ab")  # held open for the whole run, closed by close()
            if keep < self._fh.tell():
                self._fh.truncate(keep)
                self._fh.seek(keep)
            if keep == 0:
                self._write({"qa_checkpoint": VERSION, "identity": self.identity})
        except OSError as exc:
            raise BenchError(f"{self.path}: cannot write the checkpoint ({exc.strerror or exc}); give "
                             "-qa-checkpoint another path") from None

    def _write(self, obj: dict) -> None:
        assert self._fh is not None
        self._fh.write(orjson.dumps(obj) + b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def append(self, record: R) -> None:
        """Keep ``record`` (and make it durable before returning, when there is a file)."""
        with self._lock:
            self.records[self._key(record)] = record
            if self._fh is not None:
                try:
                    self._write(self._encode(record))
                except OSError as exc:
                    raise BenchError(f"{self.path}: cannot append to the checkpoint ({exc.strerror or exc}); "
                                     "free some space and rerun to resume") from None

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
