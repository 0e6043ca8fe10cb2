"""``sqlite-vec`` and ``sqlite-vec-hybrid``: asg017/sqlite-vec (the vector extension memini's own store uses) on a
real SQLite database in the run's temp folder, through pysqlite3 (this Python's ``sqlite3`` cannot load
extensions).

``sqlite-vec``: one ``vec0`` table, the group as its partition key, float32 vectors from the run's encoder::

    CREATE VIRTUAL TABLE vec_items USING vec0(grp TEXT PARTITION KEY, embedding FLOAT[dims])
    SELECT rowid, distance FROM vec_items WHERE embedding MATCH :query AND k = :k AND grp = :group

vec0's KNN is exact (a full scan of the partition's chunks), distance L2 in float32; score ``1 / (1 + L2)`` as in
memini-vector. rowid = item index + 1. Ties: vec0 orders equal distances by descending rowid and, at the k
boundary, keeps the later rows; memini-vector (``retrieval.vector``) keeps item order. vec0's order is kept (the
hybrid's ``row_number`` spells it out): it only shows on equal distances, which MiniLM never produces on LoCoMo
(sqlite-vec and memini-vector rank all 1,982 questions identically there; their scores differ by < 2e-7), while
the hash embedder's orthogonal vectors tie often.

``sqlite-vec-hybrid``: the same database gets an FTS5 table (``content, grp UNINDEXED``, ``tokenize='porter
unicode61'``: memini's schema, global statistics, the group as a filter) and both legs are fused by Reciprocal Rank
Fusion in one SQL statement, following Alex Garcia's recipe in "Hybrid full-text search and vector search with
SQLite" (https://alexgarcia.xyz/blog/2024/sqlite-vec-hybrid-search/, 2024-10-02; the query Simon Willison quotes at
https://simonwillison.net/2024/Oct/4/hybrid-full-text-search-and-vector-search-with-sqlite/)::

    combined(d) = w_fts / (rrf_k + fts_rank(d)) + w_vec / (rrf_k + vec_rank(d))    (absent from a leg: 0)

with 1-based ``row_number()`` ranks, ``rrf_k`` 60 and both weights 1.0 (the post's example values), a FULL OUTER
JOIN of the legs and ``ORDER BY combined DESC`` (ties: rowid, for determinism). Each leg is fetched at the same
``:k`` as the final list, as the post does (``leg_depth`` "k": 10 at K=10, the recipe); ``sqlite-vec-hybrid-pool``
over-fetches each leg to memini's pool, ``max(5k, 50)`` (``systems.pool_size``; 50 at K=10), which is what the
``sqlite-vec-hybrid`` row followed before: with RRF k 60 the deeper legs let items ranked 11-50 by one leg
outscore items found by one leg only near its top, and turn-level R@5 / R@10 / MRR on LoCoMo fall from
59.3 / 70.1 / 40.3 (legs k deep) to 52.8 / 63.2 / 37.9 (docs/reference.md). The FTS5 query is memini's
(``"t1" OR "t2" ...`` over the question's ASCII terms, ``text.fts5_match_expression``; FTS5's default AND of raw
question words would match almost nothing and trips on punctuation), so the legs are exactly memini-keyword's
(FTS5 backend) and sqlite-vec's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np
import sqlite_vec
from pysqlite3 import dbapi2 as sqlite3

from memini_bench.core.contract import Hit, superseded
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.config import pool_size
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, library_version, require_encoder
from memini_bench.text import fts5_match_expression, query_terms

RRF_K = 60.0
LEG_DEPTHS = {"k": "k (each leg as deep as the final list: the post's :k)", "pool": "max(5k, 50) (memini's pool)"}
WEIGHT_FTS = 1.0
WEIGHT_VEC = 1.0

_KNN = "SELECT rowid, distance FROM vec_items WHERE embedding MATCH ? AND k = ? AND grp = ?"
_HYBRID = """
WITH vec_knn AS MATERIALIZED (
  SELECT rowid AS id, distance FROM vec_items WHERE embedding MATCH :query AND k = :depth AND grp = :grp
),
vec_matches AS (
  SELECT id, row_number() OVER (ORDER BY distance, id DESC) AS rank_number FROM vec_knn
),
fts_matches AS (
  SELECT rowid AS id, row_number() OVER (ORDER BY rank, rowid) AS rank_number
  FROM fts_items WHERE fts_items MATCH :expr AND grp = :grp ORDER BY rank, rowid LIMIT :depth
),
final AS (
  SELECT coalesce(fts_matches.id, vec_matches.id) AS id,
         coalesce(1.0 / (:rrf_k + fts_matches.rank_number), 0.0) * :w_fts
           + coalesce(1.0 / (:rrf_k + vec_matches.rank_number), 0.0) * :w_vec AS combined
  FROM fts_matches FULL OUTER JOIN vec_matches ON vec_matches.id = fts_matches.id
)
SELECT id, combined FROM final ORDER BY combined DESC, id LIMIT :k
"""


def connect(path: str) -> sqlite3.Connection:
    """A pysqlite3 connection with sqlite-vec loaded (extension loading switched off again afterwards)."""
    db = sqlite3.connect(path, check_same_thread=False)
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.enable_load_extension(False)
    return db


class SqliteVecSystem(PeerSystem):
    """Exact KNN in a vec0 table partitioned by group; ``hybrid`` adds FTS5 and RRF (see the module docstring).
    Writes over time: each ingest inserts, ``forget`` deletes the rows, ``update`` deletes and inserts."""

    incremental_ingest = True

    def __init__(self, encoder: TextEncoder, name: str = "sqlite-vec", *, hybrid: bool = False,
                 leg_depth: str = "k") -> None:
        super().__init__(name, encoder)
        if leg_depth not in LEG_DEPTHS:
            raise ValueError(f"leg_depth {leg_depth!r}: use one of {', '.join(LEG_DEPTHS)}")
        self.hybrid = hybrid
        self.leg_depth = leg_depth
        self.db: sqlite3.Connection | None = None

    def ingest(self, items: Sequence[Item]) -> None:
        """Insert the items not written before (each call adds: writes over time); rowid = item index + 1."""
        assert self.encoder is not None
        rows = self.add_items(items)
        if not rows:
            return
        vectors = np.ascontiguousarray(self.encoder.documents([self.items[i].content for i in rows]),
                                       dtype=np.float32)
        with self.store_writes():
            if self.db is None:
                self.db = connect(str(self.workdir() / "memories.db"))
                self.db.execute("CREATE VIRTUAL TABLE vec_items USING vec0(grp TEXT PARTITION KEY, "
                                f"embedding FLOAT[{vectors.shape[1]}])")
                if self.hybrid:
                    self.db.execute("CREATE VIRTUAL TABLE fts_items USING fts5(content, grp UNINDEXED, "
                                    "tokenize='porter unicode61')")
            db = self.db
            db.executemany("INSERT INTO vec_items(rowid, grp, embedding) VALUES (?, ?, ?)",
                           ((i + 1, self.items[i].group, vectors[n].tobytes()) for n, i in enumerate(rows)))
            if self.hybrid:
                db.executemany("INSERT INTO fts_items(rowid, content, grp) VALUES (?, ?, ?)",
                               ((i + 1, self.items[i].content, self.items[i].group) for i in rows))
            db.commit()

    def forget(self, item_id: str) -> None:
        """``DELETE`` of the item's rows (none: a no-op)."""
        assert self.db is not None, "ingest first"
        for i, it in enumerate(self.items):
            if it.id == item_id:
                with self.store_writes():
                    self.db.execute("DELETE FROM vec_items WHERE rowid = ?", (i + 1,))
                    if self.hybrid:
                        self.db.execute("DELETE FROM fts_items WHERE rowid = ?", (i + 1,))
                    self.db.commit()

    def update(self, item: Item) -> None:
        """The correction's rows in place of the superseded items' rows (delete, then insert)."""
        for old in superseded(item):
            self.forget(old)
        self.ingest((item,))

    def _query_blob(self, query: str) -> bytes:
        assert self.encoder is not None
        return np.ascontiguousarray(self.encoder.query(query), dtype=np.float32).tobytes()

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        assert self.db is not None, "ingest first"
        if k <= 0 or group not in self.groups.members:
            return []
        blob = self._query_blob(query)
        expr = fts5_match_expression(query_terms(query)) if self.hybrid else ""
        depth = pool_size(k) if self.hybrid and self.leg_depth == "pool" else k
        if not expr:  # sqlite-vec alone, or a question with no keyword term (the FTS leg is then empty)
            rows = self.db.execute(_KNN, (blob, depth, group)).fetchall()
            if self.hybrid:
                rows = [(rowid, WEIGHT_VEC / (RRF_K + rank)) for rank, (rowid, _) in enumerate(rows, start=1)]
            else:
                rows = [(rowid, 1.0 / (1.0 + distance)) for rowid, distance in rows]
        else:
            rows = self.db.execute(_HYBRID, {"query": blob, "expr": expr, "grp": group, "depth": depth,
                                             "k": k, "rrf_k": RRF_K, "w_fts": WEIGHT_FTS,
                                             "w_vec": WEIGHT_VEC}).fetchall()
        return self.hits(group, [r[0] - 1 for r in rows], [r[1] for r in rows], k)

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        super().close()

    def describe(self) -> dict:
        info: dict[str, object] = {
            "library": "sqlite-vec", "version": library_version("sqlite-vec"),
            "sqlite": sqlite3.sqlite_version, "pysqlite3_binary": library_version("pysqlite3-binary"),
            "index": "vec0, group as partition key, exact KNN, L2 distance, float32", "score": "1/(1+L2)",
            "dropped_other_group": self.dropped_other_group}
        if self.hybrid:
            info.update(score="RRF", fts="fts5(content, grp UNINDEXED), tokenize='porter unicode61', global "
                        "statistics, memini's OR-of-quoted-terms query", rrf_k=RRF_K, weight_fts=WEIGHT_FTS,
                        weight_vec=WEIGHT_VEC, leg_depth=LEG_DEPTHS[self.leg_depth],
                        recipe="alexgarcia.xyz/blog/2024/sqlite-vec-hybrid-search")
        return info


def make(ctx: SystemContext) -> SqliteVecSystem:
    """``sqlite-vec``: exact KNN in a vec0 table partitioned by group."""
    return SqliteVecSystem(require_encoder(ctx, "sqlite-vec"), "sqlite-vec")


def make_hybrid(ctx: SystemContext) -> SqliteVecSystem:
    """``sqlite-vec-hybrid``: vec0 + FTS5 in one database, fused by RRF (k 60) in SQL."""
    return SqliteVecSystem(require_encoder(ctx, "sqlite-vec-hybrid"), "sqlite-vec-hybrid", hybrid=True)


def make_hybrid_pool(ctx: SystemContext) -> SqliteVecSystem:
    """``sqlite-vec-hybrid-pool``: the same, each leg over-fetched to memini's pool max(5k, 50)."""
    return SqliteVecSystem(require_encoder(ctx, "sqlite-vec-hybrid-pool"), "sqlite-vec-hybrid-pool", hybrid=True,
                           leg_depth="pool")
