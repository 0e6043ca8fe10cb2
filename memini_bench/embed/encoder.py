"""The encoder between systems and an embedder: memini's query/document prefixes, truncation, de-duplication.

Documents are embedded as ``doc_prefix + text`` and queries as ``query_prefix + text`` (no separator, as memini
does). Each text is cut to ``embedder.max_chars`` characters before embedding. Identical texts are embedded once
per run (an in-memory memo keyed by the final text), and an optional ``cache`` (the disk cache) is consulted first.
What is left is embedded longest first, piece by piece (``embedding_plan``: a sentence-transformers model's own
batches, one per call, so the vectors are those of one ``model.encode`` call); each piece's vectors pass
``embed.checks.validate_vectors`` (the declared length, finite, not all zero unless the embedder sets
``allows_zero_vectors``) before they are memoised or saved to the cache, so a bad vector is a one-line BenchError
and never reaches the disk.

``chunk_map`` (set by ``executors.run_encoder`` for ``-executor ray``) embeds the chunks elsewhere: it gets the
chunks and yields each chunk's raw vectors in order; validation, the cache writes and the memo stay here. None (the
default) calls ``embedder.encode`` on each chunk in this process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from memini_bench.embed.base import Embedder
from memini_bench.embed.checks import validate_vectors
from memini_bench.errors import BenchError
from memini_bench.progress import Task

CHUNK = 1024  # texts per cache commit, per executor chunk, and at most per embedding call
PIECE_CHARS = 1 << 17  # an embedder without batches of its own gets pieces of at most this many characters


def embedding_plan(embedder: Embedder, texts: list[str], *, tokens: bool = True) -> tuple[list[list[str]], list[float]]:
    """The pieces ``texts`` are embedded in, one ``encode`` call each, and each piece's work (the ETA's weight).

    An embedder with ``batches`` (sentence-transformers) gets one piece per batch of its own, in its order; the
    work of a batch is its size times its longest ``token_counts`` entry (the padded tokens the model computes;
    characters where the embedder cannot count tokens, or ``tokens`` is False: an executor embeds elsewhere, so
    this process never loads the model for the tokenizer). Any other embedder gets the texts longest first in pieces
    of at most ``CHUNK`` texts and ``PIECE_CHARS`` characters (times its ``concurrency``, for one that sends
    requests in parallel), so progress moves on long texts too; the work of a piece is its characters."""
    batches = getattr(embedder, "batches", None)
    if batches is not None:
        order = batches(texts)
        pieces = [[texts[i] for i in index] for index in order]
        counts = None
        if tokens:
            try:
                counts = np.asarray(embedder.token_counts(texts), dtype=np.float64)  # type: ignore[attr-defined]
            except BenchError:
                raise  # the model cannot load: the run's one-line error, not a fallback
            except Exception:  # the weights only steer the ETA: never fail a run over them
                counts = None
        if counts is None:
            counts = np.fromiter(map(len, texts), dtype=np.float64, count=len(texts))
        return pieces, [float(len(index) * counts[index].max()) if len(index) else 0.0 for index in order]
    budget = PIECE_CHARS * max(1, int(getattr(embedder, "concurrency", 1) or 1))
    pieces, work, piece, chars = [], [], [], 0
    for text in sorted(texts, key=len, reverse=True):
        if piece and (len(piece) >= CHUNK or chars + len(text) > budget):
            pieces.append(piece)
            work.append(float(chars))
            piece, chars = [], 0
        piece.append(text)
        chars += len(text)
    if piece:
        pieces.append(piece)
        work.append(float(chars))
    return pieces, work


def group_pieces(pieces: list[list[str]], work: list[float], size: int) -> tuple[list[list[str]], list[float]]:
    """Consecutive whole pieces joined into groups of at least ``size`` texts (the last may be smaller)."""
    groups: list[list[str]] = []
    weights: list[float] = []
    for piece, weight in zip(pieces, work, strict=True):
        if not groups or len(groups[-1]) >= size:
            groups.append([])
            weights.append(0.0)
        groups[-1].extend(piece)
        weights[-1] += weight
    return groups, weights


class VectorCache(Protocol):
    """A persistent text -> vector store for one embedder identity (see embed.cache)."""

    def get_many(self, texts: Sequence[str]) -> list[np.ndarray | None]: ...

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None: ...


class TextEncoder:
    """Prefixes, truncates, de-duplicates and caches in front of an ``Embedder``."""

    def __init__(self, embedder: Embedder, *, query_prefix: str = "", doc_prefix: str = "",
                 cache: VectorCache | None = None) -> None:
        self.embedder = embedder
        self.query_prefix = query_prefix
        self.doc_prefix = doc_prefix
        self.cache = cache
        self._memo: dict[str, np.ndarray] = {}
        self.embedded = 0  # texts actually sent to the embedder this run
        self.chunk_map: Callable[[Sequence[Sequence[str]]], Iterator[np.ndarray]] | None = None
        self._background = None  # a BackgroundJob started by start_documents, collected by the next encode
        self.encode_ms = 0.0  # wall time inside encode (memo, cache, embedder, the wait for a background job)

    @property
    def dims(self) -> int:
        return self.embedder.dims

    def _cut(self, text: str) -> str:
        limit = self.embedder.max_chars
        return text if limit is None else text[:limit]

    def start_documents(self, texts: Sequence[str]) -> None:
        """Start embedding ``texts`` (as documents) on another core, for an embedder that allows it
        (``embed.background``: a large batch, an embedder that works without the GIL, no cache, no executor); the
        next ``encode`` collects the vectors. Otherwise nothing starts, and ``documents`` embeds in process."""
        from memini_bench.embed import background

        if self._background is not None or self.cache is not None or self.chunk_map is not None:
            return
        final = [self._cut(self.doc_prefix + t) for t in texts]
        missing = list(dict.fromkeys(t for t in final if t not in self._memo))
        if missing and background.can_run_beside(self.embedder, missing):
            self._background = background.BackgroundJob(self.embedder, missing, CHUNK)

    def _collect_background(self) -> None:
        job, self._background = self._background, None
        with Task(f"embedding {len(job.texts)} texts on another core"):
            raw = job.collect()
        if raw is not None:  # else the child failed: encode embeds these texts in process
            self._store(job.texts, raw)

    def clock(self) -> tuple[float, float]:
        """``(model_load_ms, embed_ms)`` so far: the embedder's one model load (its ``load_ms``, 0 for one that
        loads nothing), and the time spent getting vectors apart from it (``encode_ms - model_load_ms``)."""
        load = float(getattr(self.embedder, "load_ms", 0.0) or 0.0)
        return load, max(0.0, self.encode_ms - load)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed already prefixed texts: memo, then cache, then the embedder for what is left (each once)."""
        t0 = time.perf_counter()
        try:
            return self._encode(texts)
        finally:
            self.encode_ms += (time.perf_counter() - t0) * 1e3

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if self._background is not None:
            self._collect_background()
        final = [self._cut(t) for t in texts]
        missing = list(dict.fromkeys(t for t in final if t not in self._memo))
        if missing and self.cache is not None:
            for text, vec in zip(missing, self.cache.get_many(missing), strict=True):
                if vec is not None:
                    self._memo[text] = vec
            missing = [t for t in missing if t not in self._memo]
        if missing:
            self._embed(missing)
        if not final:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.stack([self._memo[t] for t in final])

    def _embed(self, texts: list[str]) -> None:
        """Embed ``texts`` piece by piece (``embedding_plan``), longest first; each piece's vectors are checked and
        memoised as it is done and tick the progress (weighted by its work, so the ETA holds from the first
        piece); the cache is written every ``CHUNK`` texts and at the end (a killed run keeps what it embedded,
        less at most one chunk). With ``chunk_map`` the pieces go out grouped into chunks of ``CHUNK`` texts or
        more (whole pieces: an executor's worker forms the same batches)."""
        pieces, work = embedding_plan(self.embedder, texts, tokens=self.chunk_map is None)
        if self.chunk_map is not None:
            pieces, work = group_pieces(pieces, work, CHUNK)
        pending: list[tuple[list[str], np.ndarray]] = []
        with Task(f"embedding {len(texts)} texts", len(texts), "texts", work=float(sum(work))) as task:
            raws = (self.embedder.encode(p) for p in pieces) if self.chunk_map is None else self.chunk_map(pieces)
            try:
                for piece, raw, weight in zip(pieces, raws, work, strict=True):
                    vectors = self._check(piece, raw)
                    self._memo.update(zip(piece, vectors, strict=True))
                    pending.append((piece, vectors))
                    if sum(len(p) for p, _ in pending) >= CHUNK:
                        self._save(pending)
                    task.tick(len(piece), work=weight)
            finally:
                self._save(pending)

    def _check(self, texts: Sequence[str], raw: np.ndarray) -> np.ndarray:
        allow_zero = bool(getattr(self.embedder, "allows_zero_vectors", False))
        vectors = validate_vectors(raw, count=len(texts), dims=self.dims, allow_zero=allow_zero,
                                   source=f"embedder {self.embedder.identity}")
        self.embedded += len(texts)
        return vectors

    def _save(self, pending: list[tuple[list[str], np.ndarray]]) -> None:
        """Write the checked vectors of ``pending`` to the disk cache in one transaction, and empty it."""
        if pending and self.cache is not None:
            texts = [t for piece, _ in pending for t in piece]
            self.cache.put_many(texts, pending[0][1] if len(pending) == 1 else np.concatenate([v for _, v in pending]))
        pending.clear()

    def _store(self, texts: Sequence[str], raw: np.ndarray) -> None:
        """Check freshly embedded vectors (``validate_vectors``), then save them to the cache and the memo."""
        vectors = self._check(texts, raw)
        if self.cache is not None:
            self.cache.put_many(texts, vectors)
        self._memo.update(zip(texts, vectors, strict=True))

    def memo_items(self) -> tuple[list[str], np.ndarray]:
        """Every final text embedded (or read from the cache) so far and its vector, in the order first seen."""
        texts = list(self._memo)
        if not texts:
            return [], np.zeros((0, self.dims), dtype=np.float32)
        return texts, np.stack([self._memo[t] for t in texts])

    def remember(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Add known (final text, vector) pairs to the memo: a worker handed the driver's vectors embeds nothing."""
        self._memo.update(zip(texts, vectors, strict=True))

    def describe(self) -> dict[str, object]:
        """What the results config records about the embedding side of a run."""
        embedder = self.embedder
        out: dict[str, object] = {"embed_model": embedder.identity, "embed_dims": self.dims,
                                  "query_prefix": self.query_prefix, "doc_prefix": self.doc_prefix,
                                  "embed_max_chars": embedder.max_chars}
        max_tokens = getattr(embedder, "max_tokens", None)
        if max_tokens is not None:
            out["max_tokens"] = max_tokens
        if self.cache is not None:
            # the cache file's name (its model and dims), not its folder: a results file names no machine's paths
            out["embed_cache"] = {"file": Path(str(getattr(self.cache, "path", ""))).name,
                                  "hits": getattr(self.cache, "hits", None),
                                  "misses": getattr(self.cache, "misses", None)}
        out["texts_embedded"] = self.embedded
        return out

    def cached_count(self, texts: Sequence[str], *, queries: bool = False) -> tuple[int, int]:
        """(distinct texts, how many of them the memo or the disk cache already holds) for documents (or
        ``queries``) about to be embedded (``--plan``; the disk cache counts this read in its hits and misses)."""
        prefix = self.query_prefix if queries else self.doc_prefix
        final = list(dict.fromkeys(self._cut(prefix + t) for t in texts))
        missing = [t for t in final if t not in self._memo]
        if missing and self.cache is not None:
            found = self.cache.get_many(missing)
            missing = [t for t, vec in zip(missing, found, strict=True) if vec is None]
        return len(final), len(final) - len(missing)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed many queries at once (batched), so later ``query`` calls are memo look-ups."""
        return self.encode([self.query_prefix + t for t in texts])

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode([self.doc_prefix + t for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self.encode([self.query_prefix + text])[0]
