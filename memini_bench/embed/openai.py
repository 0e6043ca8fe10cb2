"""An OpenAI-compatible ``/embeddings`` endpoint as an Embedder, configured by memini's variables.

``MEMINI_EMBED_BASE_URL`` (switches it on), ``MEMINI_EMBED_MODEL`` (default text-embedding-3-small),
``MEMINI_EMBED_DIMS`` (validates every returned vector's length; no ``dimensions`` parameter is sent),
``MEMINI_EMBED_API_KEY``. Requests are batched as memini's Batched client does: each text cut to 8000
characters, then sub-requests of at most 20 texts and 24,000 UTF-8 bytes (always at least one text). Each request
is ``{"model", "input": [...], "encoding_format": "float"}``; the reply's ``data[*].embedding`` are put back in
``index`` order. 429/5xx/timeouts are retried with backoff (``memini_bench.http``), then a one-line error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from memini_bench.errors import BenchError
from memini_bench.http import bearer, join_url, post_json

DEFAULT_MODEL = "text-embedding-3-small"
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


class OpenAIEmbedder:
    max_chars = MAX_CHARS

    def __init__(self, base_url: str, model: str = DEFAULT_MODEL, *, dims: int = 0, api_key: str = "",
                 timeout: float = 60.0, retries: int = 6, backoff: float = 0.5) -> None:
        self.url = join_url(base_url, "embeddings")
        self.model = model
        self._dims = dims
        self.api_key = api_key or "noauth"  # memini sends a placeholder when no key is set
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
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
        reply = post_json(self.url, {"model": self.model, "input": texts, "encoding_format": "float"},
                          headers=bearer(self.api_key), timeout=self.timeout, retries=self.retries,
                          backoff=self.backoff, what="embedding endpoint")
        try:
            data = sorted(reply["data"], key=lambda d: d["index"])
            vectors = [d["embedding"] for d in data]
        except (KeyError, TypeError):
            raise BenchError(f"embedding endpoint at {self.url} sent no data[*].{{index, embedding}}; "
                             "is it OpenAI-compatible?") from None
        if len(vectors) != len(texts):
            raise BenchError(f"embedding endpoint at {self.url} returned {len(vectors)} vectors for {len(texts)} "
                             "texts")
        lengths = {len(v) if isinstance(v, list) else -1 for v in vectors}
        expected = self._dims or next(iter(lengths))
        if lengths != {expected} or expected <= 0:
            got = ", ".join(str(n) for n in sorted(lengths))
            raise BenchError(f"embedding endpoint at {self.url} returned vectors of length {got}, expected "
                             f"{expected}; set MEMINI_EMBED_DIMS to the model's size")
        self._dims = expected
        try:
            return np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError):
            raise BenchError(f"embedding endpoint at {self.url} returned non-numeric vectors") from None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        cut = [t[:MAX_CHARS] for t in texts]
        parts = [self._request(cut[r.start:r.stop]) for r in batches(cut)]
        return np.concatenate(parts) if parts else np.zeros((0, self._dims or 0), dtype=np.float32)
