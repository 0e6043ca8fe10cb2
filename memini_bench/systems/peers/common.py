"""What the peer adapters share: the items by group, the run's encoder, a private temp folder, versions, hits.

``PeerSystem`` is the base of every adapter here: it keeps the ingested items and their groups, embeds every query
in ``prepare`` through the shared encoder (so recall latency measures retrieval), owns a temporary folder made on
first use and removed in ``close()`` (a full or unwritable folder, while it is made or while a library writes its
store there inside ``store_writes()``, is one line naming the folder and the fix), and turns (item index, score)
pairs into ``Hit``s, dropping any item of another group a library let through (counted in
``describe()["dropped_other_group"]``; 0 on every run so far).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import importlib.metadata
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.systems.context import SystemContext


def library_version(distribution: str) -> str:
    """The installed version of a distribution (``bm25s``, ``sqlite-vec``), or "" when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def require_encoder(ctx: SystemContext, system: str) -> TextEncoder:
    """The run's shared encoder; a system that embeds cannot run without one."""
    encoder = ctx.encoder
    if encoder is None:
        raise BenchError(f"-systems {system}: needs an embedder; give -embedder (e.g. minilm or hash)")
    return encoder


#: What a library's error says when its store folder is full or unwritable (sqlite, Lance, Chroma, the OS).
FULL_OR_UNWRITABLE = ("no space left", "disk is full", "file too large", "permission denied", "read-only file system",
                      "readonly database", "quota exceeded", "disk quota", "disk i/o error")
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EACCES, errno.EROFS, errno.EPERM}


def store_failure(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says the store's folder is full or unwritable."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
            return True
        if any(phrase in str(exc).lower() for phrase in FULL_OR_UNWRITABLE):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def folder_fix(folder: object, exc: BaseException) -> str:
    reason = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
              if str(exc) else type(exc).__name__)
    return (f"its store folder {str(folder)!r} is full or not writable ({reason}); free space there or set TMPDIR "
            "to a writable folder with room")


class GroupIndex:
    """Each group's item indices, in item order."""

    def __init__(self, groups: Sequence[str]) -> None:
        members: dict[str, list[int]] = {}
        for i, group in enumerate(groups):
            members.setdefault(group, []).append(i)
        self.members = {g: np.asarray(ix, dtype=np.int64) for g, ix in members.items()}

    def of(self, group: str) -> np.ndarray:
        """The group's item indices (empty for a group with no items)."""
        return self.members.get(group, np.zeros(0, dtype=np.int64))


class PeerSystem:
    """The shared part of an adapter (see the module docstring); subclasses implement ``ingest`` and ``recall``."""

    def __init__(self, name: str, encoder: TextEncoder | None = None) -> None:
        self.name = name
        self.encoder = encoder
        self.items: tuple[Item, ...] = ()
        self.groups = GroupIndex(())
        self.dropped_other_group = 0
        self._workdir: Path | None = None

    def keep_items(self, items: Sequence[Item]) -> None:
        self.items = tuple(items)
        self.groups = GroupIndex([it.group for it in self.items])

    def add_items(self, items: Sequence[Item]) -> list[int]:
        """Writes over time (docs/temporal.md): append the items never kept before (an id already kept, or given
        twice, is skipped) and return their indices in ``self.items`` (a library's row numbers)."""
        known = getattr(self, "_kept_ids", None)
        if known is None or len(known) != len(self.items):
            known = self._kept_ids = {it.id for it in self.items}
        new = list({it.id: it for it in items if it.id not in known}.values())
        start = len(self.items)
        if new:
            self.keep_items(self.items + tuple(new))
            known.update(it.id for it in new)
        return list(range(start, start + len(new)))

    def workdir(self) -> Path:
        """This system's private temporary folder (made on first use, removed by ``close``)."""
        if self._workdir is None:
            safe = "".join(c if c.isalnum() else "-" for c in self.name)
            try:
                self._workdir = Path(tempfile.mkdtemp(prefix=f"memini-bench-{safe}-"))
            except OSError as exc:
                raise BenchError(f"{self.name}: {folder_fix(tempfile.gettempdir(), exc)}") from None
        return self._workdir

    @contextlib.contextmanager
    def store_writes(self) -> Iterator[None]:
        """The block writes the library's store into ``workdir()``: a full or unwritable folder is one line naming
        it (``store_failure``); any other error passes through."""
        try:
            yield
        except BenchError:
            raise
        except Exception as exc:
            if store_failure(exc):
                raise BenchError(f"{self.name}: {folder_fix(self._workdir or tempfile.gettempdir(), exc)}") from None
            raise

    def prepare(self, queries: Sequence[str]) -> None:
        """Embed every query at once (later ``encoder.query`` calls are memo look-ups)."""
        if self.encoder is not None:
            self.encoder.queries(queries)

    def close(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def hits(self, group: str, indices: Sequence[int], scores: Sequence[float], k: int) -> list[Hit]:
        """At most ``k`` hits of ``group`` for item ``indices`` in rank order; another group's item is dropped."""
        out: list[Hit] = []
        for i, s in zip(indices, scores, strict=True):
            item = self.items[int(i)]
            if item.group != group:
                self.dropped_other_group += 1
                continue
            out.append(Hit((item.id,), float(s), item.content))
            if len(out) == k:
                break
        return out



class AsyncPeerSystem(PeerSystem):
    """An adapter over an asyncio library: ``_run`` drives one of its coroutines to completion on the system's own
    event loop, made on first use and closed with the system (after the subclass's ``close`` has used it)."""

    _loop: asyncio.AbstractEventLoop | None = None

    def _run(self, coroutine):
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        super().close()
