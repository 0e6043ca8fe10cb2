"""Embedding on the second core while the caller builds its other indexes (``TextEncoder.start_documents``).

A pure-CPU in-process embedder that declares ``forks = True`` (the hash embedders: no threads, no device, no
network) may embed a large batch in a forked child process: the child inherits the texts through fork (nothing
is pickled on the way in), embeds them in ``CHUNK``-sized pieces exactly as the parent would, and sends the
float32 matrix back. Only worth a fork for a large batch (``MIN_CHARS`` characters in all) on a machine with two
or more CPUs where ``fork`` exists; otherwise nothing starts and the encoder embeds in process as usual. The
vectors are the same bits either way (the same function on the same texts); a child that fails for any reason
is reported by ``collect`` as None, and the encoder then embeds in process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor

import numpy as np

MIN_CHARS = 5_000_000  # below this, embedding in process is quicker than a fork and the transfer back
_JOB: tuple[object, Sequence[str], int] | None = None  # read by the forked child (inherited, not pickled)


def _run_job() -> np.ndarray:
    embedder, texts, chunk = _JOB  # type: ignore[misc]
    parts = [embedder.encode(list(texts[i:i + chunk])) for i in range(0, len(texts), chunk)]  # type: ignore[attr-defined]
    return np.concatenate(parts) if parts else np.zeros((0, embedder.dims), dtype=np.float32)  # type: ignore


def can_fork(embedder: object, texts: Sequence[str]) -> bool:
    return (bool(getattr(embedder, "forks", False)) and (os.cpu_count() or 1) >= 2
            and "fork" in multiprocessing.get_all_start_methods() and sum(map(len, texts)) >= MIN_CHARS)


class BackgroundJob:
    """One batch being embedded in a forked child (see the module docstring)."""

    def __init__(self, embedder: object, texts: list[str], chunk: int) -> None:
        global _JOB
        self.texts = texts
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
        _JOB = (embedder, texts, chunk)
        try:
            self._future: Future = self._pool.submit(_run_job)  # the worker forks here, seeing _JOB
        finally:
            _JOB = None

    def collect(self) -> np.ndarray | None:
        """The child's vectors (one row per text, in order), or None when it failed."""
        try:
            return self._future.result()
        except Exception:  # a dead child, a pickling or memory failure: embed in process instead
            return None
        finally:
            self._pool.shutdown(wait=True)
