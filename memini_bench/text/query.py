"""memini's keyword query side: terms, the FTS5 MATCH expression, and the stems BM25 sums over."""

from __future__ import annotations

import re

from memini_bench.text.go_strings import go_lower
from memini_bench.text.unicode61 import tokenize

_QUERY_TERM_RE = re.compile(r"[a-z0-9]+")


def query_terms(query: str) -> list[str]:
    """memini's keyword terms: maximal ``[a-z0-9]`` runs of the query lowercased by Go's ``strings.ToLower``
    (``go_lower``: "İstanbul" is one term, ``istanbul``), length >= 2."""
    return [t for t in _QUERY_TERM_RE.findall(go_lower(query)) if len(t) >= 2]


def fts5_match_expression(terms: list[str]) -> str:
    """``"t1" OR "t2" ...``: each term double-quoted (quotes doubled), or ``""`` for none."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def query_stems(query: str) -> list[str]:
    """What FTS5 makes of each quoted term of ``query`` (duplicates kept, in order)."""
    out: list[str] = []
    for term in query_terms(query):
        out.extend(tokenize(term))
    return out
