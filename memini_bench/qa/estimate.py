"""``-estimate``: what a QA run will call and cost, printed before any call; then the run stops.

For the answers not yet in the checkpoint (every (arm, question, run) still to grade):

- calls: one reader call per answer, one per judge (``-qa-judges``), and ``K`` relevance calls per question of each
  id-less system (``-qa-judged-k``); an answer from a hypotheses file (``-qa-hypotheses``) makes no reader call,
  only its judge calls;
- reader input tokens: the reader's system prompt plus its user message with the recalled memories, exactly as it
  will be sent, counted with the reader's own tokenizer when ``MEMINI_LLM_TOKENIZER`` names its ``tokenizer.json``
  (a local model; Hugging Face ``tokenizers``), otherwise estimated as ``(UTF-8 bytes + 3) // 4`` (memini's
  CountingChat rule) -- the output says which;
- judge input tokens: the judge's prompt for the question and reference with an answer of the mean reader output;
  for an answer from a hypotheses file, the judge's prompt with that answer in it (counted exactly, per judge);
- output tokens per call: the mean over the checkpoint's graded answers when it has some (measured), otherwise
  ``ASSUMED_OUT`` (stated as assumed: reader 256, judge 8, relevance 8);
- money: those tokens at the price table's prices (``qa.cost``), per arm and in total, when a table is given;
- time: ``answers * mean seconds per answer / concurrency`` with the seconds per answer measured over the
  checkpoint's graded answers (reader + judges, retries included); with none graded yet the time is not estimated.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memini_bench.core.runs import estimate_tokens
from memini_bench.errors import BenchError
from memini_bench.qa import prompts
from memini_bench.qa.cost import PriceTable
from memini_bench.qa.engine import Graded, Task
from memini_bench.qa.judged_retrieval import RELEVANCE_SYSTEM, relevance_message
from memini_bench.qa.prompt_sets import PromptSet

TOKENIZER_ENV = "MEMINI_LLM_TOKENIZER"
ASSUMED_OUT = {"reader": 256, "judge": 8, "relevance": 8}


def token_counter() -> tuple[Callable[[str], int], str]:
    """The reader's tokenizer (``MEMINI_LLM_TOKENIZER``) or the byte estimate, and a phrase naming which."""
    path = os.environ.get(TOKENIZER_ENV, "").strip()
    if not path:
        return estimate_tokens, "estimated as (UTF-8 bytes + 3) // 4 (set MEMINI_LLM_TOKENIZER to a local reader's " \
                                "tokenizer.json to count exactly)"
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise BenchError(f"{TOKENIZER_ENV}={path}: counting with a tokenizer needs the tokenizers package "
                         "(pip install tokenizers), or unset it to estimate") from None
    try:
        tokenizer = Tokenizer.from_file(path)
    except Exception as exc:  # tokenizers raises its own Exception type for a missing or malformed file
        raise BenchError(f"{TOKENIZER_ENV}={path}: not a tokenizer.json ({str(exc).splitlines()[0]}); give the "
                         "reader model's tokenizer.json or unset it") from None
    return (lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)), f"counted with {path}"


@dataclass(frozen=True)
class Plan:
    """What ``-estimate`` prints (module docstring)."""

    answers: int
    external: int
    reader_calls: int
    judge_calls: int
    relevance_calls: int
    reader_in: int
    judge_in: int
    relevance_in: int
    out_per_call: Mapping[str, float]
    out_measured: bool
    counted: str
    dollars: Mapping[str, float] | None
    seconds: float | None
    seconds_per_answer: float | None


def plan(pending: Sequence[Task], graded: Sequence[Graded], prompt_set: PromptSet, judges: int,
         relevance: Sequence[tuple[str, str, str]], *, reader: str, judge_models: Sequence[str],
         prices: PriceTable | None, concurrency: int) -> Plan:
    """``relevance``: ``(question, reference, memory)`` of every relevance call still to make."""
    count, counted = token_counter()
    measured = bool(graded)
    out = dict(ASSUMED_OUT)
    if measured:
        out["reader"] = sum(g.reader.tokens_out for g in graded) / len(graded)
        out["judge"] = sum(g.judge.tokens_out for g in graded) / len(graded)
    system_tokens = count(prompts.READER_SYSTEM)
    reader_in_by_arm: dict[str, int] = {}
    judge_in_by_arm: dict[str, int] = {}
    for t in pending:
        q = t.question
        read = t.hypothesis is None
        reader_in_by_arm[t.arm] = reader_in_by_arm.get(t.arm, 0) + (system_tokens + count(
            prompts.reader_message(q.query, t.memories, q.now)) if read else 0)
        _, system, user = prompt_set.judge(t.category, q.id, q.query, q.answer, "" if read else t.hypothesis)
        judge_in_by_arm[t.arm] = judge_in_by_arm.get(t.arm, 0) + judges * (
            count(system) + count(user) + (round(out["reader"]) if read else 0))
    rel_system = count(RELEVANCE_SYSTEM)
    relevance_in = sum(rel_system + count(relevance_message(*r)) for r in relevance)
    dollars = None
    if prices is not None:
        dollars = {}
        for arm, tokens_in in reader_in_by_arm.items():
            n = sum(t.arm == arm for t in pending)
            reads = sum(t.arm == arm and t.hypothesis is None for t in pending)
            d = prices.price(reader).cost(tokens_in, round(reads * out["reader"]))
            d += sum(prices.price(m).cost(judge_in_by_arm[arm] / judges, round(n * out["judge"]))
                     for m in judge_models)
            dollars[arm] = d
        dollars["judged retrieval"] = prices.price(judge_models[0]).cost(
            relevance_in, round(len(relevance) * out["relevance"]))
        dollars["total"] = sum(dollars.values())
    per_answer = None
    if measured:
        per_answer = sum(g.reader.seconds + g.judge.seconds + sum(v.call.seconds for v in g.extra)
                         for g in graded) / len(graded)
    seconds = len(pending) * per_answer / max(1, concurrency) if per_answer is not None else None
    external = sum(t.hypothesis is not None for t in pending)
    return Plan(len(pending), external, len(pending) - external, judges * len(pending), len(relevance),
                sum(reader_in_by_arm.values()),
                sum(judge_in_by_arm.values()), relevance_in, out, measured, counted, dollars, seconds, per_answer)


def render(p: Plan, *, arms: int, runs: int, concurrency: int, prices: PriceTable | None) -> str:
    how = "measured over the checkpoint's graded answers" if p.out_measured else "assumed (nothing graded yet)"
    lines = [f"-estimate (no LLM call made): {p.answers} answers still to grade ({arms} arms, {runs} runs)",
             f"  calls: {p.reader_calls} reader + {p.judge_calls} judge + {p.relevance_calls} relevance = "
             f"{p.reader_calls + p.judge_calls + p.relevance_calls}"
             + (f" ({p.external} answers from -qa-hypotheses: judge calls only)" if p.external else ""),
             f"  reader input tokens (prompt + retrieved contexts): {p.reader_in:,} ({p.counted})",
             f"  judge input tokens: {p.judge_in:,}; relevance input tokens: {p.relevance_in:,} (same counting)",
             f"  output tokens per call: reader {p.out_per_call['reader']:.0f}, judge {p.out_per_call['judge']:.0f}, "
             f"relevance {p.out_per_call['relevance']:.0f} ({how})"]
    if p.dollars is None:
        lines.append("  money: no price table (give -prices FILE or MEMINI_PRICES)")
    else:
        lines.append(f"  money at the prices of {prices.path if prices else '?'}: " + ", ".join(
            f"{name} ${value:.4f}" for name, value in p.dollars.items()))
    if p.seconds is None:
        lines.append("  time: not estimated (no graded answer to measure; grade a few, e.g. with -limit, and rerun "
                     "-estimate)")
    else:
        lines.append(f"  time: {p.seconds:.0f} s at -concurrency {concurrency} ({p.seconds_per_answer:.2f} s per "
                     "answer, measured over the checkpoint's graded answers)")
    return "\n".join(lines) + "\n"
