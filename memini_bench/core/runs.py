"""What one run of a system over a data set produced, as plain frozen data: per question the ranked hits' ids,
scores, estimated tokens and latency (``QuestionRun``), and per system the whole run (``RunResult``). Produced by
``evaluation.runner``, read back from per-question files by ``results.per_question``, scored by
``evaluation.metrics``; ``gold_rank`` is the one definition of where the first gold hit lies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memini_bench.core.dataset import Question
from memini_bench.text.go_strings import WORDS

_UTF8_LENGTH = getattr(WORDS, "utf8_length", None)


def estimate_tokens(text: str) -> int:
    """memini's token estimate: ``(utf-8 bytes + 3) // 4`` (the bytes counted without encoding: an ASCII text's
    length, else the compiled ``_words.utf8_length`` where built; a text it declines is encoded)."""
    if text.isascii():
        return (len(text) + 3) // 4
    n = _UTF8_LENGTH(text) if _UTF8_LENGTH is not None else -1
    return ((n if n >= 0 else len(text.encode("utf-8"))) + 3) // 4


class TokenMemo(dict):
    """``estimate_tokens`` of each distinct text, computed once (a hit's content recurs across questions)."""

    def __missing__(self, text: str) -> int:
        value = self[text] = estimate_tokens(text)
        return value


@dataclass(frozen=True, slots=True)
class QuestionRun:
    """One question's recall: the ranked hits' ids, scores and estimated tokens, and its latency."""

    question: Question
    ranked_ids: tuple[tuple[str, ...], ...]
    scores: tuple[float, ...]
    tokens: tuple[int, ...]
    latency_ms: float


@dataclass(frozen=True, slots=True)
class RunResult:
    """One system's run. ``ingest_ms`` is its whole ingest; of it, ``model_load_ms`` loaded the embedding model
    and ``embed_ms`` got the vectors (the store's own share is the rest: ``store_ingest_ms``). ``leaked`` counts
    the hits of another group dropped before scoring (``-leaks count``)."""

    system: str
    dataset: str
    depth: int
    ingest_ms: float
    corpus_tokens: int
    questions: tuple[QuestionRun, ...]
    leaked: int = 0
    model_load_ms: float = 0.0
    embed_ms: float = 0.0

    @property
    def store_ingest_ms(self) -> float:
        return max(0.0, self.ingest_ms - self.model_load_ms - self.embed_ms)


def gold_rank(ranked_ids: Iterable[Iterable[str]], gold: Iterable[str]) -> int:
    """0-based position of the first hit whose ids meet ``gold``; -1 when none does. Each hit is a collection
    of item ids (one id normally; pass ``[(i,) for i in ids]`` for a flat list)."""
    wanted = set(gold)
    for r, ids in enumerate(ranked_ids):
        if wanted.intersection(ids):
            return r
    return -1


def first_gold_rank(run: QuestionRun) -> int:
    return gold_rank(run.ranked_ids, run.question.gold)
