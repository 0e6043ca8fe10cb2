"""Building the embedder a run asks for (``-embedder``)."""

from __future__ import annotations

from memini_bench.embed.base import Embedder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.errors import BenchError

EMBEDDERS = ("hash",)


def build_embedder(name: str, *, dims: int = 256) -> Embedder:
    if dims <= 0:
        raise BenchError(f"-dims {dims}: must be a positive integer")
    if name == "hash":
        return HashEmbedder(dims)
    raise BenchError(f"-embedder {name!r}: unknown; use one of {', '.join(EMBEDDERS)}")
