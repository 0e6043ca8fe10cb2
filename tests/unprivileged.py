"""``as_unprivileged(fn)``: call ``fn`` where file permissions apply, for tests of read-only and unreadable paths.

Root ignores permission bits, so as root ``fn`` runs in a forked child that drops to uid/gid 65534 (nobody) first;
its result (or the text of its exception, with the exception's type name) comes back through a pipe. Not root:
``fn`` runs here. Only modules already imported are usable in the child (it may not read /root), so import what
``fn`` needs before calling this.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable

NOBODY = 65534


def as_unprivileged(fn: Callable[[], object]) -> tuple[str, object]:
    """``("ok", result)`` or ``(exception type name, message)`` of ``fn()`` run without root's privileges."""
    if os.geteuid() != 0:
        return _outcome(fn)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read_end)
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            outcome = _outcome(fn)
            with os.fdopen(write_end, "wb") as fh:
                fh.write(pickle.dumps(outcome))
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return pickle.loads(data) if data else ("ChildDied", "the unprivileged child wrote nothing")


def _outcome(fn: Callable[[], object]) -> tuple[str, object]:
    try:
        return "ok", fn()
    except BaseException as exc:  # noqa: BLE001 - the caller asserts on the type name
        return type(exc).__name__, str(exc)
