"""Embedding on the second core while the caller builds its other indexes (``TextEncoder.start_documents``).

An in-process embedder whose ``encode`` spends most of its time without the GIL declares ``gil_free = True`` (the
``hash`` embedder where its compiled word scan, ``text._words.hash_buckets``, was built: the scan releases the
GIL). A large batch (``MIN_CHARS`` characters in all, on a machine with two or more CPUs) is then embedded by a
thread of this process, in ``CHUNK``-sized pieces exactly as the caller would, while the caller's thread builds
its other indexes: the texts and the vectors are shared, not copied into another process (a forked child used to
be, and its pages counted twice in the run's memory). Otherwise nothing starts and the encoder embeds as usual.
The vectors are the same bits either way (the same function on the same texts); a job that fails for any reason
is reported by ``collect`` as None, and the encoder then embeds the batch itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

MIN_CHARS = 5_000_000  # below this, the overlap is too short to be worth a thread


def can_run_beside(embedder: object, texts: Sequence[str]) -> bool:
    """Whether ``texts`` are worth embedding on a thread beside the caller's (see the module docstring)."""
    return (bool(getattr(embedder, "gil_free", False)) and (os.cpu_count() or 1) >= 2
            and sum(map(len, texts)) >= MIN_CHARS)


class BackgroundJob:
    """One batch being embedded by a daemon thread (see the module docstring)."""

    def __init__(self, embedder: object, texts: list[str], chunk: int) -> None:
        self.texts = texts
        self._vectors: np.ndarray | None = None
        self._thread = threading.Thread(target=self._run, args=(embedder, chunk), name="memini-bench-embed",
                                        daemon=True)
        self._thread.start()

    def _run(self, embedder: object, chunk: int) -> None:
        texts = self.texts
        try:
            parts = [embedder.encode(texts[i:i + chunk]) for i in range(0, len(texts), chunk)]  # type: ignore
            self._vectors = (np.concatenate(parts) if parts
                             else np.zeros((0, embedder.dims), dtype=np.float32))  # type: ignore[attr-defined]
        except BaseException:  # noqa: BLE001 - any failure: collect says None, and the encoder embeds in process
            self._vectors = None

    def collect(self) -> np.ndarray | None:
        """The job's vectors (one row per text, in order), or None when it failed."""
        self._thread.join()
        return self._vectors
