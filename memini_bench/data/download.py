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

Bounds. Every file has a size bound: its registered size, or ``max_bytes`` (``DEFAULT_MAX_BYTES``) when the
catalog gives none; a reply announcing more, or sending more, is refused and leaves nothing. Every file has an
overall ``deadline`` (seconds from its first request, over every attempt and mirror; ``DEFAULT_DEADLINE_S``): a
server that keeps sending a trickle is cut when it passes (within one ``timeout`` of it), the ``.part`` kept for
the same command to resume. ``mirror`` (``-mirror URL`` or ``$MEMINI_BENCH_DATA_MIRROR``) replaces every URL of the
catalog by ``<mirror>/<host>/<path>`` (the layout ``wget -x`` makes of a copy), still checked by size and checksum.

Files. Nothing is written through a link: a ``.part`` or destination that is a symbolic link, a folder or a special
file is refused before any request (the ``.part`` is opened with ``O_NOFOLLOW``). Folders are made only when the
first byte arrives; after a failure that keeps no ``.part`` (a refusal, a wrong file, a cap, a write fault such as a
full disk or a file-size limit) the ``.part`` and every folder this call made are removed. Every file-system fault
is one BenchError line naming the path.

Progress goes to stderr: a line rewritten in place on a terminal (at most every 0.5 s), else one line per tenth.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from memini_bench.clients.http import RETRY_STATUS
from memini_bench.core.table import fmt_pct
from memini_bench.data.registry import DataFile
from memini_bench.errors import BenchError

CHUNK = 1 << 16
USER_AGENT = "memini-bench-data/1"
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
#: The size bound of a file the catalog registers without a size (the largest registered file is 2.7 GB).
DEFAULT_MAX_BYTES = 8 * 10**9
#: Seconds one file may take, every attempt and mirror together.
DEFAULT_DEADLINE_S = 6 * 3600.0
MIRROR_ENV = "MEMINI_BENCH_DATA_MIRROR"


class _Cut(Exception):
    """A transfer that stopped early: resume it."""


class _Fatal(BenchError):
    """A fault that no retry mends (a cap, a deadline, a write fault, a wrong file)."""


def mirrored(url: str, mirror: str) -> str:
    """``url`` under ``mirror``: ``<mirror>/<host>/<path>[?query]`` (module docstring); ``mirror`` empty: ``url``."""
    if not mirror:
        return url
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def check_mirror(mirror: str, flag: str = "-mirror") -> str:
    """``mirror`` when it is an http(s) URL with a host (or empty), else a one-line BenchError."""
    from urllib.parse import urlsplit

    if mirror and (urlsplit(mirror).scheme not in ("http", "https") or not urlsplit(mirror).netloc):
        raise BenchError(f"{flag} {mirror!r}: give an http:// or https:// URL of a copy of the data hosts "
                         "(<mirror>/<host>/<path>), e.g. http://127.0.0.1:8000/data")
    return mirror


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
            text = f"{self.label}: {done / 1e6:,.1f} of {total / 1e6:,.1f} MB ({fmt_pct(done / total, 0)})"
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


def _refuse_special(path: Path, what: str) -> None:
    """A BenchError when ``path`` exists as a link, a folder or anything but a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BenchError(f"{path}: cannot be used as the {what} ({exc.strerror or exc}); check $MEMINI_BENCH_DATA "
                         "or the data folder's permissions") from None
    if stat.S_ISLNK(mode):
        raise BenchError(f"{path}: the {what} is a symbolic link, which data fetch does not write through; remove it")
    if stat.S_ISDIR(mode):
        raise BenchError(f"{path}: a folder is where the {what} goes; move it away")
    if not stat.S_ISREG(mode):
        raise BenchError(f"{path}: the {what} is not a regular file (a device, FIFO or socket); remove it")


def _open_part(part: Path, append: bool) -> int:
    """The ``.part`` opened for writing without following a link (its folder made first)."""
    part.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    try:
        fd = os.open(part, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Fatal(f"{part}: the .part is a symbolic link, which data fetch does not write through; "
                         "remove it") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _Fatal(f"{part}: the .part is not a regular file; remove it")
    return fd


def _write_fault(part: Path, exc: OSError) -> _Fatal:
    part.unlink(missing_ok=True)
    return _Fatal(f"{part}: cannot write ({exc.strerror or exc}); nothing kept: free space, lift the file-size "
                  "limit or point $MEMINI_BENCH_DATA at another folder")


def _transfer(url: str, part: Path, f: DataFile, timeout: float, report: Callable, *, cap: int,
              end: float) -> None:
    """Bring ``part`` to the end of ``url``'s bytes, resuming what it holds, within ``cap`` bytes and before the
    monotonic time ``end``."""
    have = part.stat().st_size if part.exists() else 0
    if have >= cap:
        return  # complete (or too long): the check decides
    left = end - time.monotonic()
    if left <= 0:
        raise _Deadline()
    resp = _open(url, have, min(timeout, left))
    if resp is None:
        return
    with resp:
        if have and resp.status == 206:
            m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", ""))
            if not m or int(m.group(1)) != have:
                part.unlink(missing_ok=True)  # another range than asked: start over next time
                raise _Cut(f"the server answered range {resp.headers.get('Content-Range')!r} to bytes={have}-")
            append = True
        else:
            append, have = False, 0  # a whole reply: the server ignores Range
        length = resp.headers.get("Content-Length")
        expected = have + int(length) if length and length.isdigit() else None
        if expected is not None and expected > cap:
            part.unlink(missing_ok=True)
            raise _Fatal(f"{url}: announces {expected:,} bytes, more than the {_bound(f, cap)}: refused, nothing kept")
        total = f.size if f.size is not None else expected
        fd = _open_part(part, append)
        with os.fdopen(fd, "ab" if append else "wb") as out:
            while True:
                if time.monotonic() > end:
                    raise _Deadline()
                try:
                    chunk = resp.read1(CHUNK)  # what has arrived: a stall keeps every byte received
                except (TimeoutError, OSError, ValueError) as exc:  # ValueError: http.client's IncompleteRead family
                    raise _Cut(f"the transfer stopped after {have:,} bytes ({type(exc).__name__}: {exc})") from None
                if not chunk:
                    break
                if have + len(chunk) > cap:
                    out.close()
                    part.unlink(missing_ok=True)
                    raise _Fatal(f"{url}: sent more than the {_bound(f, cap)}: refused, nothing kept")
                try:
                    out.write(chunk)
                    out.flush()
                except OSError as exc:
                    raise _write_fault(part, exc) from None
                have += len(chunk)
                report(have, total)
            try:
                os.fsync(out.fileno())
            except OSError as exc:
                raise _write_fault(part, exc) from None
    if expected is not None and have < expected:
        raise _Cut(f"the connection closed after {have:,} of {expected:,} bytes")


class _Deadline(Exception):
    """The file's deadline passed."""


def _bound(f: DataFile, cap: int) -> str:
    return f"registered {cap:,} bytes" if f.size is not None else f"size cap of {cap:,} bytes (-max-bytes)"


def _place(part: Path, dest: Path, f: DataFile, label: str) -> None:
    why = mismatch(f, part)
    if why:
        part.unlink(missing_ok=True)
        raise _Fatal(f"{label}: the downloaded file has {why}: refused, nothing kept (the server sent other "
                     "bytes than the registered file)")
    os.replace(part, dest)
    fd = os.open(dest.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _first_missing(folder: Path) -> Path | None:
    """The outermost ancestor of ``folder`` (itself included) that does not exist: what ``mkdir(parents=True)``
    would make first."""
    missing = None
    for p in (folder, *folder.parents):
        if p.exists():
            break
        missing = p
    return missing


def _remove_made(folder: Path, top: Path | None) -> None:
    """Remove ``folder`` and its parents up to ``top`` (the first one this call made) while they are empty."""
    if top is None:
        return
    for p in (folder, *folder.parents):
        try:
            p.rmdir()
        except OSError:
            return
        if p == top:
            return


def fetch_file(f: DataFile, dest: Path, *, timeout: float = 30.0, attempts: int = 4,
               report: Callable | None = None, label: str = "", deadline: float = DEFAULT_DEADLINE_S,
               max_bytes: int = DEFAULT_MAX_BYTES, mirror: str = "") -> None:
    """Download ``f`` onto ``dest`` (module docstring); a BenchError when no mirror yields the registered file."""
    label = label or f.path
    part = dest.with_name(dest.name + ".part")
    _refuse_special(dest, "destination")
    _refuse_special(part, ".part")
    top = _first_missing(dest.parent)
    try:
        _fetch(f, dest, part, timeout=timeout, attempts=attempts, report=report or Progress(label), label=label,
               deadline=deadline, cap=f.size if f.size is not None else max_bytes, mirror=mirror)
    except BaseException as exc:
        if not (part.exists() and part.stat().st_size):
            part.unlink(missing_ok=True)
            _remove_made(dest.parent, top)
        if isinstance(exc, OSError):
            raise BenchError(f"{label}: {exc.filename or dest}: {exc.strerror or exc}; check $MEMINI_BENCH_DATA "
                             "and the data folder's permissions") from None
        raise


def _fetch(f: DataFile, dest: Path, part: Path, *, timeout: float, attempts: int, report: Callable, label: str,
           deadline: float, cap: int, mirror: str) -> None:
    urls = tuple(mirrored(u, mirror) for u in f.urls)
    end = time.monotonic() + deadline
    faults: list[str] = []
    try:
        for _ in range(attempts):
            refused = 0
            for url in urls:
                try:
                    _transfer(url, part, f, timeout, report, cap=cap, end=end)
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
            if refused == len(urls):
                break  # every mirror refuses: retrying will not help
    except _Deadline:
        faults.append(f"not done within the deadline of {deadline:g} s (-deadline)")
    kept = part.stat().st_size if part.exists() else 0
    resume = f"; {kept:,} bytes kept in {part}: the same command resumes" if kept else "; nothing kept"
    raise BenchError(f"{label}: could not fetch it ({len(faults)} tries; last: {faults[-1]}){resume}")
