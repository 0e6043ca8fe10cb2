"""Rerank tiers: re-order the head of the hybrid list with a cross-encoder (HTTP ``/rerank`` or a local
sentence-transformers model) or an LLM (one chat completion).

A ``Reranker`` returns candidate ids best-first; ``reorder_by_id`` (memini's reorderByID) turns that into the
final head: the returned ids first (repeats and unknown ids ignored), then the head candidates it left out, in
their original order. A ``ScoringReranker`` (the cross-encoders) also exposes the raw scores, which the
relevance-gate sweep needs. ``load()`` readies a reranker before anything is timed (a local model loads its
weights; the HTTP and LLM clients have nothing to load).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memini_bench.errors import BenchError

RERANK_API_KEY_ENV = "MEMINI_RERANK_API_KEY"
LOCAL_PREFIX = "local:"


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    content: str


@runtime_checkable
class Reranker(Protocol):
    name: str

    def load(self) -> None: ...

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[str]: ...


@runtime_checkable
class ScoringReranker(Reranker, Protocol):
    def scores(self, query: str, candidates: Sequence[Candidate]) -> dict[str, float]: ...


def reorder_by_id(head: Sequence[str], ordered: Sequence[str]) -> list[str]:
    """``ordered`` (ids known to ``head``, first occurrence only), then the rest of ``head`` in its order."""
    known = set(head)
    placed: dict[str, None] = {}
    for i in ordered:
        if i in known and i not in placed:
            placed[i] = None
    return [*placed, *(i for i in head if i not in placed)]


def cross_encoder_requested(url: str, model: str) -> bool:
    """Whether the flags name a cross-encoder: ``-rerank-url``, or ``-rerank-model local:PATH``. A model name
    without ``-rerank-url`` names nothing that can run: a BenchError, not a silent fallback."""
    if model and not url and not model.startswith(LOCAL_PREFIX):
        raise BenchError(f"-rerank-model {model!r} needs -rerank-url, or local:PATH for a local cross-encoder")
    return bool(url or model)


def build_reranker(*, url: str = "", model: str = "", llm: bool = False, max_doc_chars: int = 2048,
                   max_batch_chars: int = 6000, api: str = "cohere", timeout: float = 60.0,
                   device: str = "cpu") -> Reranker:
    """memini's choice: a cross-encoder at ``url`` when given, else a local cross-encoder for
    ``model = local:PATH`` (on ``device``), else the LLM reranker from ``MEMINI_LLM_*`` (when ``llm``)."""
    from memini_bench.rerankers.crossencoder import HttpCrossEncoder, LocalCrossEncoder

    if cross_encoder_requested(url, model):
        if url:
            return HttpCrossEncoder(url, model, api_key=os.environ.get(RERANK_API_KEY_ENV, ""),
                                    max_doc_chars=max_doc_chars, max_batch_chars=max_batch_chars, api=api,
                                    timeout=timeout)
        return LocalCrossEncoder(model.removeprefix(LOCAL_PREFIX), max_doc_chars=max_doc_chars, device=device)
    if llm:
        from memini_bench.clients.providers import openai_chat_from_env
        from memini_bench.rerankers.llm import LLMReranker

        return LLMReranker(openai_chat_from_env())
    raise BenchError("the rerank tier needs -rerank-url URL, -rerank-model local:PATH or -llm-rerank")
