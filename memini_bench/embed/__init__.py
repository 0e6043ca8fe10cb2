"""Embedders: a small protocol, the deterministic hash embedder, and the encoder that applies memini's prefixes,
truncation and per-run de-duplication in front of any embedder (a model, an HTTP endpoint, a disk cache)."""

from memini_bench.embed.base import Embedder
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder

__all__ = ["Embedder", "HashEmbedder", "TextEncoder"]
