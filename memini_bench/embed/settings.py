"""The embedding flags (``EmbedSettings``: which embedder, its model settings, the disk cache) and the names their
choices list, kept apart from the embedders themselves so that building the CLI's flags imports no numpy or model
code (``embed.factory`` builds what they name)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import click

from memini_bench.core.settings import IdentityPart, Int, Real, flag_fields, setting, setting_tokens

DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("fp32", "bf16")
BACKENDS = ("torch", "openvino")


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


def identity_part(embed: EmbedSettings, embedder: str) -> IdentityPart:
    """The embedder's share of a results identity: its name, max tokens, the hash embedder's dimensions (0 for any
    other), and the settings that change vectors beyond the name when not the default (so the identity of an fp32
    torch run stays what it was); its name tokens: ``emb-<name>`` (none for the default, minilm), ``maxtok<N>``,
    ``dims<N>`` (the hash embedder at other than 256), then each changed setting's token."""
    defaults = EmbedSettings()
    variant = {f.name: getattr(embed, f.name) for f in flag_fields(EmbedSettings)
               if f.metadata.get("token") is not None and getattr(embed, f.name) != getattr(defaults, f.name)}
    tokens = []
    if embedder and embedder != "minilm":
        tokens.append("emb-" + embedder.replace(":", "-").replace("/", "-"))
    if embed.max_tokens:
        tokens.append(f"maxtok{embed.max_tokens}")
    if embedder == "hash" and embed.dims != 256:
        tokens.append(f"dims{embed.dims}")
    items = {"embedder": embedder, "max_tokens": embed.max_tokens, "dims": embed.dims if embedder == "hash" else 0,
             **variant}
    return IdentityPart(items, (*tokens, *setting_tokens(embed)))
