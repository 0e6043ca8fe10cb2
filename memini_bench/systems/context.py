"""What a system factory receives: ``factory(ctx: SystemContext) -> System | Sequence[System]``.

- ``ctx.hybrid``: the run's ``HybridConfig`` (memini's hybrid settings, every ``-fusion``/``-pool``... flag);
- ``ctx.embed``: the run's ``EmbedSettings`` (which embedder, its model settings, the cache);
- ``ctx.reference``: the run's ``ReferenceSettings`` (the reference system's ``-ref-*`` settings);
- ``ctx.encoder``: the run's shared text encoder, built on first use with the disk cache, so every system reuses
  the same cached vectors (``ctx.encoder.documents(texts)``, ``ctx.encoder.query(text)``); None when the run has
  no embedder;
- ``ctx.shared(key, make)``: a per-run store for objects several factories share (memini's three systems share
  one backend through it);
- ``ctx.label``: a suffix for system names (VetoBench runs memini's systems once per embedder).

A factory never sees the whole run's options: what it may read is here, typed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memini_bench.embed.settings import EmbedSettings
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.reference_settings import ReferenceSettings

if TYPE_CHECKING:
    from memini_bench.embed.encoder import TextEncoder


@dataclass
class SystemContext:
    """What a system factory receives: the run's hybrid and embedding settings, its shared encoder (lazy) and a
    per-run store."""

    hybrid: HybridConfig = field(default_factory=HybridConfig)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    reference: ReferenceSettings = field(default_factory=ReferenceSettings)
    make_encoder: Callable[[], TextEncoder | None] = lambda: None
    label: str = ""  # a variant suffix for system names (VetoBench runs memini's systems once per embedder)
    _store: dict = field(default_factory=dict)
    _encoder: list = field(default_factory=list)

    @property
    def encoder(self) -> TextEncoder | None:
        """The run's text encoder, built on first use (a keyword-only run never loads a model)."""
        if not self._encoder:
            self._encoder.append(self.make_encoder())
        return self._encoder[0]

    @property
    def encoder_built(self) -> bool:
        return bool(self._encoder) and self._encoder[0] is not None

    def shared(self, key: str, make: Callable[[], object]) -> object:
        """The object stored under ``key`` for this run, made by ``make()`` the first time."""
        if key not in self._store:
            self._store[key] = make()
        return self._store[key]
