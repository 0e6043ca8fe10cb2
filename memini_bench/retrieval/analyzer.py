"""Text analyzers for the reference system's keyword leg: tokenizer, optional stop words, stemmer.

Tokenizer rules (the same for documents and queries): SQLite FTS5's ``unicode61`` tokens (``text.folded_tokens``:
a token is a maximal run of Unicode letters, digits and private-use characters, lower-cased and with diacritics
removed, so ``"Caroline's"`` -> ``caroline``, ``s``; ``well-being`` -> ``well``, ``being``; ``café`` -> ``cafe``).
Tokens of one character are kept (FTS5 and Lucene keep them). Then, in this order:

1. stop words (``stopwords``): ``none``, or ``english``: the 33-word English list of Lucene's
   ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``, which Tantivy's and LanceDB's English stop-word filters and bm25s'
   ``STOPWORDS_EN`` use too (``ENGLISH_STOP_WORDS`` below). A stop word is removed before stemming and does not
   count towards the document length.
2. stemmer (``stemmer``): ``porter`` (FTS5's Porter, ``text.porter_stem``: what memini's keyword leg indexes),
   ``snowball`` (Snowball English, a.k.a. Porter2, through PyStemmer: what Lucene's, Tantivy's and LanceDB's
   English analyzers use), or ``none``.

``Analyzer(stemmer, stopwords).terms(text)`` returns the terms in text order, repeats kept. Each distinct token is
stemmed once per analyzer (a dict cache).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memini_bench.errors import BenchError
from memini_bench.text import folded_tokens, porter_stem

STEMMERS = ("porter", "snowball", "none")
STOPWORD_LISTS = ("none", "english")
# The BM25 choices of the reference keyword leg (retrieval.bm25_analyzed): listed here, without scipy, so the CLI
# can offer them as flag choices without importing it.
IDFS = ("lucene", "fts5")
STATS = ("global", "group")
# Lucene EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (= Tantivy's English list = bm25s STOPWORDS_EN).
ENGLISH_STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
    "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
    "will", "with"))


def _snowball():
    try:
        import Stemmer
    except ImportError:
        from memini_bench.core.registry import missing_extra

        raise missing_extra("the reference analyzer's Snowball stemmer", "reference", "PyStemmer") from None
    return Stemmer.Stemmer("english").stemWord


@dataclass
class Analyzer:
    """One keyword analyzer (see the module docstring)."""

    stemmer: str = "porter"
    stopwords: str = "none"
    _cache: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.stemmer not in STEMMERS:
            raise BenchError(f"-ref-stemmer {self.stemmer!r}: unknown; use one of {', '.join(STEMMERS)}")
        if self.stopwords not in STOPWORD_LISTS:
            raise BenchError(f"-ref-stopwords {self.stopwords!r}: unknown; use one of {', '.join(STOPWORD_LISTS)}")
        self._stem = {"porter": porter_stem, "snowball": _snowball() if self.stemmer == "snowball" else None,
                      "none": str}[self.stemmer]
        self._stop = ENGLISH_STOP_WORDS if self.stopwords == "english" else frozenset()

    def terms(self, text: str) -> list[str]:
        cache, stem, stop = self._cache, self._stem, self._stop
        out = []
        for token in folded_tokens(text):
            if token in stop:
                continue
            term = cache.get(token)
            if term is None:
                term = cache[token] = stem(token)
            out.append(term)
        return out

    def describe(self) -> dict:
        return {"tokenizer": "FTS5 unicode61 (folded, diacritics removed, 1-char tokens kept)",
                "stopwords": "none" if self.stopwords == "none" else
                f"english (Lucene/Tantivy, {len(ENGLISH_STOP_WORDS)} words)",
                "stemmer": {"porter": "FTS5 porter", "snowball": "Snowball English (PyStemmer)",
                            "none": "none"}[self.stemmer]}
