"""Small fixtures for the peer adapters' tests: an embedder that returns hand-chosen vectors, a context around it,
and the run loop the harness uses (ingest, prepare, recall, close)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from cli_opts import cli_options

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext


class TableEmbedder:
    """Vectors looked up by text (every text a test embeds must be in the table)."""

    max_chars = None

    def __init__(self, table: Mapping[str, Sequence[float]]) -> None:
        self.table = {text: np.asarray(v, dtype=np.float32) for text, v in table.items()}
        self.dims = len(next(iter(self.table.values())))
        self.identity = f"table-{self.dims}d"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, self.dims), np.float32)


def table_context(table: Mapping[str, Sequence[float]] | None = None, **options: object) -> SystemContext:
    """A SystemContext whose encoder embeds through ``TableEmbedder(table)`` (no encoder when ``table`` is None)."""
    encoder = TextEncoder(TableEmbedder(table)) if table else None
    return cli_options(**options).context(lambda: encoder)


def hash_context(**options: object) -> SystemContext:
    """A SystemContext with memini's hash embedder (no model, no cache)."""

    return cli_options(embedder="hash", **options).context()


def run(system, items: Sequence[Item], queries: Sequence[tuple[str, str]], k: int) -> list[list[Hit]]:
    """The harness's order of calls: ingest, prepare (every query), one recall per (group, query), close."""
    try:
        system.ingest(items)
        system.prepare([q for _, q in queries])
        return [system.recall(g, q, k) for g, q in queries]
    finally:
        system.close()


def ids(hits: Sequence[Hit]) -> list[str]:
    return [h.ids[0] for h in hits]
