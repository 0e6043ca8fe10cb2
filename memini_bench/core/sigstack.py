"""The calling thread's alternate signal stack, kept as it was around native code that changes it.

A native library can point the thread's alternate signal stack (``sigaltstack``) at memory it frees later:
OpenVINO's CPU plugin does so on the thread that compiles or runs a model (seen here: an 11,568-byte stack, no
longer mapped once the model is gone). CPython installs its signal handlers with ``SA_ONSTACK``, so the next signal
that thread takes (``-recall-timeout``'s ``SIGALRM``, a Ctrl-C, a SIGTERM) is delivered onto unmapped memory and
the process dies of SIGSEGV instead of running the handler. ``kept()`` puts back, when its block ends, the
alternate stack the thread had when the block began (Linux; elsewhere it does nothing). The native call itself is
unchanged: the library keeps whatever stack it set while its own code runs.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterator
from contextlib import contextmanager

SS_ONSTACK = 1  # the thread is running on its alternate stack now: it cannot be changed


class _Stack(ctypes.Structure):
    """Linux's ``stack_t``: ``{void *ss_sp; int ss_flags; size_t ss_size}``."""

    _fields_ = [("ss_sp", ctypes.c_void_p), ("ss_flags", ctypes.c_int), ("ss_size", ctypes.c_size_t)]


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def current() -> tuple[int | None, int, int] | None:
    """The thread's alternate signal stack as (address, flags, size); None where it cannot be read."""
    if _LIBC is None:
        return None
    stack = _Stack()
    if _LIBC.sigaltstack(None, ctypes.byref(stack)) != 0:
        return None
    return stack.ss_sp, stack.ss_flags, stack.ss_size


@contextmanager
def kept() -> Iterator[None]:
    """Run the block, then give the thread back the alternate signal stack it had before (module docstring)."""
    before = current()
    try:
        yield
    finally:
        if before is not None and _LIBC is not None and current() != before and not before[1] & SS_ONSTACK:
            _LIBC.sigaltstack(ctypes.byref(_Stack(*before)), None)
