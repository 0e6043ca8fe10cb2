"""The rerank tier (``-rerank-url`` / ``-rerank-model local:PATH`` / ``-llm-rerank``): memini's
``bench/llmrerank.go → LLMRerankCompare``.

K = the smallest ``-k``. The *baseline* is the hybrid system's composite-ranked list before dedup (score fusion
with ``-fusion``, ``pool = max(5K, 50)`` per leg), scored over its whole length. The *reranked* list is its first
``-llm-rerank-pool`` (20) candidates in the reranker's order (``rerankers.reorder_by_id``: returned ids first,
then the head candidates it left out, in order) and holds only that head, as in memini. Reranker choice, as
memini's: the cross-encoder at ``-rerank-url`` when given, else a local cross-encoder (``-rerank-model
local:PATH``), else the LLM (``MEMINI_LLM_BASE_URL`` / ``_API_KEY`` / ``_MODEL``). Rows are named ``baseline``
and ``cross-encoder`` or ``llm-rerank`` (memini names both ``llm-rerank``). Beyond memini: the added latency per
question (p50 / p95 / mean of the reranker call) and a JSON file ``<out>/<dataset>-rerank-tier.json``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from memini_bench.core.table import Cell, Column, Table, fmt_num, render
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import build_encoder
from memini_bench.evaluation.metrics import percentile
from memini_bench.modes import ranking as _ranking
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState
from memini_bench.modes.common import build_config, check_outputs, load_prepared, log, plan_results, write_results
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import RerankTierOptions
from memini_bench.rerankers import Candidate, Reranker, build_reranker, reorder_by_id
from memini_bench.results.schema import RankingResults
from memini_bench.systems.memini import HybridSystem, MeminiBackend


@dataclass
class TierState(PlanState):
    """The re-rank tier's plan state: the reranker (loaded) and the mode's identity settings."""

    reranker: Reranker | None = None
    settings: dict = field(default_factory=dict)


@dataclass
class TierRun:
    """The re-rank tier's result: the ranking rows, the two latencies and the reranker's note ("" = none)."""

    rows: list
    timing: dict
    note: str = ""


def reranker_from(opts: RunOptions, *, llm: bool) -> Reranker:
    t = opts.mode(RerankTierOptions)
    return build_reranker(url=t.rerank_url, model=t.rerank_model, llm=llm, max_doc_chars=t.rerank_max_doc_chars,
                          max_batch_chars=t.rerank_max_batch_chars, api=t.rerank_api, timeout=t.rerank_timeout,
                          device=opts.embed.device)


def hybrid_for(opts: RunOptions, encoder: TextEncoder | None) -> HybridSystem:
    """The run's hybrid system (every setting of ``opts.hybrid``) on a fresh backend."""
    return HybridSystem(MeminiBackend(encoder, opts.hybrid.keyword_backend), opts.hybrid)


def ingested_hybrid(opts: RunOptions, encoder: TextEncoder | None, ds) -> HybridSystem:
    """The run's hybrid (``hybrid_for``) with ``ds``'s items ingested and its queries prepared."""
    hybrid = hybrid_for(opts, encoder)
    hybrid.ingest(ds.items)
    hybrid.backend.prepare([q.query for q in ds.questions])
    return hybrid


def latency(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": percentile(xs, 50), "p95_ms": percentile(xs, 95), "mean_ms": sum(xs) / len(xs) if xs else 0.0}


def _compare(hybrid: HybridSystem, reranker: Reranker, ds, k: int, head_n: int) -> tuple[list, dict]:
    """Each question's hybrid ranking, then the reranker's order of its first ``head_n``: the tally's rows and the
    two latencies (the baseline's and what the rerank adds)."""
    backend = hybrid.backend
    tally = _ranking.RankTally(k, ds.name)
    base_ms: list[float] = []
    added_ms: list[float] = []
    for q in ds.questions:
        t0 = time.perf_counter()
        ids, _ = hybrid.ranked(q.group, q.query, k, q.now)
        base_ms.append((time.perf_counter() - t0) * 1e3)
        items = [backend.items[i] for i in ids.tolist()]
        tally.add("baseline", q, (it.id for it in items))
        head = [Candidate(it.id, it.content) for it in items[:head_n]]
        t1 = time.perf_counter()
        order = reranker.rerank(q.query, head)
        added_ms.append((time.perf_counter() - t1) * 1e3)
        tally.add(reranker.name, q, reorder_by_id([c.id for c in head], order))
    return tally.rows(), {"baseline": latency(base_ms), "rerank_added": latency(added_ms)}


def _tables(rows: list, timing: dict, reranker: Reranker, k: int, head_n: int, labels, note: str) -> str:
    text = _ranking.markdown(rows, k, f"Hybrid vs {reranker.name} over the top {head_n}", labels)
    columns = (Column("what", "Latency per question", "left"), Column("p50_ms", "p50 (ms)", better="lower"),
               Column("p95_ms", "p95 (ms)", better="lower"), Column("mean_ms", "mean (ms)", better="lower"))
    body = tuple((Cell(name, name), *(Cell(t[key], fmt_num(t[key])) for key in ("p50_ms", "p95_ms", "mean_ms")))
                 for name, t in (("baseline (hybrid)", timing["baseline"]),
                                 (f"+ {reranker.name} (added)", timing["rerank_added"])))
    latency_note = ("N: every question, timed once each; the reranker's row is what the re-rank adds to the "
                    "hybrid's. No marks.")
    text += "\n" + render(Table(columns, body, notes=(latency_note,), notes_in_markdown=True), "md")
    return text + (f"\nNote: {note}.\n" if note else "")


class RerankTierMode(Mode):
    """``memini-bench study rerank-tier`` (see the module docstring): ``plan`` loads the reranker (a local model
    before latencies are timed) and the data and claims the results path; ``run`` ranks and re-ranks every
    question; ``render`` prints the tables; ``write`` the results file."""

    verb = "study rerank-tier"

    def plan(self, opts: RunOptions) -> Plan:
        check_outputs(opts)
        tier = opts.mode(RerankTierOptions)
        reranker = reranker_from(opts, llm=tier.llm_rerank)
        reranker.load()  # a local model loads here, before latencies are timed
        encoder = build_encoder(opts.embed)
        ds = load_prepared(opts)
        ctx = opts.fixed_context(encoder)
        settings = asdict(tier)
        ident, out = plan_results(opts, ds, ctx, None, mode="rerank-tier", mode_settings=settings,
                                  suffix=f"-rerank-tier-{reranker.name}")
        return Plan(self.verb, opts, systems=["memini-hybrid", reranker.name], items=len(ds.items),
                    questions=len(ds.questions), identity=ident, writes=[out] if out is not None else [],
                    state=TierState(ds=ds, ctx=ctx, encoder=encoder, out=out, reranker=reranker, settings=settings))

    def run(self, plan: Plan) -> Outcome:
        opts, st = plan.opts, plan.state
        ds, reranker = st.ds, st.reranker
        hybrid = ingested_hybrid(opts, st.encoder, ds)
        k, head_n = opts.k[0], opts.mode(RerankTierOptions).llm_rerank_pool
        rows, timing = _compare(hybrid, reranker, ds, k, head_n)
        note = reranker.note() if hasattr(reranker, "note") else ""
        if note:
            log(f"  note: {note}")
        text = _tables(rows, timing, reranker, k, head_n, ds.category_labels, note)
        return Outcome(plan, 0, text, TierRun(rows, timing, note))

    def write(self, outcome: Outcome) -> None:
        opts, st, out = outcome.plan.opts, outcome.plan.state, outcome.plan.state.out
        if out is None:
            return
        note, settings = outcome.result.note, st.settings
        config = build_config(opts, st.ds, st.ctx, mode="rerank-tier", mode_settings=settings,
                              reranker=st.reranker.name, rerank_k=opts.k[0], identity=outcome.plan.identity,
                              **settings, **({"notes_rerank": [note]} if note else {}))
        write_results(out, RankingResults(config=config, rows=tuple(outcome.result.rows),
                                          extra={"latency": outcome.result.timing}))
