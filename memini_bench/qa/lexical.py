"""Lexical QA metrics beside the judge: token F1, exact match and BLEU-1, as SQuAD's and LoCoMo's scripts score.

Normalisation (SQuAD v1.1's ``normalize_answer``): lower-case, drop every ASCII punctuation character
(``string.punctuation``), drop the articles ``a``, ``an``, ``the`` as whole words, collapse runs of whitespace; the
tokens are the normalised text split on whitespace.

- ``exact_match(pred, ref) = 1`` when the normalised texts are equal, else 0.
- ``token_f1(pred, ref)``: with ``common = |tokens(pred) ∩ tokens(ref)|`` counted as multisets,
  ``P = common / |tokens(pred)|``, ``R = common / |tokens(ref)|``, ``F1 = 2PR / (P + R)``; 0 when ``common = 0``;
  when either side has no token, 1 if both have none, else 0 (SQuAD v2's rule).
- ``bleu1(pred, ref)``: nltk's ``sentence_bleu([tokens(ref)], tokens(pred), weights=(1, 0, 0, 0),
  smoothing_function=SmoothingFunction().method1)`` = brevity penalty x clipped unigram precision (mem0's
  evaluation calls nltk the same way; it tokenises with ``nltk.word_tokenize`` of the lower-cased text instead, so
  its punctuation tokens count); 0 when the prediction has no token.

LoCoMo's own ``task_eval/evaluation.py`` differs from SQuAD: it also drops commas before and the word ``and``,
Porter-stems the tokens for F1, scores EM as set equality of tokens and scores multi-hop (category 1) as the mean
over comma-separated sub-answers. Those are not reproduced: F1 here is SQuAD's, so LoCoMo's published F1 is
comparable in protocol, not to the decimal.

Questions without a reference (abstention, LoCoMo's adversarial category 5, whose answer field is absent) have no
lexical score: ``summarise`` counts them in ``skipped`` and leaves them out of the means.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from memini_bench.errors import BenchError

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
NLTK_NEEDED = "BLEU-1 needs nltk: pip install 'memini-bench[qa]' (or pip install nltk)"


def normalize(text: str) -> str:
    """SQuAD's normalisation (module docstring)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def exact_match(prediction: str, reference: str) -> float:
    return float(normalize(prediction) == normalize(reference))


def token_f1(prediction: str, reference: str) -> float:
    pred, ref = tokens(prediction), tokens(reference)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, reference: str) -> float:
    try:
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    except ImportError:
        raise BenchError(NLTK_NEEDED) from None
    pred, ref = tokens(prediction), tokens(reference)
    if not pred or not ref:
        return 0.0
    return float(sentence_bleu([ref], pred, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1))


def check_available() -> None:
    """Fail before any call when nltk is missing (BLEU-1 is computed after every call was made)."""
    import importlib.util

    if importlib.util.find_spec("nltk") is None:
        raise BenchError(NLTK_NEEDED)


@dataclass(frozen=True, slots=True)
class Lexical:
    """Means over the scored (prediction, reference) pairs; ``skipped`` pairs had an empty reference."""

    scored: int
    skipped: int
    f1: float
    exact_match: float
    bleu1: float


def summarise(pairs: Iterable[tuple[str, str]]) -> Lexical:
    """Mean F1, EM and BLEU-1 of ``(prediction, reference)`` pairs whose reference is not empty."""
    f1s, ems, bleus = [], [], []
    skipped = 0
    for prediction, reference in pairs:
        if not reference.strip():
            skipped += 1
            continue
        f1s.append(token_f1(prediction, reference))
        ems.append(exact_match(prediction, reference))
        bleus.append(bleu1(prediction, reference))
    n = len(f1s)
    return Lexical(n, skipped, sum(f1s) / n if n else 0.0, sum(ems) / n if n else 0.0, sum(bleus) / n if n else 0.0)
