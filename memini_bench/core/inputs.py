"""Reading a small input file a flag names (a results file, a price table, human labels, prompts, a checkpoint):
bounded, never blocking.

``read_regular(path, what, limit)`` opens the path without blocking (``O_NONBLOCK``: opening a FIFO returns at
once), refuses before reading anything that is not a regular file (a folder, a FIFO, a character or block device
such as ``/dev/zero``, a socket) and a file larger than ``limit`` bytes, then reads at most ``limit + 1`` bytes (a
file that grows past the limit while read is refused too). Every fault is one BenchError naming the flag and path.
Data sets go through the loaders' own reader instead (it also reads a FIFO once, with a wait and a cap). With
``fifo_wait`` a FIFO is read too (``-compare <(...)``): its writer must send something within ``fifo_wait``
seconds, and it is read once, up to ``limit``.
"""

from __future__ import annotations

import os
import select
import stat
from pathlib import Path

from memini_bench.errors import BenchError

#: The default bound of an input file: far above any results file, price table or label file.
MAX_INPUT_BYTES = 1 << 30


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | Path, what: str = "", *, limit: int = MAX_INPUT_BYTES,
                 fifo_wait: float | None = None) -> bytes:
    """The bytes of the regular file ``path`` (module docstring); ``what`` (a flag) prefixes the error line."""
    name = f"{what} {path}" if what else str(path)
    try:
        mode = os.stat(path).st_mode  # named before opening: a socket cannot be opened at all
        fifo = stat.S_ISFIFO(mode) and fifo_wait is not None
        if not stat.S_ISREG(mode) and not fifo:
            raise BenchError(f"{name}: is {_kind(mode)}, not a regular file; give a file")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except ValueError:
        raise BenchError(f"{name}: the path contains a NUL character; give a real file name") from None
    except OSError as exc:
        raise BenchError(f"{name}: cannot read it ({exc.strerror or exc}); check the path") from None
    try:
        st = os.fstat(fd)
        if fifo and stat.S_ISFIFO(st.st_mode):
            poll = select.poll()
            poll.register(fd, select.POLLIN | select.POLLHUP)
            if not poll.poll(int((fifo_wait or 0) * 1000)):
                raise BenchError(f"{name}: a FIFO with no data after {fifo_wait:g} s (nothing writes to it); start "
                                 "its writer first, or give the file itself")
            os.set_blocking(fd, True)
        elif not stat.S_ISREG(st.st_mode):
            raise BenchError(f"{name}: is {_kind(st.st_mode)}, not a regular file; give a file")
        if st.st_size > limit:
            raise BenchError(f"{name}: {st.st_size:,} bytes, more than the {limit:,} this input may have; give the "
                             "right file")
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise BenchError(f"{name}: grew past the {limit:,} bytes this input may have while read; give a "
                                 "file that is not being written")
        return b"".join(chunks)
    except OSError as exc:
        raise BenchError(f"{name}: cannot read it ({exc.strerror or exc}); check the path") from None
    finally:
        os.close(fd)


def is_regular(path: str | Path) -> bool:
    """Whether ``path`` is a regular file (following links, never opening it)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
