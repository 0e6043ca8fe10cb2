"""``-multihop``: memini's multi-hop retrieval ceiling (``studies.multihop``) for every system of the run.

Questions: ``-multihop-category`` (default "1", LoCoMo's multi-hop) with at least ``-multihop-min-gold`` (2) gold
ids, then ``-limit`` (memini's MEMINI_MULTIHOP_LIMIT: an even subsample of those questions). k = 10 (memini's)
unless ``-k`` is given (then its largest). Items are pruned to the kept questions' groups, as memini ingests only
those conversations. Writes ``<out>/<dataset>-multihop[...].json`` (per-question coverage with ``-per-question``).

Every system runs under the run checks (``evaluation.guarded``, docs/run-checks.md): each hook guarded, each of the
two recalls per question checked against its k; with ``-leaks count`` the hits dropped over both recalls are each
result's ``leaked``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memini_bench.core.contract import System
from memini_bench.evaluation.guarded import guarded_systems
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState
from memini_bench.modes.common import build_config, check_outputs, load_prepared, log, plan_results, write_results
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import MultihopOptions
from memini_bench.results.schema import study_document
from memini_bench.results.write import write_jsonl
from memini_bench.studies import multihop
from memini_bench.systems.context import SystemContext
from memini_bench.systems.lineup import systems_for

DEFAULT_K = 10


def study_k(opts: RunOptions) -> int:
    """memini's k 10, or the largest ``-k`` when given."""
    return opts.depth if "k" in opts.given else DEFAULT_K


def prepared(opts: RunOptions):
    """The data set with holdout applied, then the study's questions, then ``-limit`` over those."""
    m = opts.mode(MultihopOptions)
    whole = load_prepared(dataclasses.replace(opts, core=dataclasses.replace(opts.core, limit=0)))
    ds = multihop.select(whole, m.multihop_category, m.multihop_min_gold, opts.core.limit)
    log(f'study "{ds.name}": {len(ds.questions)} questions (category {m.multihop_category!r}, >= '
        f"{m.multihop_min_gold} gold), {len(ds.items)} items")
    return ds


def warm_queries(ctx: SystemContext, texts: list[str]) -> None:
    """Embed a phase's queries in one batch through the run's shared encoder (when a system built it), so each
    recall finds its query vector in the encoder's memo."""
    if ctx.encoder_built and texts:
        ctx.encoder.queries(texts)


@dataclass
class StudyState(PlanState):
    """A study's plan state (multihop, entity-bridge): the systems built, the study's K and its identity
    settings."""

    systems: list[System] = field(default_factory=list)
    k: int = 0
    settings: dict = field(default_factory=dict)


@dataclass
class StudyRun:
    """A study's result: its results document (``config``, ``results`` ...) and its per-question rows."""

    doc: dict
    per_question: list[dict] = field(default_factory=list)


class MultihopMode(Mode):
    """``memini-bench study multihop`` (see the module docstring): ``plan`` builds the systems, picks the questions
    and claims the results path; ``run`` ingests and scores each system in its guard; ``render`` prints the
    regimes; ``write`` the results file (and -per-question)."""

    verb = "study multihop"

    def plan(self, opts: RunOptions) -> Plan:
        check_outputs(opts)
        m = opts.mode(MultihopOptions)
        k = study_k(opts)
        ctx = opts.context()
        systems = systems_for(opts.lineup, ctx)
        ds = prepared(opts)
        settings = {"category": m.multihop_category, "min_gold": m.multihop_min_gold, "k": k}
        tokens = tuple(t for t, default in ((f"cat{m.multihop_category}", m.multihop_category == "1"),
                                            (f"mingold{m.multihop_min_gold}", m.multihop_min_gold == 2),
                                            (f"k{k}", k == DEFAULT_K)) if not default)
        ident, out = plan_results(opts, ds, ctx, systems, mode="multihop", mode_settings=settings,
                                  extra_tokens=tokens)
        writes = [p for p in (out, Path(opts.output.per_question) if opts.output.per_question else None)
                  if out is not None and p is not None]
        return Plan(self.verb, opts, systems=[s.name for s in systems], items=len(ds.items),
                    questions=len(ds.questions), identity=ident, writes=writes, ks=(k,),
                    state=StudyState(ds=ds, ctx=ctx, out=out, systems=systems, k=k, settings=settings))

    def run(self, plan: Plan) -> Outcome:
        opts, st = plan.opts, plan.state
        ds, ctx, k, m = st.ds, st.ctx, st.k, opts.mode(MultihopOptions)
        results, per_question = [], []
        with guarded_systems(st.systems, opts.guard, questions=ds.questions) as guarded:
            for system in guarded:
                system.ingest(ds.items)
                rows, scores = multihop.run_system(system, ds, k, warm=lambda texts: warm_queries(ctx, texts))
                results.append({"system": system.name, "questions": len(rows), "k": k,
                                "regimes": [asdict(s) for s in scores], **system.leak_fields()})
                per_question += [{"system": system.name, **asdict(r)} for r in rows]
        config = build_config(opts, ds, ctx, st.systems, mode="multihop", mode_settings=st.settings,
                              identity=plan.identity, multihop_category=m.multihop_category,
                              multihop_min_gold=m.multihop_min_gold, multihop_k=k)
        doc = {"config": config, "results": results}
        return Outcome(plan, 0, multihop.render(doc), StudyRun(doc, per_question))

    def write(self, outcome: Outcome) -> None:
        opts, out = outcome.plan.opts, outcome.plan.state.out
        if out is None:
            return
        write_results(out, study_document(outcome.result.doc))
        if opts.output.per_question:
            write_jsonl(Path(opts.output.per_question), outcome.result.per_question)
            log(f"wrote {opts.output.per_question}")
