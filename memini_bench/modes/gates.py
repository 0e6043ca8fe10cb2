"""Relevance-gate sweeps: ``-vec-gate T1,T2,...`` (memini ``bench/vecgate.go``) and ``-rerank-gate T1,...``
(``bench/rerankgate.go``).

A per-query gate returns nothing when the query's best score is below a threshold t. For each question i,
with K = the smallest ``-k``, a *positive* probe runs against its own group and a *negative* one against a
foreign group:

- vector gate: ``top`` = the best vector score ``1/(1+L2)`` in the group; ``hit`` = the gold is within K of the
  real hybrid recall (no gate).
- rerank gate: the head = the hybrid's composite order over ``-rerank-gate-pool`` (20)-deep legs, cut to that
  pool (``HybridSystem.ranked(..., pool=P)``); ``top`` = the best cross-encoder score over the head; ``hit`` =
  the gold is within K once the head is sorted by cross-encoder score (stable; a candidate the server skipped
  scores 0).

    pos R@K(t)      = #(hit_i and pos_top_i >= t) / n
    neg inject %(t) = #(neg_top_i >= t) / n

The hybrid is the run's (``compare.systems_for``), with the question's date as ``now``: the vector gate's recall
applies every hybrid setting (fusion, pools, reserve, temporal boost, reinforcement); the rerank gate's head is
that hybrid's composite order (fusion, temporal boost) before the reserve and dedup, as the rerank tier's baseline.
Thresholds: comma-separated; negative or unparsable entries are skipped (memini's parseFloatList); rows ascend.
Also printed: p10/25/50/75/90 of the positive and negative tops (memini's floor-index percentile).
The foreign group: memini takes question (i+1) mod n's group, which is always foreign on LongMemEval (one group
per question); we take the next question, cyclically, whose group differs, which is the same there and keeps
the negative foreign on suites whose questions share groups (LoCoMo). Beyond memini: JSON to
``<out>/<dataset>-vec-gate.json`` / ``-rerank-gate.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from memini_bench.core.dataset import Question
from memini_bench.core.runs import gold_rank
from memini_bench.core.table import Cell, Column, Table, fmt_pct, render
from memini_bench.embed.factory import build_encoder
from memini_bench.errors import BenchError
from memini_bench.evaluation.metrics import percentile
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState
from memini_bench.modes.common import build_config, check_outputs, load_prepared, plan_results, write_results
from memini_bench.modes.options import RunOptions
from memini_bench.modes.rerank_tier import ingested_hybrid, reranker_from
from memini_bench.modes.specs import GateOptions, RerankTierOptions, cross_encoder_configured
from memini_bench.rerankers import Candidate, ScoringReranker
from memini_bench.results.schema import GateResults
from memini_bench.systems.memini import HybridSystem, MeminiBackend

PERCENTILES = (10, 25, 50, 75, 90)


@dataclass(frozen=True, slots=True)
class Probe:
    pos_top: float
    neg_top: float
    hit: bool


@dataclass(frozen=True, slots=True)
class GateRow:
    threshold: float
    pos_recall_any: float      # gold within K and the top score at least the threshold
    neg_injection_rate: float


def sweep(probes: Sequence[Probe], thresholds: Sequence[float]) -> list[GateRow]:
    """One row per threshold, in the order given (``parse_thresholds`` sorts them ascending)."""
    n = len(probes)
    return [GateRow(t, sum(p.hit and p.pos_top >= t for p in probes) / n, sum(p.neg_top >= t for p in probes) / n)
            for t in thresholds]


def foreign_groups(questions: Sequence[Question], flag_name: str) -> list[str]:
    """For each question, the group of the next question (cyclically) whose group differs."""
    n = len(questions)
    if n < 2:
        raise BenchError(f"-{flag_name} needs at least 2 questions (got {n})")
    out = []
    for i, q in enumerate(questions):
        for step in range(1, n):
            other = questions[(i + step) % n].group
            if other != q.group:
                out.append(other)
                break
        else:
            raise BenchError(f"-{flag_name} needs questions from at least two groups; every question here asks "
                             f"group {q.group!r} (e.g. drop -shared-haystack)")
    return out


def _distribution_lines(label: str, pos: list[float], neg: list[float], n: int, note: str = "") -> str:
    """memini's header, ``<label> over <n> queries<note>:``, then the percentile lines."""
    def line(name: str, xs: list[float]) -> str:
        return f"  {name}" + " ".join(f"p{p}={percentile(xs, p):.3f}" for p in PERCENTILES) + "\n"

    return (f"{label} over {n} queries{note}:\n" + line("positive (own ns):    ", pos)
            + line("negative (foreign):   ", neg))


def _markdown(rows: Sequence[GateRow], k: int, title: str, column: str) -> str:
    """memini's gate table (its separator widths kept), with a footnote stating N and what each column is."""
    columns = (Column("threshold", column, rule="-" * (len(column) + 1) + ":"),
               Column("pos_recall_any", "pos R@K", rule="-" * 8 + ":"),
               Column("neg_injection_rate", "neg inject %", rule="-" * 13 + ":"))
    body = tuple((Cell(r.threshold, f"{r.threshold:.3f}"), Cell(r.pos_recall_any, fmt_pct(r.pos_recall_any)),
                  Cell(r.neg_injection_rate, fmt_pct(r.neg_injection_rate))) for r in rows)
    note = (f"N: the queries above, each probed in its own group (pos R@K: gold within {k} and the top score at least "
            "the threshold) and in a foreign group (neg inject %: the top score at least the threshold). No marks.")
    return render(Table(columns, body, title=f"## {title} — recall_any@{k} (positive) vs injection (negative)",
                        notes=(note,), notes_in_markdown=True), "md")


def _vector_top(backend: MeminiBackend, group: str, query: str, k: int) -> float:
    _, scores = backend.vector_leg(group, query, k)
    return float(scores[0]) if len(scores) else 0.0


def vec_gate_probes(hybrid: HybridSystem, questions: Sequence[Question], k: int) -> list[Probe]:
    backend = hybrid.backend
    probes = []
    for q, foreign in zip(questions, foreign_groups(questions, "vec-gate"), strict=True):
        hits = hybrid.recall(q.group, q.query, k, now=q.now)  # at most k hits
        hit = gold_rank((h.ids for h in hits), q.gold) >= 0
        probes.append(Probe(_vector_top(backend, q.group, q.query, k), _vector_top(backend, foreign, q.query, k),
                            hit))
    return probes


def _rerank_head(hybrid: HybridSystem, reranker: ScoringReranker, q: Question, group: str,
                 pool: int) -> tuple[float, list[str]]:
    """(best cross-encoder score over the head of ``q``'s hybrid order in ``group``, the head's ids sorted by
    that score)."""
    items = hybrid.backend.items
    ids, _ = hybrid.ranked(group, q.query, pool, q.now, pool=pool)
    head = [Candidate(items[i].id, items[i].content) for i in ids.tolist()[:pool]]
    if not head:
        return 0.0, []
    scores = reranker.scores(q.query, head)
    ordered = sorted((c.id for c in head), key=lambda i: -scores.get(i, 0.0))
    return (max(scores.values()) if scores else 0.0), ordered


def rerank_gate_probes(hybrid: HybridSystem, reranker: ScoringReranker, questions: Sequence[Question], k: int,
                       pool: int) -> list[Probe]:
    probes = []
    for q, foreign in zip(questions, foreign_groups(questions, "rerank-gate"), strict=True):
        pos_top, ordered = _rerank_head(hybrid, reranker, q, q.group, pool)
        neg_top, _ = _rerank_head(hybrid, reranker, q, foreign, pool)
        rank = gold_rank([(i,) for i in ordered], q.gold)
        probes.append(Probe(pos_top, neg_top, 0 <= rank < k))
    return probes


def _reranker(opts: RunOptions) -> ScoringReranker | None:
    """-rerank-gate's cross-encoder, loaded (None for -vec-gate); refused when none is configured."""
    if opts.mode(GateOptions).vec_gate:
        return None
    if not cross_encoder_configured(opts):
        raise BenchError("-rerank-gate needs a cross-encoder: -rerank-url URL or -rerank-model local:PATH")
    reranker = reranker_from(opts, llm=False)
    assert isinstance(reranker, ScoringReranker)
    reranker.load()
    return reranker


@dataclass
class GateState(PlanState):
    """A gate study's plan state: which sweep (``vec-gate`` or ``rerank-gate``), its thresholds, the
    cross-encoder (None for the vector gate), the cross-encoder's settings recorded in the config (``extra``)
    and the mode's identity settings."""

    name: str = ""
    thresholds: list[float] = field(default_factory=list)
    reranker: ScoringReranker | None = None
    extra: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)


@dataclass
class GateSweep:
    """A gate study's result: one row per threshold and the top-score distribution of both sides."""

    rows: list[GateRow]
    dist: dict[str, dict[str, float]]


class GatesMode(Mode):
    """``memini-bench study gates`` (see the module docstring): ``plan`` loads the cross-encoder (-rerank-gate) and
    the data and claims the results path; ``run`` ingests into the hybrid and probes every question; ``render``
    prints the distribution and the sweep; ``write`` the results file."""

    verb = "study gates"

    def plan(self, opts: RunOptions) -> Plan:
        check_outputs(opts)
        g = opts.mode(GateOptions)
        name = "vec-gate" if g.vec_gate else "rerank-gate"
        thresholds = list(g.vec_gate or g.rerank_gate)
        reranker = _reranker(opts)
        encoder = build_encoder(opts.embed)
        ds = load_prepared(opts)
        ctx = opts.fixed_context(encoder)
        extra: dict = {}
        if reranker is not None:
            tier = opts.mode(RerankTierOptions)
            extra = {"rerank_gate_pool": g.rerank_gate_pool, "rerank_url": tier.rerank_url,
                     "rerank_model": tier.rerank_model}
        settings = {"thresholds": thresholds, **extra}
        ident, out = plan_results(opts, ds, ctx, None, mode=name, mode_settings=settings, suffix=f"-{name}")
        return Plan(self.verb, opts, items=len(ds.items), questions=len(ds.questions), identity=ident,
                    writes=[out] if out is not None else [],
                    state=GateState(ds=ds, ctx=ctx, encoder=encoder, out=out, name=name, thresholds=thresholds,
                                    reranker=reranker, extra=extra, settings=settings))

    def run(self, plan: Plan) -> Outcome:
        opts, st = plan.opts, plan.state
        ds, reranker = st.ds, st.reranker
        hybrid = ingested_hybrid(opts, st.encoder, ds)
        k = opts.k[0]
        if reranker is None:
            probes = vec_gate_probes(hybrid, ds.questions, k)
            label, note, title, column = ("top vector-score distribution (1/(1+L2))", "",
                                          "per-query vector-relevance gate sweep", "min_vec_score")
        else:
            pool = opts.mode(GateOptions).rerank_gate_pool
            probes = rerank_gate_probes(hybrid, reranker, ds.questions, k, pool)
            label, note, title, column = ("top rerank-score distribution", f" (pool={pool})",
                                          "cross-encoder rerank-gate sweep", "min_rerank_score")
        rows = sweep(probes, st.thresholds)
        pos, neg = [p.pos_top for p in probes], [p.neg_top for p in probes]
        text = _distribution_lines(label, pos, neg, len(probes), note) + "\n" + _markdown(rows, k, title, column)
        dist = {side: {f"p{p}": percentile(xs, p) for p in PERCENTILES} for side, xs in (("positive", pos),
                                                                                           ("negative", neg))}
        return Outcome(plan, 0, text, GateSweep(rows, dist))

    def write(self, outcome: Outcome) -> None:
        opts, st, out = outcome.plan.opts, outcome.plan.state, outcome.plan.state.out
        if out is None:
            return
        config = build_config(opts, st.ds, st.ctx, mode=st.name, mode_settings=st.settings,
                              gate_k=opts.k[0], thresholds=st.thresholds, identity=outcome.plan.identity,
                              **st.extra)
        write_results(out, GateResults(config=config, rows=tuple(asdict(r) for r in outcome.result.rows),
                                       distribution=outcome.result.dist))
