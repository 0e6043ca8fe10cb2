"""What the peer adapters share: the items by group, the run's encoder, a private temp folder, versions, hits.

``PeerSystem`` is the base of every adapter here: it keeps the ingested items and their groups, embeds every query
in ``prepare`` through the shared encoder (so recall latency measures retrieval), owns a temporary folder made on
first use and removed in ``close()``, and turns (item index, score) pairs into ``Hit``s, dropping any item of
another group a library let through (counted in ``describe()["dropped_other_group"]``; 0 on every run so far).
"""

from __future__ import annotations

import importlib.metadata
import shutil
import tempfile
from collections.abc import Sequence
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

    def workdir(self) -> Path:
        """This system's private temporary folder (made on first use, removed by ``close``)."""
        if self._workdir is None:
            safe = "".join(c if c.isalnum() else "-" for c in self.name)
            self._workdir = Path(tempfile.mkdtemp(prefix=f"memini-bench-{safe}-"))
        return self._workdir

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
