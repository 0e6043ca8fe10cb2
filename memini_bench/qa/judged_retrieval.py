"""Judged retrieval for systems whose hits carry text but no data-set ids (``-qa-judged-k K``).

id-based recall needs the ids of the gold items; a system that rewrites what it stores (mem0 with its own
extraction) returns memories without them. For such a system (every hit of every question has no id) an LLM
relevance judge (the QA judge's client) reads each of the first K hits of a question with the question and its
reference answer and says whether the memory is evidence for that answer. With r_i = 1 when hit i was judged
relevant, per question:

- ``judged_precision@K = sum_{i<=K} r_i / K`` (a missing hit counts as not relevant);
- ``judged_hit@K = 1`` when some r_i = 1;
- ``judged_recall@K = min(1, sum_{i<=K} r_i / |gold|)``, |gold| the question's number of gold items (questions with
  none are left out of this mean): an approximation, as one returned memory may hold several gold facts, or a part of
  one.

Each is averaged over the questions. They are judged figures, reported in their own block under those names and never
beside or merged with id-based recall. The request: system ``RELEVANCE_SYSTEM``, user ``Question:
<q>\\nReference answer: <ref>\\nMemory: <content>\\nVerdict:``; the reply is read strictly
(``prompts.parse_label``): exactly ``RELEVANT`` or ``yes`` is relevant, ``IRRELEVANT``, ``NOT RELEVANT`` or ``no``
is not, any other reply is unparseable: counted (``unparseable`` in the block) and taken as not relevant, like a
missing hit. Every verdict is kept in a checkpoint keyed by (system, question, rank), so a resumed run asks only
what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Question
from memini_bench.errors import BenchError
from memini_bench.qa import prompts
from memini_bench.qa.engine import Call, Chat, call

RELEVANCE_SYSTEM = ("Decide whether a memory retrieved for a question is evidence for the reference answer: it "
                    "states, or directly supports, a fact the answer needs. Reply with exactly one word, RELEVANT or "
                    "IRRELEVANT.")


def relevance_message(question: str, reference: str, memory: str) -> str:
    return f"Question: {question}\nReference answer: {reference}\nMemory: {memory}\nVerdict:"


RELEVANT = frozenset({"relevant", "yes"})
NOT_RELEVANT = frozenset({"irrelevant", "not relevant", "no"})


def is_relevant(reply: str) -> bool | None:
    """The relevance judge's reply read strictly (module docstring); None is unparseable."""
    return prompts.parse_label(reply, RELEVANT, NOT_RELEVANT)


def id_less(hits: Sequence[Sequence[Hit]]) -> bool:
    """Whether a system returned no data-set id in any hit (and returned some hit)."""
    return any(hits) and all(not h.ids for row in hits for h in row)


@dataclass(frozen=True, slots=True)
class Relevance:
    system: str
    id: str
    rank: int
    relevant: bool | None  # None: the reply was no label (unparseable, taken as not relevant)
    call: Call

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.system, self.id, self.rank)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> Relevance:
        try:
            relevant = obj["relevant"]
            if relevant is not None and not isinstance(relevant, bool):
                raise ValueError("relevant")
            return cls(obj["system"], obj["id"], int(obj["rank"]), relevant, Call(**obj["call"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchError(f"a relevance checkpoint record lacks {exc}; delete the checkpoint") from None


def judge_all(system: str, questions: Sequence[Question], hits: Sequence[Sequence[Hit]], k: int, chat: Chat,
              done: Mapping[tuple[str, str, int], Relevance], keep: Callable[[Relevance], None], *,
              concurrency: int, retries: int, backoff: float) -> None:
    """Judge every (question, rank <= k) not in ``done``; each verdict goes to ``keep`` at once. A call failing
    past its retries stops the pass with its BenchError (what was judged is kept)."""
    todo = [(q, rank, h) for q, row in zip(questions, hits, strict=True) for rank, h in enumerate(row[:k], start=1)
            if (system, q.id, rank) not in done]

    def one(item: tuple[Question, int, Hit]) -> None:
        q, rank, h = item
        c = call(chat, "relevance", RELEVANCE_SYSTEM, relevance_message(q.query, q.answer, h.content),
                 retries=retries, backoff=backoff)
        keep(Relevance(system, q.id, rank, is_relevant(c.reply), c))

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="relevance") as pool:
        for _ in pool.map(one, todo):
            pass


def metrics(system: str, questions: Sequence[Question], records: Mapping[tuple[str, str, int], Relevance],
            k: int) -> dict:
    """The judged means of one system (module docstring)."""
    precision, hit, recall = [], [], []
    unparseable = 0
    for q in questions:
        verdicts = [records[(system, q.id, r)].relevant for r in range(1, k + 1) if (system, q.id, r) in records]
        unparseable += sum(v is None for v in verdicts)
        rel = [v is True for v in verdicts]
        precision.append(sum(rel) / k)
        hit.append(float(any(rel)))
        if q.gold:
            recall.append(min(1.0, sum(rel) / len(q.gold)))
    n = len(questions)
    return {"system": system, "k": k, "questions": n, "judged": True,
            f"judged_precision@{k}": sum(precision) / n if n else 0.0,
            f"judged_hit@{k}": sum(hit) / n if n else 0.0,
            f"judged_recall@{k}": sum(recall) / len(recall) if recall else 0.0, "recall_questions": len(recall),
            "unparseable": unparseable}
