"""Downloading a registered file: resumable, bounded in time, verified, placed atomically.

``fetch_file(f, dest)`` writes the bytes into ``<dest>.part`` beside ``dest``. A ``.part`` already there (an earlier
transfer that was cut) is resumed with ``Range: bytes=<have>-``: a ``206`` whose ``Content-Range`` starts at
``have`` is appended; a ``200`` (the server ignores ranges) starts over; a ``416`` means nothing is left to send.
Each socket operation (connect, every read) waits at most ``timeout`` seconds, so a stalled server is a cut
transfer, not a hang. A cut transfer (timeout, reset, a reply shorter than its ``Content-Length``, HTTP 408/429/5xx)
is tried again from where it stopped, up to ``attempts`` rounds over the file's mirrors; a 404 or other refusal
moves to the next mirror. When every round fails the error names the URLs and the last fault and keeps the
``.part`` so the same command resumes.

When the transfer ends the whole ``.part`` is checked: its size against the registered size and its SHA-256 (or,
for files registered by git blob id only, ``sha1(b"blob <size>\\0" + bytes)``) against the registered checksum. A
mismatch, or a server sending more bytes than registered, deletes the ``.part``: a wrong file is refused and leaves
nothing. A good one is fsynced and renamed onto ``dest`` (``os.replace``: a reader sees the old state or the whole
verified file, never a part).

Progress goes to stderr: a line rewritten in place on a terminal (at most every 0.5 s), else one line per tenth.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from memini_bench.clients.http import RETRY_STATUS
from memini_bench.data.registry import DataFile
from memini_bench.errors import BenchError

CHUNK = 1 << 16
USER_AGENT = "memini-bench-data/1"
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


class _Cut(Exception):
    """A transfer that stopped early: resume it."""


class _Refused(Exception):
    """This URL will not serve the file (404, 403...): try the next mirror."""


class Progress:
    """Bytes done of a total (None: unknown), reported on ``stream``."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.last = 0.0
        self.step = -1

    def __call__(self, done: int, total: int | None, final: bool = False) -> None:
        now = time.monotonic()
        if total:
            step = min(10, done * 10 // total)
            text = f"{self.label}: {done / 1e6:,.1f} of {total / 1e6:,.1f} MB ({done / total:.0%})"
        else:
            step = done >> 24  # every 16 MiB when the size is unknown
            text = f"{self.label}: {done / 1e6:,.1f} MB"
        if self.tty:
            if final or now - self.last >= 0.5:
                self.stream.write("\r" + text + ("\n" if final else ""))
                self.last = now
        elif final or step != self.step:
            self.stream.write(text + "\n")
        self.step = step
        self.stream.flush()


def file_digest(path: Path, git: bool = False) -> str:
    """SHA-256 of a file's bytes, or its git blob id (``git``)."""
    h = hashlib.sha1(b"blob %d\0" % path.stat().st_size) if git else hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def mismatch(f: DataFile, path: Path) -> str:
    """Why ``path`` is not the registered file ("" when it is)."""
    size = path.stat().st_size
    if f.size is not None and size != f.size:
        return f"{size:,} bytes, not the registered {f.size:,}"
    if f.sha256:
        got = file_digest(path)
        return "" if got == f.sha256 else f"sha256 {got}, not the registered {f.sha256}"
    got = file_digest(path, git=True)
    return "" if got == f.git_sha1 else f"git blob {got}, not the registered {f.git_sha1}"


def _open(url: str, have: int, timeout: float):
    import urllib.error
    import urllib.request

    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and have:
            return None  # nothing left to send: the part is whole (or too long; the check decides)
        if exc.code in RETRY_STATUS:
            raise _Cut(f"HTTP {exc.code}") from None
        raise _Refused(f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Cut(f"cannot connect ({reason})") from None


def _transfer(url: str, part: Path, f: DataFile, timeout: float, report: Callable) -> None:
    """Bring ``part`` to the end of ``url``'s bytes, resuming what it holds."""
    have = part.stat().st_size if part.exists() else 0
    if f.size is not None and have >= f.size:
        return  # complete (or too long): the check decides
    resp = _open(url, have, timeout)
    if resp is None:
        return
    with resp:
        if have and resp.status == 206:
            m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", ""))
            if not m or int(m.group(1)) != have:
                part.unlink(missing_ok=True)  # another range than asked: start over next time
                raise _Cut(f"the server answered range {resp.headers.get('Content-Range')!r} to bytes={have}-")
            mode = "ab"
        else:
            mode, have = "wb", 0  # a whole reply: the server ignores Range
        length = resp.headers.get("Content-Length")
        expected = have + int(length) if length and length.isdigit() else None
        total = f.size if f.size is not None else expected
        with part.open(mode) as out:
            while True:
                try:
                    chunk = resp.read1(CHUNK)  # what has arrived: a stall keeps every byte received
                except (TimeoutError, OSError, ValueError) as exc:  # ValueError: http.client's IncompleteRead family
                    raise _Cut(f"the transfer stopped after {have:,} bytes ({type(exc).__name__}: {exc})") from None
                if not chunk:
                    break
                out.write(chunk)
                have += len(chunk)
                if f.size is not None and have > f.size:
                    out.close()
                    part.unlink(missing_ok=True)
                    raise BenchError(f"{url}: sent more than the registered {f.size:,} bytes: refused, nothing kept")
                report(have, total)
            out.flush()
            os.fsync(out.fileno())
    if expected is not None and have < expected:
        raise _Cut(f"the connection closed after {have:,} of {expected:,} bytes")


def _place(part: Path, dest: Path, f: DataFile, label: str) -> None:
    why = mismatch(f, part)
    if why:
        part.unlink(missing_ok=True)
        raise BenchError(f"{label}: the downloaded file has {why}: refused, nothing kept (the server sent other "
                         "bytes than the registered file)")
    os.replace(part, dest)
    fd = os.open(dest.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fetch_file(f: DataFile, dest: Path, *, timeout: float = 30.0, attempts: int = 4,
               report: Callable | None = None, label: str = "") -> None:
    """Download ``f`` onto ``dest`` (module docstring); a BenchError when no mirror yields the registered file."""
    label = label or f.path
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    report = report or Progress(label)
    faults: list[str] = []
    for _ in range(attempts):
        refused = 0
        for url in f.urls:
            try:
                _transfer(url, part, f, timeout, report)
            except _Refused as exc:
                refused += 1
                faults.append(f"{url}: {exc}")
                continue
            except _Cut as exc:
                faults.append(f"{url}: {exc}")
                continue
            report(part.stat().st_size, f.size, final=True)
            _place(part, dest, f, label)
            return
        if refused == len(f.urls):
            break  # every mirror refuses: retrying will not help
    kept = part.stat().st_size if part.exists() else 0
    resume = f"; {kept:,} bytes kept in {part}: the same command resumes" if kept else ""
    raise BenchError(f"{label}: could not fetch it ({len(faults)} tries; last: {faults[-1]}){resume}")
