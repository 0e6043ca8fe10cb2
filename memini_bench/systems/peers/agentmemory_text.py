"""agentmemory's keyword side re-implemented in Python: its tokenizer, its Porter-like stemmer and its BM25.

Followed: ``src/state/search-index.ts`` and ``src/state/stemmer.ts`` of agentmemory (rohitg00/agentmemory; the
versions read are in the fork nowwcastle-sudo/agentmemory at commit f66df07641621b9901eea66d05f3c20433203379, the
commit that also holds the ``benchmark/longmemeval-bench.ts`` behind its published LongMemEval numbers).

Tokenizer (``tokenize``): the text is lower-cased; every character that is not a letter (``\\p{L}``), a number
(``\\p{N}``), whitespace, ``/``, ``.`` or one of ``\\ ] ^ _`` becomes a space (its JS class
``[^\\p{L}\\p{N}\\s/.\\\\-_]`` holds the *range* ``\\``-``_``, so ``-`` is not kept while ``]`` and ``^`` are);
the text is split on whitespace; pieces shorter than 2 characters are dropped; every other piece is stemmed. So a
sentence-final ``dog.`` stays ``dog.`` and does not equal the query term ``dog`` (prefix expansion, below, still
reaches it).
Differences: Python's ``\\w`` stands for ``\\p{L}\\p{N}_`` (it also keeps the few non-N characters with a numeric value)
and its whitespace differs from JS's ``\\s`` at U+001C..U+001F and U+FEFF; pieces holding CJK characters are kept
whole (agentmemory segments them; LoCoMo and the LongMemEval files here hold none).

Stemmer (``stem``): words of at most 2 characters are kept; otherwise Porter's steps as agentmemory writes them,
which differ from Porter's algorithm (and from FTS5's ``porter``): the vowel test of steps 1b/1c counts only
``aeiou``, the measure counts ``y`` as a vowel everywhere, step 2 and 3 take the *first* suffix of their tables in
table order (and stop there whether or not the measure allows the change), step 4 removes the longest of its
suffixes when the measure of the rest is > 1 with no ``(s|t)ion`` condition (``tion`` and ``sion`` go whole:
``adoption`` -> ``adop``), then step 5a/5b. Examples: ``running`` -> ``run``, ``days`` -> ``dai``, ``caroline`` ->
``carolin``, ``conversation`` -> ``convers``.

BM25 (``AgentMemoryBM25``), per index, for the query's distinct stemmed terms q (in order of first appearance)::

    idf(t)   = ln((N - df_t + 0.5) / (df_t + 0.5) + 1)
    part(t)  = tf_td * (k1 + 1) / (tf_td + k1 * (1 - b + b * |d| / avgdl)),        k1 = 1.2, b = 0.75
    score(d) = sum_q [ idf(q) part(q) + sum_{t in index, t != q, t starts with q} 0.5 idf(t) part(t) ]

(|d| = the document's token count). Ranked by score, descending; ties keep the order in which documents first got a
score (JS's stable sort over a Map). Not reproduced: its synonym expansion (a table of 42 software-engineering
groups such as ``db``/``database`` or ``k8s``/``kubernetes``, each synonym added at weight 0.7), since the table is
the project's own data and chat benchmarks rarely touch it; a query term in that table scores without its synonyms.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Sequence

K1 = 1.2
B = 0.75
PREFIX_WEIGHT = 0.5

_NOT_KEPT = re.compile(r"[^\w\s/.\\\]^]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_VOWELS = "aeiou"

# Step 2 and 3 suffix tables in agentmemory's order (the first suffix that ends the word is the only one tried).
_STEP2 = (("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
          ("iser", "ise"), ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
          ("ization", "ize"), ("isation", "ise"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"),
          ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"),
          ("biliti", "ble"))
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("alise", "al"), ("iciti", "ic"), ("ical", "ic"),
          ("ful", ""), ("ness", ""))
_STEP4 = ("ement", "ment", "tion", "sion", "ance", "ence", "able", "ible", "ism", "ate", "iti", "ous", "ive", "ize",
          "ise", "ant", "ent", "al", "er", "ic", "ou")
_STEP4_LONGEST_FIRST = tuple(sorted(_STEP4, key=len, reverse=True))


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


def _measure(s: str) -> int:
    """The number of vowel-run -> consonant-run transitions, ``y`` counted as a vowel (agentmemory's measure)."""
    count = 0
    prev_vowel = False
    for c in s:
        vowel = c in "aeiouy"
        if prev_vowel and not vowel:
            count += 1
        prev_vowel = vowel
    return count


def _ends_double_consonant(s: str) -> bool:
    return len(s) >= 2 and s[-1] == s[-2] and s[-1] not in _VOWELS


def _ends_cvc(s: str) -> bool:
    return len(s) >= 3 and s[-3] not in _VOWELS and s[-2] in _VOWELS and s[-1] not in "aeiouwxy"


def _after_1b(w: str) -> str:
    if w.endswith(("at", "bl", "iz")):
        return w + "e"
    if _ends_double_consonant(w) and w[-1] not in "lsz":
        return w[:-1]
    if _measure(w) == 1 and _ends_cvc(w):
        return w + "e"
    return w


def _first_suffix(w: str, table: tuple[tuple[str, str], ...]) -> str:
    for suffix, replacement in table:
        if w.endswith(suffix):
            base = w[:-len(suffix)]
            return base + replacement if _measure(base) > 0 else w
    return w


def stem(word: str) -> str:
    """agentmemory's stemmer (see the module docstring)."""
    if len(word) <= 2:
        return word
    w = word
    if w.endswith("sses") or w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    elif w.endswith("ed") and _has_vowel(w[:-2]):
        w = _after_1b(w[:-2])
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        w = _after_1b(w[:-3])
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    w = _first_suffix(w, _STEP2)
    w = _first_suffix(w, _STEP3)
    for suffix in _STEP4_LONGEST_FIRST:
        if w.endswith(suffix):
            if _measure(w[:-len(suffix)]) > 1:
                w = w[:-len(suffix)]
            break
    if w.endswith("e"):
        base = w[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _ends_cvc(base)):
            w = base
    if _ends_double_consonant(w) and w.endswith("l") and _measure(w[:-1]) > 1:
        w = w[:-1]
    return w


def tokenize(text: str) -> list[str]:
    """agentmemory's tokens of ``text`` (lower-cased, cleaned, split, >= 2 characters, stemmed)."""
    cleaned = _NOT_KEPT.sub(" ", text.lower())
    return [piece if _CJK.search(piece) else stem(piece) for piece in cleaned.split() if len(piece) >= 2]


class AgentMemoryBM25:
    """agentmemory's ``SearchIndex`` over one set of documents (see the module docstring)."""

    def __init__(self, documents: Sequence[str]) -> None:
        self.term_counts = [Counter(tokenize(doc)) for doc in documents]
        self.lengths = [sum(c.values()) for c in self.term_counts]
        self.n_docs = len(documents)
        self.avgdl = sum(self.lengths) / self.n_docs if self.n_docs else 0.0
        postings: dict[str, list[int]] = {}
        for d, counts in enumerate(self.term_counts):
            for term in counts:
                postings.setdefault(term, []).append(d)
        self.postings = postings
        self.sorted_terms = sorted(postings)

    def _idf(self, df: int) -> float:
        return math.log((self.n_docs - df + 0.5) / (df + 0.5) + 1.0)

    def _add(self, scores: dict[int, float], term: str, idf_weight: float) -> None:
        for d in self.postings[term]:
            tf = self.term_counts[d][term]
            norm = tf + K1 * (1.0 - B + B * self.lengths[d] / self.avgdl)
            scores[d] = scores.get(d, 0.0) + idf_weight * tf * (K1 + 1.0) / norm

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """The best ``limit`` (document number, score) pairs for ``query``."""
        scores: dict[int, float] = {}
        if not self.n_docs:
            return []
        for term in dict.fromkeys(tokenize(query)):
            if term in self.postings:
                self._add(scores, term, self._idf(len(self.postings[term])))
            for i in range(bisect.bisect_left(self.sorted_terms, term), len(self.sorted_terms)):
                other = self.sorted_terms[i]
                if not other.startswith(term):
                    break
                if other != term:
                    self._add(scores, other, PREFIX_WEIGHT * self._idf(len(self.postings[other])))
        return sorted(scores.items(), key=lambda pair: -pair[1])[:limit]
