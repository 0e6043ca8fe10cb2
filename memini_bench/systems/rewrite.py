"""``memini-hybrid-rewrite``: memini's hybrid with LLM query expansion (cmd/bench ``-rewrite``, ``service.Recall``
with ``QueryRewrite``; ``internal/service/answer_expand.go`` and ``tryQueryRewrite`` in ``service.go``).

- Gate (memini's ``shouldExpandQuery``): a query is expanded only when it has at least 3 whitespace-separated
  words, no ``"`` or ``'``, and is neither a UUID nor an all-caps code with ``_`` or ``-`` under 40 characters.
- Expansion: one chat completion (``MEMINI_LLM_*``, temperature 0) with the system prompt ``EXPAND_SYSTEM`` (our
  wording of memini's instruction: 2-3 diverse queries, one per line) and
  the user message ``Question: <query>``. Variants = the original query, then each non-empty reply line with
  surrounding spaces and leading ``-*0123456789. `` characters stripped, up to 4 queries in all. A failed call
  expands to the original alone (memini falls back the same way; the failures are counted in ``describe()``, and a
  run in which every call fails is an error: the endpoint is down).
- Recall: with one query, the hybrid's recall. Otherwise each variant runs the hybrid's full recall at k, and the
  lists are fused with RRF, ``score(d) = sum_lists 1 / (5 + rank0)``, ties in first-seen order, cut to k (memini's
  ``search.Fuse(results, limit, rrfK=5)``).

The LLM calls are made in ``prepare(queries)``, before the timed loop, ``REWRITE_CONCURRENCY`` at a time, and
cached per query text; the variants' query vectors are computed there too, so recall latency is retrieval only.
``describe()`` records the model, the prompt and every query's variants.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import numpy as np

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.errors import BenchError
from memini_bench.retrieval.fusion import DEFAULT_RRF_K, fuse_rrf
from memini_bench.systems.config import clamp_limit
from memini_bench.systems.context import SystemContext
from memini_bench.systems.memini import HybridSystem, make_hybrid

NAME = "memini-hybrid-rewrite"
MAX_QUERIES = 4
REWRITE_CONCURRENCY = 8
EXPAND_SYSTEM = ("Turn the question into 2 or 3 short search queries for a memory store, one per line, "
                 "without numbering or comments. Vary the wording (synonyms, the entity, the value, the event), keep "
                 "at least one exact name or keyword from the question, and if the question is about something that "
                 "can change over time, add a query aimed at its latest state.")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_LEADING = "-*0123456789. "

Complete = Callable[[str, str], str]  # (system, user) -> reply text


def is_uuid_or_code(query: str) -> bool:
    if _UUID.match(query):
        return True
    return query.upper() == query and ("_" in query or "-" in query) and len(query) < 40


def should_expand(query: str) -> bool:
    """memini's gate (module docstring)."""
    q = query.strip()
    if len(q.split()) < 3 or '"' in q or "'" in q:
        return False
    return not is_uuid_or_code(q)


def parse_variants(query: str, reply: str) -> list[str]:
    """The original query then the reply's lines, cleaned, at most ``MAX_QUERIES`` in all."""
    queries = [query]
    for line in reply.split("\n"):
        variant = line.strip().lstrip(_LEADING).strip()
        if variant and len(queries) < MAX_QUERIES:
            queries.append(variant)
    return queries


def fuse_hits(lists: Sequence[Sequence[Hit]], k: int, rrf_k: float = DEFAULT_RRF_K) -> list[Hit]:
    """RRF over hit lists keyed by the hits' ids (module docstring), cut to ``k``; a hit keeps its first text."""
    first: dict[tuple[str, ...], int] = {}
    hits: list[Hit] = []
    ranked = []
    for hit_list in lists:
        idx = []
        for h in hit_list:
            if h.ids not in first:
                first[h.ids] = len(hits)
                hits.append(h)
            idx.append(first[h.ids])
        ranked.append((np.array(idx, dtype=np.int64), np.zeros(len(idx))))
    ids, scores = fuse_rrf(ranked, rrf_k)
    return [Hit(hits[i].ids, float(s), hits[i].content) for i, s in zip(ids[:k].tolist(), scores[:k].tolist(),
                                                                        strict=True)]


class RewriteSystem:
    """The hybrid behind memini's query rewrite (module docstring)."""

    def __init__(self, hybrid: HybridSystem, complete: Complete, *, model: str = "", url: str = "",
                 name: str = NAME) -> None:
        self.hybrid = hybrid
        self.complete = complete
        self.model, self.url, self.name = model, url, name
        self.variants: dict[str, list[str]] = {}
        self.failures: dict[str, str] = {}
        self.timings_ms: dict[str, float] = {}

    @property
    def ingest_time_ms(self) -> float:
        return self.hybrid.ingest_time_ms

    @property
    def ingest_parts_ms(self) -> dict[str, float]:
        return self.hybrid.ingest_parts_ms

    def ingest(self, items: Sequence[Item]) -> None:
        self.hybrid.ingest(items)

    def _expand(self, query: str) -> list[str]:
        if not should_expand(query):
            return [query]
        try:
            reply = self.complete(EXPAND_SYSTEM, "Question: " + query)
        except BenchError as exc:
            self.failures[query] = str(exc)
            return [query]
        return parse_variants(query, reply)

    def prepare(self, queries: Sequence[str]) -> None:
        """Expand every distinct query not yet cached (``REWRITE_CONCURRENCY`` calls at once), then embed the
        originals and all variants in batches."""
        todo = [q for q in dict.fromkeys(queries) if q not in self.variants]
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=REWRITE_CONCURRENCY, thread_name_prefix="rewrite") as pool:
            for query, variants in zip(todo, pool.map(self._expand, todo), strict=True):
                self.variants[query] = variants
        self.timings_ms["rewrite_ms"] = self.timings_ms.get("rewrite_ms", 0.0) + (time.perf_counter() - t0) * 1e3
        attempted = sum(should_expand(q) for q in todo)
        failed = sum(q in self.failures for q in todo)
        if attempted and failed == attempted:
            last = list(self.failures.values())[-1]
            raise BenchError(f"{self.name}: all {attempted} rewrite calls to {self.url or 'the LLM'} failed (last: "
                             f"{last}); check MEMINI_LLM_BASE_URL, MEMINI_LLM_MODEL and the API key")
        if failed:
            print(f"{self.name}: {failed} of {attempted} rewrite calls failed; those queries ran unexpanded",
                  file=sys.stderr, flush=True)
        self.hybrid.prepare(queries)
        extra = [v for q in todo for v in self.variants[q][1:]]
        encoder = self.hybrid.backend.encoder
        if extra and encoder is not None:
            t1 = time.perf_counter()
            encoder.queries(extra)
            self.timings_ms["variant_embed_ms"] = (time.perf_counter() - t1) * 1e3

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        variants = self.variants.get(query)
        if variants is None:  # not prepared: expand now (the call is then inside the timed recall)
            variants = self.variants[query] = self._expand(query)
        if len(variants) <= 1:
            return self.hybrid.recall(group, query, k, now=now, context=context)
        lists = [self.hybrid.recall(group, v, k, now=now, context=context) for v in variants]
        return fuse_hits(lists, clamp_limit(k))

    def describe(self) -> dict:
        expanded = {q: v for q, v in self.variants.items() if len(v) > 1}
        return {**self.hybrid.describe(), "rewrite_model": self.model, "rewrite_url": self.url,
                "rewrite_prompt": EXPAND_SYSTEM, "rewrite_rrf_k": DEFAULT_RRF_K, "rewrite_max_queries": MAX_QUERIES,
                "queries": len(self.variants), "expanded": len(expanded), "rewrite_failures": len(self.failures),
                "rewrites": expanded, "timings_ms": dict(self.timings_ms)}


def make(ctx: SystemContext) -> RewriteSystem:
    """memini-hybrid-rewrite over the run's shared memini backend, with the ``MEMINI_LLM_*`` chat endpoint."""
    from memini_bench.clients.providers import openai_chat_from_env

    chat = openai_chat_from_env()
    hybrid = make_hybrid(ctx)
    assert isinstance(hybrid, HybridSystem)
    name = NAME + (f"/{ctx.label}" if ctx.label else "")
    return RewriteSystem(hybrid, chat.complete, model=chat.model, url=chat.url, name=name)
