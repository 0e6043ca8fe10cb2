"""Several OpenAI-compatible embedding endpoints in one run: memini's ``MEMINI_SWEEP_EMBEDDERS``.

memini's reserve and contradiction sweeps read ``MEMINI_SWEEP_EMBEDDERS`` as a comma-separated list of
``baseURL|model|dims`` entries (``reserve_sweep_test.go → sweepEmbedders``). Here each entry is the embedder
``endpoint:baseURL|model|dims`` (registered as ``endpoint``): the ``/embeddings`` client of ``embed.openai`` for
that URL and model, every vector checked to be ``dims`` long, with ``MEMINI_EMBED_API_KEY`` as its key and the
endpoint flags (``-embed-timeout``, ``-embed-concurrency``). Its cache identity is ``openai:<url>|<model>`` and
its cache file is keyed by ``dims`` too, so every endpoint keeps its own cache.

The scoreboard (``quality.scoreboard -embedders``) and the contradiction study (``studies.contradiction
-embedders``) expand the name ``sweep`` in their list to every entry of ``MEMINI_SWEEP_EMBEDDERS`` (unlike memini,
no built-in default list of development endpoints: unset, ``sweep`` is a one-line error). A malformed entry is a
one-line error naming it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from memini_bench.errors import BenchError

ENV = "MEMINI_SWEEP_EMBEDDERS"
SWEEP = "sweep"
PREFIX = "endpoint:"


@dataclass(frozen=True, slots=True)
class Endpoint:
    base_url: str
    model: str
    dims: int

    @property
    def name(self) -> str:
        """The embedder name that builds it: ``endpoint:url|model|dims``."""
        return f"{PREFIX}{self.base_url}|{self.model}|{self.dims}"


def parse_entry(entry: str, where: str = ENV) -> Endpoint:
    """One ``baseURL|model|dims`` entry; anything else is a BenchError naming ``where`` and the entry."""
    parts = [p.strip() for p in entry.split("|")]
    if len(parts) != 3 or not all(parts):
        raise BenchError(f"{where}: entry {entry!r}: write baseURL|model|dims (e.g. http://127.0.0.1:8001/v1|"
                         "text-embedding-qwen3-embedding-0.6b|1024)")
    url, model, raw_dims = parts
    if not url.startswith(("http://", "https://")):
        raise BenchError(f"{where}: entry {entry!r}: the base URL must start with http:// or https://")
    if not raw_dims.isdigit() or int(raw_dims) <= 0:
        raise BenchError(f"{where}: entry {entry!r}: dims must be a positive whole number")
    return Endpoint(url, model, int(raw_dims))


def sweep_endpoints(text: str | None = None) -> list[Endpoint]:
    """The entries of ``MEMINI_SWEEP_EMBEDDERS`` (or ``text``), in order, each once."""
    raw = os.environ.get(ENV, "") if text is None else text
    entries = [e for e in (x.strip() for x in raw.split(",")) if e]
    if not entries:
        raise BenchError(f"-embedders {SWEEP}: set {ENV} to a comma-separated list of baseURL|model|dims")
    return list(dict.fromkeys(parse_entry(e) for e in entries))


def expand(names: Sequence[str]) -> list[str]:
    """``names`` with ``sweep`` replaced by every endpoint of ``MEMINI_SWEEP_EMBEDDERS`` (duplicates dropped)."""
    out: list[str] = []
    for name in names:
        out += [e.name for e in sweep_endpoints()] if name == SWEEP else [name]
    return list(dict.fromkeys(out))


def make(settings, argument: str = ""):
    """The ``endpoint:url|model|dims`` embedder (module docstring)."""
    from memini_bench.embed.openai import OpenAIEmbedder

    if not argument:
        raise BenchError("-embedder endpoint: needs url|model|dims, as endpoint:URL|MODEL|DIMS")
    e = parse_entry(argument, "-embedder endpoint")
    return OpenAIEmbedder(e.base_url, e.model, dims=e.dims, api_key=os.environ.get("MEMINI_EMBED_API_KEY", ""),
                          timeout=settings.embed_timeout or None, concurrency=settings.embed_concurrency or None)
