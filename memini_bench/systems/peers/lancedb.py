"""``lancedb``, ``lancedb-fts`` and ``lancedb-hybrid``: LanceDB (lancedb/lancedb, embedded, on a local folder) as a
memory store over the run's shared vectors.

Each system writes one table to its own temporary folder (``lancedb.connect(folder)``): ``row`` (the item's index),
``grp`` (its group), ``text`` (its content) and, for the two systems that search vectors, ``vector`` (float32, the
run's encoder's document vectors). Every query is restricted to the question's group by
``where("grp = '<group>'", prefilter=True)``: the filter runs *before* the top k is taken, so a group always gets
its own k best (a post-filter would cut the global top k down to the group's share of it).

- ``lancedb``: ``search(vector).distance_type("l2").limit(k)``. No vector index is built, so LanceDB scans every
  row of the group (flat search): exact KNN, no recall lost to an approximate index. LanceDB's ``l2`` is the
  *squared* distance d²; the hit's score is ``1 / (1 + d)``, memini-vector's scale (same order either way).
- ``lancedb-fts``: LanceDB's native full-text index (``create_index("text", config=FTS())``, the defaults a builder
  gets: ``simple`` tokenizer (split on whitespace and punctuation), lower case, English stemming, English stop
  words removed, ASCII folding, tokens over 40 characters dropped), queried with ``search(MatchQuery(query,
  "text"), query_type="fts")``: the user's text as plain words (``plain_text``; a quoted string is no phrase query),
  BM25 scores as LanceDB computes them.
- ``lancedb-hybrid``: both legs in one ``search(query_type="hybrid").vector(v).text(query)`` fused by LanceDB's
  ``RRFReranker`` (K 60: ``score = sum 1 / (60 + rank)``, ranks from 1). Each leg is fetched ``limit(k)`` deep,
  LanceDB's own default. Deeper legs make this hybrid *worse*: with each leg 5 x k deep and the fused list cut to
  k, LoCoMo turn level (MiniLM) fell from R@5 61.2% to 53.8% (RRF rewards an item ranked middling in both legs
  over one ranked first in one), so the library default stands.

The ``where`` literal doubles any single quote in the group name (SQL string escaping).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS
from lancedb.query import MatchQuery
from lancedb.rerankers import RRFReranker

from memini_bench.core.contract import Hit, superseded
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, library_version, require_encoder

MODES = ("vector", "fts", "hybrid")
TABLE = "items"
RRF_K = 60  # RRFReranker's default, recorded in describe()


def group_filter(group: str) -> str:
    """The prefilter selecting ``group``'s rows (single quotes doubled, as SQL escapes them)."""
    return "grp = '" + group.replace("'", "''") + "'"


def plain_text(query: str) -> MatchQuery:
    """The user's text as a plain full-text match on ``text``: a query string LanceDB would parse (``"a b"`` is a
    phrase query, which an index built without positions refuses, ending the run) is matched as its words, with
    the same BM25 scores as the parsed string for text without quotes."""
    return MatchQuery(query, "text")


class LanceSystem(PeerSystem):
    """LanceDB over the items: flat vector search, native FTS, or both fused by its RRFReranker (``mode``). Writes
    over time: each ingest adds rows, ``forget`` deletes the item's row, ``update`` deletes and adds."""

    incremental_ingest = True

    def __init__(self, name: str, mode: str, encoder: TextEncoder | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: use one of {MODES}")
        super().__init__(name, encoder if mode != "fts" else None)
        self.mode = mode
        self.table: lancedb.table.Table | None = None
        self.fts = FTS()  # LanceDB's defaults, recorded in describe()

    def ingest(self, items: Sequence[Item]) -> None:
        """Write the items not written before: the first call creates the table, a later one ``add``s rows (writes
        over time; the full-text index is then rebuilt, as LanceDB leaves new rows out of an existing index)."""
        rows = self.add_items(items)
        if not rows:
            return
        new = [self.items[i] for i in rows]
        columns: dict[str, pa.Array] = {
            "row": pa.array(np.asarray(rows, dtype=np.int64)),
            "grp": pa.array([it.group for it in new], pa.string()),
            "text": pa.array([it.content for it in new], pa.string()),
        }
        if self.encoder is not None:
            vectors = np.ascontiguousarray(self.encoder.documents([it.content for it in new]), np.float32)
            columns["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1])
        with self.store_writes():
            if self.table is None:
                db = lancedb.connect(str(self.workdir()))
                self.table = db.create_table(TABLE, data=pa.table(columns))
            else:
                self.table.add(pa.table(columns))
            if self.mode != "vector":
                self.table.create_index("text", config=self.fts, replace=True)

    def forget(self, item_id: str) -> None:
        """``table.delete`` of the item's row (none: a no-op)."""
        assert self.table is not None, "ingest first"
        rows = [i for i, it in enumerate(self.items) if it.id == item_id]
        if rows:
            with self.store_writes():
                self.table.delete(f"row = {rows[0]}")

    def update(self, item: Item) -> None:
        """The correction's row in place of the superseded items' rows: ``delete`` then ``add`` (an upsert)."""
        for old in superseded(item):
            self.forget(old)
        self.ingest((item,))

    def _query(self, group: str, query: str, k: int):
        assert self.table is not None, "ingest first"
        if self.mode == "fts":
            search = self.table.search(plain_text(query), query_type="fts")
        elif self.mode == "vector":
            search = self.table.search(self._vector(query), vector_column_name="vector").distance_type("l2")
        else:
            search = (self.table.search(query_type="hybrid", vector_column_name="vector").vector(self._vector(query))
                      .text(plain_text(query)).rerank(RRFReranker(K=RRF_K)))
        return search.where(group_filter(group), prefilter=True).limit(k).to_arrow()

    def _vector(self, query: str) -> np.ndarray:
        assert self.encoder is not None
        return np.asarray(self.encoder.query(query), dtype=np.float32)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        if k <= 0 or group not in self.groups.members or (self.mode != "vector" and not query.strip()):
            return []
        found = self._query(group, query, k)
        rows = found.column("row").to_numpy()
        if self.mode == "vector":
            scores = 1.0 / (1.0 + np.sqrt(np.maximum(found.column("_distance").to_numpy(), 0.0)))
        else:
            scores = found.column("_score" if self.mode == "fts" else "_relevance_score").to_numpy()
        return self.hits(group, rows, scores, k)

    def describe(self) -> dict:
        out: dict[str, object] = {"library": "lancedb", "version": library_version("lancedb"), "mode": self.mode,
                                  "group_filter": "where grp = <group>, prefilter=True"}
        if self.mode != "fts":
            out["vector_search"] = "flat (no vector index: exact), distance_type l2, score 1/(1+L2)"
        if self.mode != "vector":
            fts = self.fts
            out["fts"] = {"index": "native (not tantivy)", "base_tokenizer": fts.base_tokenizer,
                          "language": fts.language, "lower_case": fts.lower_case, "stem": fts.stem,
                          "remove_stop_words": fts.remove_stop_words, "ascii_folding": fts.ascii_folding,
                          "max_token_length": fts.max_token_length, "with_position": fts.with_position}
        if self.mode == "hybrid":
            out["fusion"] = f"RRFReranker(K={RRF_K}), each leg limit(k)"
        out["dropped_other_group"] = self.dropped_other_group
        return out

    def close(self) -> None:
        self.table = None
        super().close()


def make(ctx: SystemContext) -> LanceSystem:
    """``lancedb``: exact (flat) L2 vector search with the group as a prefilter."""
    return LanceSystem("lancedb", "vector", require_encoder(ctx, "lancedb"))


def make_fts(ctx: SystemContext) -> LanceSystem:
    """``lancedb-fts``: LanceDB's native full-text index (its default tokenizer, stemmer and stop words)."""
    return LanceSystem("lancedb-fts", "fts")


def make_hybrid(ctx: SystemContext) -> LanceSystem:
    """``lancedb-hybrid``: vector + native FTS, fused by LanceDB's RRFReranker."""
    return LanceSystem("lancedb-hybrid", "hybrid", require_encoder(ctx, "lancedb-hybrid"))
