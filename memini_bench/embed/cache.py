"""The disk cache of embeddings: one SQLite file per embedder identity, rows ``sha256(text) -> float32 vector``.

The key covers everything that changes a vector: the embedder's ``identity`` (model, max tokens) and ``dims``
name the file; the text hashed is the final text sent to the model (prefix included, after truncation).
Writes are SQLite transactions (WAL journal), committed once per batch, so a killed run loses at most the batch
in flight and never corrupts the file. A damaged file (not a database, failed integrity check, a vector of the
wrong length) is reported on stderr, set aside as ``<file>.corrupt-<unix time>`` and rebuilt, never a crash.
Location: ``-cache-dir``, else ``$MEMINI_BENCH_CACHE``, else ``$XDG_CACHE_HOME/memini-bench`` (``~/.cache``).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memini_bench.errors import BenchError

_CHUNK = 500


def default_cache_dir() -> Path:
    if os.environ.get("MEMINI_BENCH_CACHE"):
        return Path(os.environ["MEMINI_BENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memini-bench"


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def cache_file(directory: Path, identity: str, dims: int) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._=-]+", "_", identity).strip("_")
    return Path(directory) / f"embeddings-{safe}-{dims}d.sqlite"


class DiskCache:
    """``get_many`` / ``put_many`` over one embedder identity's SQLite file (see the module docstring)."""

    def __init__(self, directory: Path, identity: str, dims: int) -> None:
        self.dims = dims
        self.path = cache_file(directory, identity, dims)
        self.hits = 0
        self.misses = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BenchError(f"{self.path.parent}: cannot create the embedding cache ({exc.strerror}); "
                             "pass -cache-dir DIR or -no-cache") from None
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            self._set_aside(f"{exc}")
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID")
            verdict = db.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {verdict}")
        except sqlite3.DatabaseError:
            db.close()
            raise
        except sqlite3.OperationalError as exc:
            db.close()
            raise BenchError(f"{self.path}: cannot use the embedding cache ({exc}); pass -cache-dir or -no-cache") \
                from None
        return db

    def _set_aside(self, why: str) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
        print(f"memini-bench: warning: embedding cache {self.path} is damaged ({why}); moved it to {aside.name} "
              "and starting a fresh one", file=sys.stderr)
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                os.replace(src, Path(str(aside) + suffix))

    def get_many(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        keys = [text_key(t) for t in texts]
        found: dict[bytes, bytes] = {}
        try:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start:start + _CHUNK]
                rows = self.db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(chunk))})",
                                       chunk).fetchall()
                found.update(rows)
        except sqlite3.DatabaseError as exc:
            self.db.close()
            self._set_aside(str(exc))
            self.db = self._connect()
            found = {}
        out: list[np.ndarray | None] = []
        bad = 0
        for key in keys:
            blob = found.get(key)
            if blob is not None and len(blob) != 4 * self.dims:
                bad += 1
                blob = None
            out.append(None if blob is None else np.frombuffer(blob, dtype=np.float32).copy())
        if bad:
            print(f"memini-bench: warning: embedding cache {self.path}: {bad} vectors of the wrong length "
                  "ignored; they will be re-embedded", file=sys.stderr)
        self.hits += sum(v is not None for v in out)
        self.misses += sum(v is None for v in out)
        return out

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = [(text_key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors, strict=True)]
        try:
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany("INSERT OR REPLACE INTO vectors(key, vec) VALUES (?, ?)", rows)
        except sqlite3.DatabaseError as exc:
            print(f"memini-bench: warning: could not write the embedding cache {self.path} ({exc}); "
                  "continuing without saving", file=sys.stderr)

    def close(self) -> None:
        self.db.close()
