"""The reference keyword backend: a real SQLite FTS5 table (``porter unicode61``) through Python's sqlite3.

Schema and query exactly as memini's store: ``fts5(content, summary, tags, tokenize='porter unicode61')`` holding
every item of every group (rowid = item index + 1), the query ``"t1" OR "t2" ...`` over the ASCII terms, score
``-bm25()``, filtered to the group, ties by rowid (dataset order).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from memini_bench.text import fts5_match_expression, query_terms


class FTS5BM25:
    def __init__(self, contents: Sequence[str], groups: Sequence[str]) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE fts_memories USING "
                        "fts5(content, summary, tags, tokenize='porter unicode61')")
        self.db.execute("CREATE TABLE memories (rowid INTEGER PRIMARY KEY, namespace TEXT NOT NULL)")
        self.db.executemany("INSERT INTO fts_memories(rowid, content, summary, tags) VALUES (?, ?, '', '')",
                            ((i + 1, c) for i, c in enumerate(contents)))
        self.db.executemany("INSERT INTO memories(rowid, namespace) VALUES (?, ?)",
                            ((i + 1, g) for i, g in enumerate(groups)))
        self.db.execute("CREATE INDEX memories_ns ON memories(namespace)")
        self.db.commit()

    def search(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        expr = fts5_match_expression(query_terms(query))
        if not expr or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0)
        rows = self.db.execute(
            "SELECT fts_memories.rowid, bm25(fts_memories) AS rank FROM fts_memories "
            "JOIN memories m ON m.rowid = fts_memories.rowid "
            "WHERE fts_memories MATCH ? AND m.namespace = ? ORDER BY rank, fts_memories.rowid LIMIT ?",
            (expr, group, k),
        ).fetchall()
        return (np.fromiter((r[0] - 1 for r in rows), dtype=np.int64, count=len(rows)),
                np.fromiter((-r[1] for r in rows), dtype=np.float64, count=len(rows)))
