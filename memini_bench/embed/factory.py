"""Building the embedder and encoder a run asks for (``-embedder`` and the model and cache flags).

``-embedder`` names a registered embedder (``registry.EMBEDDERS``: built-ins below, the ``memini_bench.embedders``
entry points) or ``module:attr``; ``name:ARG`` hands ARG to the factory (``st:PATH_OR_NAME``). ``auto`` (default)
is the OpenAI-compatible endpoint when ``MEMINI_EMBED_BASE_URL`` is set, else ``minilm``. An embedder factory is
``make(settings: EmbedSettings, argument: str) -> Embedder`` (``embed.base.Embedder``).

Built-ins: ``minilm`` (all-MiniLM-L6-v2, local), ``st:PATH_OR_NAME`` (any sentence-transformers model), ``openai``
(the endpoint; needs MEMINI_EMBED_BASE_URL), ``hash`` (memini's deterministic embedder, ``-dims``) and ``fnv64``
(VetoBench's 64-dim hashed bag of tokens, ``embed.hashing.VetoHashEmbedder``). Prefixes come from
``MEMINI_EMBED_QUERY_PREFIX`` / ``MEMINI_EMBED_DOC_PREFIX`` for every embedder except ``fnv64`` (VetoBench's fixed
embedder: a prefix would add tokens and change its published numbers) and an embedder that declares its own
``prefixes`` (``e5-small``: ``query: `` / ``passage: ``, which the model requires).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import click

from memini_bench.core import builtins
from memini_bench.core.registry import require_extra
from memini_bench.core.settings import Int, Real, setting
from memini_bench.embed.base import Embedder
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder, VetoHashEmbedder
from memini_bench.embed.local import BACKENDS, DEVICES, PRECISIONS
from memini_bench.errors import BenchError


@dataclass(frozen=True)
class EmbedSettings:
    """Which embedder, its model settings, and the disk cache."""

    GROUP = "embedding"

    embedder: str = setting("embedder", "auto", "auto (the endpoint if MEMINI_EMBED_BASE_URL is set, else minilm), "
                            "or a registered embedder (see -list): minilm, mpnet, e5-small, st:PATH_OR_NAME, openai, "
                            "hash, fnv64.")
    dims: int = setting("dims", 256, "Dimensions of the hash embedder (-embedder hash).", type=Int(min=1, max=65536))
    max_tokens: int = setting("max-tokens", 0, "Max tokens per text for local models (0 = default: 512 for "
                              "MiniLM; at most the model's maximum).", type=Int(min=0))
    batch_size: int = setting("batch-size", 64, "Embedding batch size for local models.", type=Int(min=1))
    device: str = setting("device", "auto", "Device for local models.", type=click.Choice(DEVICES))
    precision: str = setting("precision", "fp32", "Local models: fp32, or bf16 (bf16 weights on torch, OpenVINO's "
                             "bf16 hint on openvino; a one-line note and fp32 where the device has no bf16). Part of "
                             "the cache identity.", type=click.Choice(PRECISIONS), token="")
    embed_backend: str = setting("embed-backend", "torch", "Local models' runtime: torch, or openvino (CPU; the "
                                 "openvino extra). Part of the cache identity.", type=click.Choice(BACKENDS), token="")
    embed_timeout: float = setting("embed-timeout", 0.0, "Seconds per try for the embedding endpoint; each request "
                                   "stops at twice this across retries (0 = $MEMINI_EMBED_TIMEOUT, else 60).",
                                   type=Real(min=0, max=3600))
    embed_concurrency: int = setting("embed-concurrency", 0, "Embedding endpoint requests in flight at once (0 = "
                                     "$MEMINI_EMBED_CONCURRENCY, else memini's 8).", type=Int(min=0, max=256))
    cache_dir: str = setting("cache-dir", "", "Embedding cache folder (default $MEMINI_BENCH_CACHE or "
                             "~/.cache/memini-bench).")
    no_cache: bool = setting("no-cache", False, "Bypass the embedding disk cache.")

    @property
    def resolved(self) -> str:
        """The embedder name ``auto`` stands for in this environment."""
        return resolve_name(self.embedder)


def resolve_name(name: str) -> str:
    if name == "auto":
        return "openai" if os.environ.get("MEMINI_EMBED_BASE_URL") else "minilm"
    return name


#: What a local sentence-transformers model needs: the ``minilm`` extra (it also ships MiniLM's weights).
LOCAL_PACKAGES = ("sentence_transformers", "torch")


def make_minilm(settings: EmbedSettings, argument: str = "") -> Embedder:
    named = "-embedder minilm" if settings.embedder != "auto" else "-embedder auto (minilm, the default)"
    require_extra(named, "minilm", *LOCAL_PACKAGES)
    from memini_bench.embed.local import MINILM_MAX_TOKENS, minilm

    return minilm(max_tokens=settings.max_tokens or MINILM_MAX_TOKENS, batch_size=settings.batch_size,
                  device=settings.device, precision=settings.precision, backend=settings.embed_backend)


def make_st(settings: EmbedSettings, argument: str = "") -> Embedder:
    if not argument:
        raise BenchError("-embedder st: needs a model, as st:PATH_OR_NAME")
    require_extra(f"-embedder st:{argument}", "minilm", *LOCAL_PACKAGES)
    from memini_bench.embed.local import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(argument, max_tokens=settings.max_tokens, batch_size=settings.batch_size,
                                       device=settings.device, precision=settings.precision,
                                       backend=settings.embed_backend)


def make_openai(settings: EmbedSettings, argument: str = "") -> Embedder:
    if not os.environ.get("MEMINI_EMBED_BASE_URL"):
        raise BenchError("-embedder openai needs MEMINI_EMBED_BASE_URL (an OpenAI-compatible /v1 endpoint)")
    from memini_bench.embed.openai import OpenAIEmbedder

    return OpenAIEmbedder.from_env(timeout=settings.embed_timeout or None,
                                   concurrency=settings.embed_concurrency or None)


def make_hash(settings: EmbedSettings, argument: str = "") -> Embedder:
    return HashEmbedder(settings.dims)


def make_fnv64(settings: EmbedSettings, argument: str = "") -> Embedder:
    return VetoHashEmbedder()


#: The model and endpoint settings a built-in embedder may or may not honour (each declares which, as ``uses`` in
#: ``core.builtins``); the rest of EmbedSettings (which embedder, the cache) applies to every one.
MODEL_SETTINGS = (*builtins.LOCAL, *builtins.ENDPOINT, "dims")


def check_settings_used(settings: EmbedSettings, uses: tuple[str, ...] | None) -> None:
    """Refuse a model or endpoint setting the chosen embedder would ignore (``uses``: what its registry entry
    declares; None, as for a plugin, takes every setting)."""
    if uses is None:
        return
    defaults = EmbedSettings()
    for name in MODEL_SETTINGS:
        if name not in uses and getattr(settings, name) != getattr(defaults, name):
            flag = "-" + name.replace("_", "-")
            raise BenchError(f"{flag}: not used by -embedder {settings.resolved}; drop it")


def build_embedder(name: str | EmbedSettings = "auto", *, strict: bool = True) -> Embedder:
    """The embedder ``name`` (or ``settings.embedder``) stands for, built with ``settings``. ``strict``: refuse
    settings that embedder ignores (VetoBench builds several embedders from one set of flags, so it is lenient)."""
    from memini_bench.core.registry import EMBEDDERS

    settings = name if isinstance(name, EmbedSettings) else EmbedSettings(embedder=name)
    resolved = settings.resolved
    base, _, argument = resolved.partition(":")
    entry = EMBEDDERS.entry(base)
    if entry is not None:
        if strict:
            check_settings_used(settings, entry.uses)
        factory = EMBEDDERS.get(base)
    elif ":" in resolved and EMBEDDERS.allow_module:
        factory, argument = EMBEDDERS.get(resolved), ""
    else:
        raise EMBEDDERS.unknown_error(resolved)
    embedder = factory(settings, argument)
    if not isinstance(embedder, Embedder):
        raise BenchError(f"-embedder {resolved}: its factory returned {type(embedder).__name__}, not an Embedder "
                         "(identity, dims, max_chars, encode)")
    return embedder


def build_encoder(settings: EmbedSettings, *, strict: bool = True) -> TextEncoder:
    """The embedder behind memini's prefixes (none for ``fnv64``) and, unless ``no_cache`` (or a hash embedder,
    which is cheaper than a lookup), the disk cache."""
    embedder = build_embedder(settings, strict=strict)
    hashed = isinstance(embedder, HashEmbedder | VetoHashEmbedder)
    cache = None
    if not settings.no_cache and not hashed:
        from memini_bench.embed.cache import DiskCache, default_cache_dir

        directory = Path(settings.cache_dir) if settings.cache_dir else default_cache_dir()
        cache = DiskCache(directory, embedder.identity, embedder.dims)
    # an embedder that requires its prefixes declares them (e5-small: "query: " / "passage: "); fnv64 takes none
    fixed = ("", "") if isinstance(embedder, VetoHashEmbedder) else getattr(embedder, "prefixes", None)
    query_prefix, doc_prefix = fixed or (os.environ.get("MEMINI_EMBED_QUERY_PREFIX", ""),
                                         os.environ.get("MEMINI_EMBED_DOC_PREFIX", ""))
    return TextEncoder(embedder, query_prefix=query_prefix, doc_prefix=doc_prefix, cache=cache)
