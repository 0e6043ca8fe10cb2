"""An OpenAI-compatible ``/embeddings`` endpoint as an Embedder, configured by memini's variables.

``MEMINI_EMBED_BASE_URL`` (switches it on), ``MEMINI_EMBED_MODEL`` (default text-embedding-3-small),
``MEMINI_EMBED_DIMS`` (validates every returned vector's length; no ``dimensions`` parameter is sent),
``MEMINI_EMBED_API_KEY``, ``MEMINI_EMBED_TIMEOUT`` (seconds per try, default 60; the ``timeout`` argument wins)
and ``MEMINI_EMBED_CONCURRENCY`` (requests in flight at once, default 8 as memini's ``-concurrency``; the
``concurrency`` argument wins). Requests are batched as memini's Batched client does: each text cut to 8000
characters, then sub-requests of at most 20 texts and 24,000 UTF-8 bytes (always at least one text); up to
``concurrency`` sub-requests are sent in parallel and their vectors put back in input order. Each request is
``{"model", "input": [...], "encoding_format": "float"}``; the reply's ``data[*].index`` must be a permutation of
the request's positions and every vector must pass ``embed.checks.validate_vectors`` (length, finite, not all zero),
else the whole call is a one-line BenchError and nothing from it is returned (so nothing reaches the cache).
Retries, the per-try timeout, the total deadline (default twice the timeout) and ``Retry-After``:
``memini_bench.clients.http``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from memini_bench.clients.http import bearer, check_base_url, check_seconds, env_seconds, join_url, post_json
from memini_bench.embed.checks import index_order, validate_vectors
from memini_bench.errors import BenchError

DEFAULT_MODEL = "text-embedding-3-small"
DEFAULT_TIMEOUT = 60.0
DEFAULT_CONCURRENCY = 8
TIMEOUT_ENV = "MEMINI_EMBED_TIMEOUT"
CONCURRENCY_ENV = "MEMINI_EMBED_CONCURRENCY"
MAX_BATCH_ITEMS = 20
MAX_BATCH_BYTES = 24_000
MAX_CHARS = 8000


def batches(texts: Sequence[str], max_items: int = MAX_BATCH_ITEMS, max_bytes: int = MAX_BATCH_BYTES) -> list[range]:
    """Index ranges of consecutive texts: at most ``max_items`` texts and ``max_bytes`` bytes per range, and at
    least one text even when that text alone is larger."""
    out: list[range] = []
    start, size = 0, 0
    for i, text in enumerate(texts):
        n = len(text.encode("utf-8"))
        if i > start and (i - start >= max_items or size + n > max_bytes):
            out.append(range(start, i))
            start, size = i, 0
        size += n
    if start < len(texts):
        out.append(range(start, len(texts)))
    return out


def env_concurrency(default: int = DEFAULT_CONCURRENCY) -> int:
    raw = os.environ.get(CONCURRENCY_ENV, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BenchError(f"{CONCURRENCY_ENV}={raw!r}: not an integer; set it to e.g. 8 or unset it") from None
    if value < 1:
        raise BenchError(f"{CONCURRENCY_ENV}={raw!r}: must be at least 1 (requests in flight at once); set it to "
                         "e.g. 8 or unset it")
    return value


class OpenAIEmbedder:
    """``timeout``: seconds per try (None: ``MEMINI_EMBED_TIMEOUT``, else 60); ``deadline``: seconds per request
    across tries (None: twice the timeout); ``concurrency``: requests in flight (None: ``MEMINI_EMBED_CONCURRENCY``,
    else 8)."""

    max_chars = MAX_CHARS

    def __init__(self, base_url: str, model: str = DEFAULT_MODEL, *, dims: int = 0, api_key: str = "",
                 timeout: float | None = None, deadline: float | None = None, retries: int = 6,
                 backoff: float = 0.5, concurrency: int | None = None) -> None:
        if dims < 0:
            raise BenchError(f"MEMINI_EMBED_DIMS={dims}: must be a positive vector length (or unset)")
        self.url = join_url(check_base_url(base_url, "MEMINI_EMBED_BASE_URL"), "embeddings")
        self.model = model
        self._dims = dims
        self.api_key = api_key or "noauth"  # memini sends a placeholder when no key is set
        self.timeout = (env_seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT) if timeout is None
                        else check_seconds(timeout, "-embed-timeout"))
        self.deadline = None if deadline is None else check_seconds(deadline, "embedding deadline")
        self.retries = retries
        self.backoff = backoff
        self.concurrency = env_concurrency() if concurrency is None else concurrency
        if self.concurrency < 1:
            raise BenchError(f"-concurrency {self.concurrency}: must be at least 1 (requests in flight at once)")
        self.identity = f"openai:{base_url.rstrip('/')}|{model}"

    @classmethod
    def from_env(cls, **overrides: object) -> OpenAIEmbedder:
        raw_dims = os.environ.get("MEMINI_EMBED_DIMS", "")
        try:
            dims = int(raw_dims) if raw_dims else 0
        except ValueError:
            raise BenchError(f"MEMINI_EMBED_DIMS={raw_dims!r}: not an integer; set the model's vector length") \
                from None
        return cls(os.environ["MEMINI_EMBED_BASE_URL"], os.environ.get("MEMINI_EMBED_MODEL") or DEFAULT_MODEL,
                   dims=dims, api_key=os.environ.get("MEMINI_EMBED_API_KEY", ""), **overrides)

    @property
    def dims(self) -> int:
        if not self._dims:
            self._dims = len(self.encode(["dimension probe"])[0])
        return self._dims

    def _request(self, texts: list[str]) -> np.ndarray:
        """One sub-request's vectors in input order, checked (module docstring)."""
        source = f"embedding endpoint at {self.url}"
        reply = post_json(self.url, {"model": self.model, "input": texts, "encoding_format": "float"},
                          headers=bearer(self.api_key), timeout=self.timeout, deadline=self.deadline,
                          retries=self.retries, backoff=self.backoff, what="embedding endpoint",
                          timeout_hint=f"set {TIMEOUT_ENV} (or -embed-timeout) to wait longer")
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list) or not all(isinstance(d, dict) and "embedding" in d for d in data):
            raise BenchError(f"{source} sent no data[*].{{index, embedding}}; is it OpenAI-compatible?")
        if len(data) != len(texts):
            raise BenchError(f"{source}: returned {len(data)} vectors for {len(texts)} texts; nothing from it was "
                             "cached")
        vectors: list[object] = [None] * len(texts)
        for position, entry in zip(index_order([d.get("index") for d in data], source), data, strict=True):
            vectors[position] = entry["embedding"]
        first = vectors[0]
        expected = self._dims or (len(first) if isinstance(first, list) and first else 0)
        if expected <= 0:
            raise BenchError(f"{source}: returned an empty or non-list vector; is it OpenAI-compatible?")
        checked = validate_vectors(vectors, count=len(texts), dims=expected, source=source,
                                   dims_hint="; set MEMINI_EMBED_DIMS to the model's size")
        self._dims = expected
        return checked

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Every text's vector in input order; sub-requests go ``concurrency`` at a time (the first one alone
        while the vector length is still unknown, so every reply is checked against the same length)."""
        cut = [t[:MAX_CHARS] for t in texts]
        windows = [cut[r.start:r.stop] for r in batches(cut)]
        parts: list[np.ndarray] = []
        if windows and not self._dims:
            parts.append(self._request(windows.pop(0)))
        if self.concurrency == 1 or len(windows) <= 1:
            parts += [self._request(w) for w in windows]
        elif windows:
            pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(windows)),
                                      thread_name_prefix="memini-embed")
            try:
                futures = [pool.submit(self._request, w) for w in windows]
                parts += [f.result() for f in futures]
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
        return np.concatenate(parts) if parts else np.zeros((0, self._dims or 0), dtype=np.float32)
