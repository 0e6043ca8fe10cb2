"""The disk cache of embeddings: one SQLite file per embedder identity, rows ``sha256(text) -> float32 vector``.

The key covers everything that changes a vector: the embedder's ``identity`` (model, max tokens) and ``dims``
name the file; the text hashed is the final text sent to the model (prefix included, after truncation).
Writes are SQLite transactions (WAL journal), committed once per batch, so a killed run loses at most the batch
in flight and never corrupts the file. A damaged file (not a database on open; a damaged page met by a read or a
write) is reported on stderr, set aside as ``<file>.corrupt-<unix time>`` and rebuilt, never a crash. (Opening
does not run ``PRAGMA quick_check``: that reads the whole file, seconds for a large cache, and finds nothing a
read would not; a vector's bytes carry no checksum either way, hence the vector check.) Every vector read passes
the same check as a freshly embedded one (``embed.checks``: the declared length, finite, not all zero): one that
fails (e.g. NaN written by an older version) is reported, treated as a miss and re-embedded, and the new vector
replaces it.
A folder or file the cache cannot write (read-only folder or disk, no permission) is a one-line BenchError before
any work, never mistaken for damage: pass a writable ``-cache-dir`` or ``-no-cache``.
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

from memini_bench.embed.checks import sound_rows
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

    def __init__(self, directory: Path, identity: str, dims: int, *, allow_zero: bool = False) -> None:
        self.dims = dims
        self.allow_zero = allow_zero
        self.path = cache_file(directory, identity, dims)
        self.hits = 0
        self.misses = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BenchError(f"{self.path.parent}: cannot create the embedding cache ({exc.strerror}); "
                             "pass -cache-dir DIR or -no-cache") from None
        for target in (self.path.parent, self.path):
            if target.exists() and not os.access(target, os.W_OK):
                raise self._unusable(f"{'folder' if target.is_dir() else 'file'} {target} is not writable")
        self.db = self._open()

    def _unusable(self, why: object) -> BenchError:
        return BenchError(f"{self.path.parent}: cannot use the embedding cache here ({why}); pass -cache-dir with a "
                          "writable folder, or -no-cache")

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            self._set_aside(f"{exc}")
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        """Open (creating) the file; an OperationalError (cannot open or write: permissions, read-only disk, lock,
        I/O) is a BenchError, any other DatabaseError (not a database, failed check) means damage and propagates."""
        try:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except sqlite3.OperationalError as exc:
            raise self._unusable(exc) from None
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID")
        except sqlite3.OperationalError as exc:  # a subclass of DatabaseError: test it first
            db.close()
            raise self._unusable(exc) from None
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _set_aside(self, why: str) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
        print(f"memini-bench: warning: embedding cache {self.path} is damaged ({why}); moved it to {aside.name} "
              "and starting a fresh one", file=sys.stderr)
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                os.replace(src, Path(str(aside) + suffix))

    def _read(self, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        try:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start:start + _CHUNK]
                rows = self.db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(chunk))})",
                                       chunk).fetchall()
                found.update(rows)
        except sqlite3.OperationalError as exc:  # locked or an I/O error: not damage; embed instead
            print(f"memini-bench: warning: could not read the embedding cache {self.path} ({exc}); "
                  "embedding these texts instead", file=sys.stderr)
            return {}
        except sqlite3.DatabaseError as exc:
            self.db.close()
            self._set_aside(str(exc))
            self.db = self._connect()
            return {}
        return found

    def get_many(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """Each text's cached vector, or None (not cached, or cached but failing the vector check)."""
        keys = [text_key(t) for t in texts]
        found = self._read(keys)
        sized = [k for k, blob in found.items() if isinstance(blob, bytes) and len(blob) == 4 * self.dims]
        matrix = np.frombuffer(b"".join(found[k] for k in sized), dtype=np.float32).reshape(len(sized), self.dims)
        good = sound_rows(matrix, allow_zero=self.allow_zero)
        vectors = {k: row for k, row, ok in zip(sized, matrix.copy(), good, strict=True) if ok}
        faulty = len(found) - len(vectors)
        if faulty:
            print(f"memini-bench: warning: embedding cache {self.path}: {faulty} cached vectors failed the check "
                  "(wrong length, NaN/infinite or all zero); they will be re-embedded", file=sys.stderr)
        out: list[np.ndarray | None] = [vectors.get(k) for k in keys]
        self.hits += sum(v is not None for v in out)
        self.misses += sum(v is None for v in out)
        return out

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Save vectors (callers pass checked ones; a row failing the vector check is skipped, never saved)."""
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.shape != (len(texts), self.dims):
            raise ValueError(f"put_many: {matrix.shape} vectors for {len(texts)} texts of {self.dims} dims")
        good = sound_rows(matrix, allow_zero=self.allow_zero)
        rows = [(text_key(t), v.tobytes()) for t, v, ok in zip(texts, matrix, good, strict=True) if ok]
        for attempt in (1, 2):  # a damaged file is set aside once and the batch written to the fresh one
            try:
                with self.db:
                    self.db.execute("BEGIN")
                    self.db.executemany("INSERT OR REPLACE INTO vectors(key, vec) VALUES (?, ?)", rows)
                return
            except sqlite3.OperationalError as exc:  # locked, full or read-only: not damage
                self._not_saved(exc)
                return
            except sqlite3.DatabaseError as exc:
                self.db.close()
                if attempt == 1:
                    self._set_aside(str(exc))
                self.db = self._connect()
                if attempt == 2:
                    self._not_saved(exc)

    def _not_saved(self, exc: Exception) -> None:
        print(f"memini-bench: warning: could not write the embedding cache {self.path} ({exc}); "
              "continuing without saving", file=sys.stderr)

    def close(self) -> None:
        self.db.close()
