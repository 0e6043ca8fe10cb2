"""Cross-encoder rerankers (memini ``internal/rerank/crossencoder.go``): an HTTP ``/rerank`` client and a local
sentence-transformers ``CrossEncoder``.

HTTP: ``POST {url}/rerank`` with ``{"model", "query", "documents"}`` (Cohere, Jina, llama-server, vLLM,
Infinity; ``api="tei"`` sends TEI's ``{"query", "texts"}``), optional ``Authorization: Bearer`` from
``MEMINI_RERANK_API_KEY``. The reply is ``{"results": [{"index", "relevance_score"}]}`` or TEI's bare list of
``{"index", "score"}``. memini's caps:

- each document is cut to ``min(max_doc_chars, max_batch_chars)`` characters (a cap of 0 is no cap);
- documents are packed in order into batches so that ``len(query) + 38 + len(model) + sum(len(docs))``
  stays within ``max_batch_chars`` (a batch always holds at least one document); when the query alone leaves no
  room it is cut to ``max_batch_chars - 38 - len(model)`` characters (memini cuts it only for the budget and
  still sends it whole; we send the cut query, which is what the cap is for).

Ordering (``rerank``): scores from every batch, sorted descending, ties by id ascending; candidates the server
omits are dropped (``reorder_by_id`` appends them back in the rerank tier); with <= 1 candidate the input order
is returned without a call. A reply with no results, or a result without an integer index and a numeric score,
is a BenchError; an index outside the batch is ignored (as memini does).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

from memini_bench.clients.http import bearer, join_url, post_json
from memini_bench.core.registry import require_extra
from memini_bench.errors import BenchError
from memini_bench.rerankers import LOCAL_PREFIX, Candidate

__all__ = ["LOCAL_PREFIX", "HttpCrossEncoder", "LocalCrossEncoder"]

ENVELOPE_CHARS = 38
APIS = ("cohere", "tei")


def truncate_chars(text: str, limit: int) -> str:
    """The first ``limit`` characters (runes); no cut when ``limit <= 0``."""
    return text if limit <= 0 else text[:limit]


def doc_cap(max_doc_chars: int, max_batch_chars: int) -> int:
    """memini's per-document cap: max_doc_chars, lowered to max_batch_chars when that is smaller (0 = none)."""
    if max_batch_chars > 0 and (max_doc_chars == 0 or max_doc_chars > max_batch_chars):
        return max_batch_chars
    return max_doc_chars


def split_batches(docs: Sequence[str], query: str, model: str, max_batch_chars: int) -> tuple[str, list[range]]:
    """(query to send, batches as index ranges) under memini's per-request character budget."""
    if max_batch_chars <= 0:
        return query, [range(len(docs))]
    overhead = ENVELOPE_CHARS + len(model)
    budget = max_batch_chars - len(query) - overhead
    if budget <= 0 and max_batch_chars - overhead > 0:
        query = query[:max_batch_chars - overhead]
        budget = max_batch_chars - len(query) - overhead
    if budget <= 0:
        return query, [range(len(docs))]
    spans, start, used = [], 0, 0
    for i, doc in enumerate(docs):
        if used + len(doc) > budget and i > start:
            spans.append(range(start, i))
            start, used = i, 0
        used += len(doc)
    spans.append(range(start, len(docs)))
    return query, spans


def order_by_scores(scores: dict[str, float]) -> list[str]:
    """Ids by score descending, ties by id ascending (memini's merge of batch scores)."""
    return [i for i, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


class _CrossEncoderBase:
    name = "cross-encoder"

    def load(self) -> None:
        """Nothing to load (a server does the work)."""

    def scores(self, query: str, candidates: Sequence[Candidate]) -> dict[str, float]:
        raise NotImplementedError

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[str]:
        if len(candidates) <= 1:
            return [c.id for c in candidates]
        return order_by_scores(self.scores(query, candidates))


class HttpCrossEncoder(_CrossEncoderBase):
    """A Cohere/Jina/TEI/llama-server style ``/rerank`` endpoint (module docstring)."""

    def __init__(self, base_url: str, model: str = "", *, api_key: str = "", max_doc_chars: int = 2048,
                 max_batch_chars: int = 6000, api: str = "cohere", timeout: float = 60.0, retries: int = 2,
                 deadline: float | None = None) -> None:
        if api not in APIS:
            raise BenchError(f"-rerank-api {api!r}: unknown; use one of {', '.join(APIS)}")
        if max_doc_chars < 0 or max_batch_chars < 0:
            raise BenchError("-rerank-max-doc-chars and -rerank-max-batch-chars must be >= 0 (0 = no cap)")
        self.url = join_url(base_url, "rerank")
        self.model = model
        self.api_key = api_key
        self.max_doc_chars = max_doc_chars
        self.max_batch_chars = max_batch_chars
        self.api = api
        self.timeout = timeout
        self.retries = retries
        # Seconds per request across retries (None: twice the timeout; memini_bench.clients.http).
        self.deadline = deadline

    def scores(self, query: str, candidates: Sequence[Candidate]) -> dict[str, float]:
        """Every scored candidate's relevance, over as many batches as the caps need."""
        cap = doc_cap(self.max_doc_chars, self.max_batch_chars)
        docs = [truncate_chars(c.content, cap) for c in candidates]
        query, spans = split_batches(docs, query, self.model, self.max_batch_chars)
        out: dict[str, float] = {}
        for span in spans:
            batch = [docs[i] for i in span]
            for index, score in self._post(query, batch):
                if 0 <= index < len(span):
                    out[candidates[span[index]].id] = score
        return out

    def _payload(self, query: str, docs: list[str]) -> dict:
        if self.api == "tei":
            return {"query": query, "texts": docs}
        payload: dict = {"model": self.model} if self.model else {}
        payload.update(query=query, documents=docs)
        return payload

    def _post(self, query: str, docs: list[str]) -> list[tuple[int, float]]:
        reply = post_json(self.url, self._payload(query, docs), headers=bearer(self.api_key), timeout=self.timeout,
                          deadline=self.deadline, retries=self.retries, what="rerank server",
                          timeout_hint="raise -rerank-timeout to wait longer")
        results = reply.get("results") if isinstance(reply, dict) else reply
        if not isinstance(results, list) or not results:
            raise BenchError(f"rerank server at {self.url} sent no results for {len(docs)} documents; expected "
                             '{"results": [{"index", "relevance_score"}]}; check -rerank-model and -rerank-api')
        parsed = []
        for entry in results:
            index = entry.get("index") if isinstance(entry, dict) else None
            score = entry.get("relevance_score", entry.get("score")) if isinstance(entry, dict) else None
            if (not isinstance(index, int) or isinstance(index, bool) or not isinstance(score, int | float)
                    or isinstance(score, bool) or not math.isfinite(score)):
                raise BenchError(f"rerank server at {self.url} sent a malformed result {str(entry)[:80]!r}; "
                                 "each needs an integer index and a numeric relevance_score")
            parsed.append((index, float(score)))
        return parsed


class LocalCrossEncoder(_CrossEncoderBase):
    """A sentence-transformers ``CrossEncoder`` loaded from a local folder (no server, no network), on ``device``
    (``auto`` = CUDA when available, else CPU). It must give one relevance score per pair (``num_labels`` 1): a
    classifier head with several labels (an NLI cross-encoder) is refused when it loads."""

    def __init__(self, path: str, *, max_doc_chars: int = 2048, batch_size: int = 32, device: str = "cpu") -> None:
        self.path = path
        self.max_doc_chars = max_doc_chars
        self.batch_size = batch_size
        self.device = device
        self._model = None

    def load(self) -> None:
        """Load the model once (the rerank tier does it before timing the first question)."""
        if self._model is not None:
            return
        if not self.path or not Path(self.path).is_dir():
            raise BenchError(f"-rerank-model local:{self.path}: no such folder; point it at a saved "
                             "sentence-transformers CrossEncoder (or sequence-classification model) folder")
        require_extra(f"-rerank-model local:{self.path}", "minilm", "sentence_transformers", "torch")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            import torch
            from sentence_transformers import CrossEncoder
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()  # an error stays one line
            device = self.device
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            model = CrossEncoder(self.path, device=device, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise BenchError(f"-rerank-model local:{self.path}: cannot load a cross-encoder there "
                             f"({str(exc).splitlines()[0][:120]})") from None
        labels = getattr(model, "num_labels", 1)
        if labels != 1:
            raise BenchError(f"-rerank-model local:{self.path}: the model has {labels} output labels (a classifier, "
                             "e.g. NLI); a reranker needs one relevance score per pair (num_labels 1)")
        self._model = model

    def scores(self, query: str, candidates: Sequence[Candidate]) -> dict[str, float]:
        if not candidates:
            return {}
        self.load()
        pairs = [(query, truncate_chars(c.content, self.max_doc_chars)) for c in candidates]
        values = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return {c.id: float(v) for c, v in zip(candidates, values, strict=True)}
