"""Embedders: a small protocol, the deterministic hash embedder, and the encoder that applies memini's prefixes,
truncation and per-run de-duplication in front of any embedder (a model, an HTTP endpoint, a disk cache).

``Embedder``, ``TextEncoder`` and ``HashEmbedder`` are imported on first use, so that a light module of the package
(``embed.settings``, the embedding flags) imports no numpy."""

__all__ = ["Embedder", "HashEmbedder", "TextEncoder"]
_HOMES = {"Embedder": "memini_bench.embed.base", "TextEncoder": "memini_bench.embed.encoder",
          "HashEmbedder": "memini_bench.embed.hashing"}


def __getattr__(name: str):
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'memini_bench.embed' has no attribute {name!r}")
