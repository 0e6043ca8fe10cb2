"""``ReferenceSettings``: every choice of the ``reference`` system, each a ``-ref-*`` flag and a sweep axis.

The defaults are the cell chosen by the committed search (``make reference-search``, ``docs/reference.md``):
leave-one-data-set-out over the tune splits of LoCoMo turn level, LoCoMo session level, the LongMemEval sample
with the shared haystack and BEAM 100K, the rule whose picks lose least on the data set they never saw. They are
not tuned on any held split.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import click

from memini_bench.core.settings import Int, Real, setting
from memini_bench.errors import BenchError
from memini_bench.retrieval.analyzer import IDFS, STATS, STEMMERS, STOPWORD_LISTS

FUSIONS = ("minmax", "rrf", "adaptive")


@dataclass(frozen=True)
class ReferenceSettings:
    """The reference system's settings (see ``systems.reference`` for what each does)."""

    GROUP = "reference"

    ref_stemmer: str = setting("ref-stemmer", "snowball", "reference keyword leg stemmer: FTS5 porter, Snowball "
                               "English (PyStemmer) or none.", type=click.Choice(STEMMERS))
    ref_stopwords: str = setting("ref-stopwords", "none", "reference keyword leg stop words: none, or the "
                                 "33-word English list of Lucene/Tantivy.", type=click.Choice(STOPWORD_LISTS))
    ref_bm25_idf: str = setting("ref-bm25-idf", "fts5", "reference BM25 IDF: lucene ln(1 + (N-n+.5)/(n+.5)) or "
                                "fts5 ln((N-n+.5)/(n+.5)) floored at 1e-6.", type=click.Choice(IDFS))
    ref_bm25_stats: str = setting("ref-bm25-stats", "global", "reference BM25 statistics: over all groups (global) "
                                  "or the searched group only.", type=click.Choice(STATS))
    ref_k1: float = setting("ref-k1", 1.2, "reference BM25 k1.", type=Real(min=0, max=100))
    ref_b: float = setting("ref-b", 0.75, "reference BM25 b.", type=Real(min=0, max=1))
    ref_fusion: str = setting("ref-fusion", "adaptive", "reference fusion: minmax (convex sum of min-max normalised "
                              "scores), rrf (weighted reciprocal rank fusion) or adaptive (minmax with alpha "
                              "re-weighted per query by how far each leg's top score stands out of its list).",
                              type=click.Choice(FUSIONS))
    ref_alpha: float = setting("ref-alpha", 0.5, "reference vector-leg weight in [0, 1] (keyword: 1 - alpha), for "
                               "minmax and weighted RRF (0.5 = plain RRF).", type=Real(min=0, max=1))
    ref_rrf_k: float = setting("ref-rrf-k", 60.0, "reference RRF k: 1/(k + rank), rank 1-based.",
                               type=Real(min=0, max=10000))
    ref_keyword_depth: int = setting("ref-keyword-depth", 50, "reference keyword leg depth (at least k).",
                                     type=Int(min=1, max=100000))
    ref_vector_depth: int = setting("ref-vector-depth", 50, "reference vector leg depth (at least k).",
                                    type=Int(min=1, max=100000))
    ref_session_weight: float = setting("ref-session-weight", 0.2, "reference session-level aggregation where "
                                        "items are turns: score = (1-w) x item + w x its session's; 0 = off.",
                                        type=Real(min=0, max=1))
    ref_temporal_boost: float = setting("ref-temporal-boost", 0.2, "reference temporal boost: score x (1 + B x "
                                        "proximity to the time the query names); 0 = off.", type=Real(min=0, max=100))
    ref_temporal_extractor: str = setting("ref-temporal-extractor", "extended", "reference time-phrase extractor "
                                          "(memini's regex, or extended).", type=click.Choice(["regex", "extended"]))
    ref_rerank_model: str = setting("ref-rerank-model", "", "reference cross-encoder stage: local:PATH of a "
                                    "sentence-transformers CrossEncoder; empty = off.")
    ref_rerank_depth: int = setting("ref-rerank-depth", 20, "reference cross-encoder stage: how many of the top "
                                    "candidates it re-orders.", type=Int(min=1, max=1000))

    def __post_init__(self) -> None:
        if self.ref_rerank_model and not self.ref_rerank_model.startswith("local:"):
            raise BenchError(f"-ref-rerank-model {self.ref_rerank_model!r}: use local:PATH (a local cross-encoder "
                             "folder), or leave it empty")

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def keyword_key(self) -> tuple:
        """What the keyword index depends on (indexes are shared by settings that agree on it)."""
        return (self.ref_stemmer, self.ref_stopwords, self.ref_bm25_idf, self.ref_bm25_stats, self.ref_k1,
                self.ref_b)
