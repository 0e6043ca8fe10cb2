"""``bm25s`` and ``bm25s-global``: the bm25s library (xhluca/bm25s) as a keyword memory, stemmed with PyStemmer.

What a builder following bm25s' README writes, with its defaults: ``bm25s.tokenize(texts, stemmer=...)``
(lower-cased, tokens ``(?u)\\b\\w\\w+\\b``, bm25s' English stop-word list of 33 words), ``bm25s.BM25()`` (the
``lucene`` variant, k1 1.5, b 0.75) and ``retrieve(query_tokens, k)``. The stemmer is PyStemmer's ``porter``
(Porter's original algorithm; bm25s' README shows ``Stemmer.Stemmer("english")``, i.e. Porter2, which a setting
could select). Lucene's BM25 as bm25s computes it::

    idf(t)   = ln(1 + (N - df_t + 0.5) / (df_t + 0.5))
    score(d) = sum_t idf(t) * tf_td / (tf_td + k1 * (1 - b + b * |d| / avgdl))

Groups. bm25s has no metadata filter; two ways keep a group's hits apart:

- ``bm25s`` (default): **one index per group**. N, df and avgdl are the group's own (LongMemEval's per-question
  haystack, one LoCoMo conversation), no document of another group can ever be scored, and the matrix each query
  touches is the group's. This is the default because isolation then holds by construction and a tenant's scores
  never depend on other tenants' data (what a multi-user memory store needs), not because of any figure.
- ``bm25s-global``: **one index over every group** (corpus statistics over all items, like memini's FTS5 table),
  queried with ``weight_mask`` = the group's items. The trap: the mask zeroes other groups' scores, but
  ``retrieve`` still returns k documents, so when fewer than k of the group's documents match, the top k is
  filled with score-0 documents of *other* groups. Hence the guard below.

Both keep only hits with score > 0: bm25s also returns k zero-score documents for a query none of whose terms
occur (all stop words, or unseen words), which are not matches. Ties keep bm25s' own order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import bm25s
import numpy as np
import Stemmer

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, library_version

SCOPES = ("group", "global")
DEFAULT_STEMMER = "porter"


class BM25sSystem(PeerSystem):
    """bm25s over the items, one index per group (``scope="group"``) or one global index with a group mask."""

    def __init__(self, name: str = "bm25s", *, scope: str = "group", stemmer: str = DEFAULT_STEMMER) -> None:
        if scope not in SCOPES:
            raise ValueError(f"scope {scope!r}: use one of {SCOPES}")
        super().__init__(name)
        self.scope = scope
        self.stemmer_name = stemmer
        self.stemmer = Stemmer.Stemmer(stemmer)
        self._indexes: dict[str, tuple[bm25s.BM25, np.ndarray]] = {}  # group (or "" for global) -> (index, items)
        self._masks: dict[str, np.ndarray] = {}

    def _tokenize(self, texts: Sequence[str]) -> bm25s.tokenization.Tokenized:
        return bm25s.tokenize(list(texts), stemmer=self.stemmer, show_progress=False)

    def _index(self, members: np.ndarray) -> bm25s.BM25:
        retriever = bm25s.BM25()
        retriever.index(self._tokenize([self.items[i].content for i in members.tolist()]), show_progress=False)
        return retriever

    def ingest(self, items: Sequence[Item]) -> None:
        self.keep_items(items)
        if self.scope == "group":
            self._indexes = {g: (self._index(members), members) for g, members in self.groups.members.items()}
            return
        everything = np.arange(len(self.items), dtype=np.int64)
        self._indexes = {"": (self._index(everything), everything)}
        for group, members in self.groups.members.items():
            mask = np.zeros(len(self.items), dtype=np.float32)
            mask[members] = 1.0
            self._masks[group] = mask

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        key = group if self.scope == "group" else ""
        if key not in self._indexes or group not in self.groups.members or k <= 0:
            return []
        retriever, members = self._indexes[key]
        depth = min(k, len(members))
        docs, scores = retriever.retrieve(self._tokenize([query]), k=depth, show_progress=False,
                                          weight_mask=self._masks.get(group))
        positive = scores[0] > 0  # the score > 0 guard (see the module docstring)
        return self.hits(group, members[docs[0][positive]], scores[0][positive], k)

    def describe(self) -> dict:
        defaults = bm25s.BM25()  # the settings every index here is built with
        return {"library": "bm25s", "version": library_version("bm25s"),
                "pystemmer_version": library_version("PyStemmer"), "scope": self.scope,
                "statistics": "per group" if self.scope == "group" else "global, weight_mask per group",
                "method": defaults.method, "k1": defaults.k1, "b": defaults.b,
                "stemmer": f"PyStemmer {self.stemmer_name}",
                "stopwords": f"bm25s english ({len(bm25s.stopwords.STOPWORDS_EN)} words)",
                "token_pattern": r"(?u)\b\w\w+\b", "lower": True, "score_guard": "score > 0",
                "dropped_other_group": self.dropped_other_group}


def make(ctx: SystemContext) -> BM25sSystem:
    """``bm25s``: one bm25s index per group."""
    return BM25sSystem("bm25s", scope="group")


def make_global(ctx: SystemContext) -> BM25sSystem:
    """``bm25s-global``: one bm25s index over all groups, queried with the group as ``weight_mask``."""
    return BM25sSystem("bm25s-global", scope="global")
