"""Building the embedder and encoder a run asks for (``-embedder`` and the cache flags).

``-embedder``: ``auto`` (default: the OpenAI-compatible endpoint when ``MEMINI_EMBED_BASE_URL`` is set, else
``minilm``), ``minilm`` (all-MiniLM-L6-v2, local), ``st:PATH_OR_NAME`` (any sentence-transformers model),
``openai`` (the endpoint; needs MEMINI_EMBED_BASE_URL), ``hash`` (memini's deterministic embedder, ``-dims``) or
``fnv64`` (VetoBench's 64-dim hashed bag of tokens, ``embed.hashing.VetoHashEmbedder``).
Prefixes come from ``MEMINI_EMBED_QUERY_PREFIX`` / ``MEMINI_EMBED_DOC_PREFIX`` for every embedder except ``fnv64``
(VetoBench's fixed embedder: a prefix would add tokens and change its published numbers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memini_bench.embed.base import Embedder
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder, VetoHashEmbedder
from memini_bench.errors import BenchError

EMBEDDERS = ("auto", "minilm", "st:PATH_OR_NAME", "openai", "hash", "fnv64")


@dataclass(frozen=True)
class EmbedSettings:
    name: str = "auto"
    dims: int = 256
    max_tokens: int = 0  # 0 = the embedder's default (MiniLM: 512)
    batch_size: int = 64
    device: str = "auto"
    cache_dir: str = ""
    no_cache: bool = False


def resolve_name(name: str) -> str:
    if name == "auto":
        return "openai" if os.environ.get("MEMINI_EMBED_BASE_URL") else "minilm"
    return name


def build_embedder(name: str, *, dims: int = 256, max_tokens: int = 0, batch_size: int = 64,
                   device: str = "auto") -> Embedder:
    name = resolve_name(name)
    if name == "hash":
        if dims <= 0:
            raise BenchError(f"-dims {dims}: must be a positive integer")
        return HashEmbedder(dims)
    if name == "fnv64":
        return VetoHashEmbedder()
    if name == "minilm":
        from memini_bench.embed.local import MINILM_MAX_TOKENS, minilm

        return minilm(max_tokens=max_tokens or MINILM_MAX_TOKENS, batch_size=batch_size, device=device)
    if name.startswith("st:") and len(name) > 3:
        from memini_bench.embed.local import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(name[3:], max_tokens=max_tokens, batch_size=batch_size, device=device)
    if name == "openai":
        if not os.environ.get("MEMINI_EMBED_BASE_URL"):
            raise BenchError("-embedder openai needs MEMINI_EMBED_BASE_URL (an OpenAI-compatible /v1 endpoint)")
        from memini_bench.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder.from_env()
    raise BenchError(f"-embedder {name!r}: unknown; use one of {', '.join(EMBEDDERS)}")


def build_encoder(settings: EmbedSettings) -> TextEncoder:
    """The embedder behind memini's prefixes (none for ``fnv64``) and, unless ``no_cache`` (or a hash embedder,
    which is cheaper than a lookup), the disk cache."""
    embedder = build_embedder(settings.name, dims=settings.dims, max_tokens=settings.max_tokens,
                              batch_size=settings.batch_size, device=settings.device)
    hashed = isinstance(embedder, HashEmbedder | VetoHashEmbedder)
    cache = None
    if not settings.no_cache and not hashed:
        from memini_bench.embed.cache import DiskCache, default_cache_dir

        directory = Path(settings.cache_dir) if settings.cache_dir else default_cache_dir()
        cache = DiskCache(directory, embedder.identity, embedder.dims)
    fixed = isinstance(embedder, VetoHashEmbedder)
    return TextEncoder(embedder, query_prefix="" if fixed else os.environ.get("MEMINI_EMBED_QUERY_PREFIX", ""),
                       doc_prefix="" if fixed else os.environ.get("MEMINI_EMBED_DOC_PREFIX", ""), cache=cache)
