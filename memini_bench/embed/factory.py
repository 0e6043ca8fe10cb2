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
from pathlib import Path

from memini_bench.core import builtins
from memini_bench.core.registry import require_extra
from memini_bench.embed.base import Embedder
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder, VetoHashEmbedder
from memini_bench.embed.settings import EmbedSettings
from memini_bench.errors import BenchError

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
