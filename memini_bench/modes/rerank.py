"""``-rerank``: memini's recency/temporal re-rank comparison (``bench/recency.go → RerankCompare``).

On the questions whose category is in ``-rerank-cats`` (default ``knowledge-update,temporal-reasoning``; empty =
all) and with K = the smallest ``-k``: fuse the vector and keyword legs, each ``pool = max(5K, 50)`` deep, with RRF
(rrfK 5), then rank that same fused list with each of memini's five strategies (``retrieval.recency``) using
``now`` = the question's date (LongMemEval ``question_date``, LoCoMo's last session date) or 2023-01-01, and item
dates from the data (2023-01-01 when missing). ``temporal0.40`` uses ``-temporal-extractor`` (its row is named
``temporal0.40-extended`` with the extended one, ``temporal0.40-llm`` with the LLM's, whose model is then in the
results identity and whose unusable replies are counted and noted). Prints memini's table (R@1 / R@K / MRR per
category and ``all``) and, beyond memini, writes it to ``<out>/<dataset>-rerank.json`` (``-rerank-...-tx-extended.json``
with the extended extractor; per-question anchors and ranks with ``-per-question``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memini_bench.core.dataset import Question
from memini_bench.embed.factory import build_encoder
from memini_bench.errors import BenchError
from memini_bench.modes import ranking as _ranking
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState
from memini_bench.modes.common import build_config, check_outputs, load_prepared, log, plan_results, write_results
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import RerankOptions
from memini_bench.results.schema import RankingResults
from memini_bench.results.write import write_jsonl
from memini_bench.retrieval.fusion import fuse_rrf
from memini_bench.retrieval.recency import FALLBACK_TIME, STRATEGIES, Strategy, rank
from memini_bench.retrieval.temporal import extractor
from memini_bench.systems.memini import MeminiBackend


def extractor_suffix(extractor_name: str) -> str:
    """``""`` for memini's regex extractor, else ``-<name>``: on the temporal row's name and the results file."""
    return "" if extractor_name == "regex" else f"-{extractor_name}"


def strategies(extractor_name: str) -> list[Strategy]:
    """memini's five; the temporal row says which extractor it used when it is not memini's regex."""
    suffix = extractor_suffix(extractor_name)
    return [dataclasses.replace(s, name=s.name + suffix) if s.temporal_boost else s for s in STRATEGIES]


def _questions(opts: RunOptions, ds) -> list:
    """The questions of the -rerank-cats categories (all when empty), refused when none is left."""
    cats = list(opts.mode(RerankOptions).rerank_cats)
    questions = [q for q in ds.questions if not cats or q.category in cats]
    if not questions:
        have = ", ".join(sorted({q.category for q in ds.questions if q.category})) or "none"
        raise BenchError(f"-rerank-cats {','.join(cats)!r}: no question has these categories (this data set has: "
                         f'{have}); use -rerank-cats "" for all')
    return questions


def _rank_all(backend: MeminiBackend, questions: list, extract, ks: tuple[int, ...], opts: RunOptions, ds):
    """Every strategy's ranking of every question: the tally's rows, the per-question records, the anchored
    count."""
    k = ks[0]
    pool = opts.hybrid.leg_depth(k)
    times = backend.item_times()
    dates = np.where(np.isnan(times), FALLBACK_TIME.timestamp(), times)
    importance = np.array([it.importance for it in backend.items], dtype=np.float64)
    tally = _ranking.RankTally(k, ds.name)
    per_question, anchored = [], 0
    for q in questions:
        fused_ids, fused = fuse_rrf([backend.vector_leg(q.group, q.query, pool),
                                     backend.keyword_leg(q.group, q.query, pool)])
        now = q.now or FALLBACK_TIME
        anchor = extract(q.query, now)
        anchored += anchor is not None
        ranks = {}
        for s in strategies(opts.hybrid.temporal_extractor):
            ranked = rank(s, fused_ids, fused, dates_s=dates[fused_ids], importance=importance[fused_ids], now=now,
                          anchor=anchor)
            ranks[s.name] = tally.add(s.name, q, (backend.items[i].id for i in ranked.tolist()))
        per_question.append({"id": q.id, "category": q.category, "query": q.query, "gold": list(q.gold),
                             "anchor": None if anchor is None else [anchor.days, anchor.tolerance], "ranks": ranks})
    return tally.rows(), per_question, anchored


@dataclass
class RerankState(PlanState):
    """The re-rank study's plan state: the temporal extractor, the questions it ranks, the categories asked and the
    mode's identity settings."""

    extract: Any = None
    questions: list[Question] = field(default_factory=list)
    cats: list[str] = field(default_factory=list)
    settings: dict = field(default_factory=dict)


@dataclass
class RerankRun:
    """The re-rank study's result: its ranking rows, per-question rows and the results file's config."""

    rows: list
    per_question: list[dict]
    config: dict


class RerankMode(Mode):
    """``memini-bench study rerank`` (see the module docstring): ``plan`` loads the data, picks the questions and
    claims the results path; ``run`` ingests once and ranks every question by every strategy; ``render`` prints the
    table; ``write`` the results file (and -per-question)."""

    verb = "study rerank"

    def plan(self, opts: RunOptions) -> Plan:
        check_outputs(opts)
        encoder = build_encoder(opts.embed)
        extract = extractor(opts.hybrid.temporal_extractor)
        ds = load_prepared(opts)
        questions = _questions(opts, ds)
        cats = list(opts.mode(RerankOptions).rerank_cats)
        settings: dict[str, object] = {"rerank_cats": cats}
        if hasattr(extract, "describe"):  # the llm extractor: its model is known before any call
            settings["temporal_llm_model"] = extract.describe()["model"]
        cats_token = () if tuple(cats) == RerankOptions().rerank_cats else ("cats-" + ("+".join(cats) or "all"),)
        ctx = opts.fixed_context(encoder)
        ident, out = plan_results(opts, ds, ctx, None, mode="rerank", mode_settings=settings, suffix="-rerank",
                                  extra_tokens=cats_token)
        writes = [p for p in (out, opts.output.per_question and Path(opts.output.per_question)) if out and p]
        return Plan(self.verb, opts, items=len(ds.items), questions=len(questions), identity=ident, writes=writes,
                    state=RerankState(ds=ds, ctx=ctx, encoder=encoder, out=out, extract=extract, questions=questions,
                                      cats=cats, settings=settings))

    def run(self, plan: Plan) -> Outcome:
        opts, st = plan.opts, plan.state
        ds, questions, extract = st.ds, st.questions, st.extract
        backend = MeminiBackend(st.encoder, opts.hybrid.keyword_backend)
        backend.ingest(ds.items)
        backend.prepare([q.query for q in questions])
        rows, per_question, anchored = _rank_all(backend, questions, extract, opts.k, opts, ds)
        k = opts.k[0]
        text = _ranking.markdown(rows, k, "Recency-aware re-rank vs pure RRF", ds.category_labels)
        text += (f"\ntemporal anchors ({opts.hybrid.temporal_extractor}): {anchored} of {len(questions)} "
                 "questions\n")
        llm = extract.describe() if hasattr(extract, "describe") else None  # the llm extractor: model, calls, misses
        extra = {} if llm is None else {"temporal_llm": llm}
        config = build_config(opts, ds, st.ctx, mode="rerank", mode_settings=st.settings,
                              identity=plan.identity, **extra, rerank_cats=st.cats, rerank_k=k,
                              rerank_pool=opts.hybrid.leg_depth(k), scored_questions=len(questions),
                              anchored_questions=anchored,
                              strategies=[dataclasses.asdict(s) for s in strategies(opts.hybrid.temporal_extractor)])
        return Outcome(plan, 0, text, RerankRun(rows, per_question, config))

    def render(self, outcome: Outcome) -> None:
        super().render(outcome)
        extract = outcome.plan.state.extract
        if hasattr(extract, "note") and extract.note():
            log(extract.note())

    def write(self, outcome: Outcome) -> None:
        opts, out = outcome.plan.opts, outcome.plan.state.out
        if out is None:
            return
        write_results(out, RankingResults(config=outcome.result.config, rows=tuple(outcome.result.rows)))
        if opts.output.per_question:
            write_jsonl(Path(opts.output.per_question), outcome.result.per_question)
            log(f"wrote {opts.output.per_question}")
