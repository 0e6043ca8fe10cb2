"""``-entity-bridge``: memini's entity-bridge diagnostic (``studies.bridge``) for every system of the run, on the
``-multihop`` questions (``-multihop-category``, ``-multihop-min-gold``, ``-limit``), at k 10 (or the largest
``-k``) with a ``pool_size(k)``-deep recall. Writes ``<out>/<dataset>-entity-bridge[...].json``.

Every system runs under the run checks (``evaluation.guarded``, docs/run-checks.md): each hook guarded, the deep
recall checked against ``pool_size(k)`` and each second hop against k; with ``-leaks count`` each result row (one
per system and vocabulary) counts the hits its recalls dropped as ``leaked``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memini_bench.evaluation.guarded import guarded_systems
from memini_bench.modes.base import Mode, Outcome, Plan
from memini_bench.modes.common import build_config, check_outputs, plan_results, write_results
from memini_bench.modes.multihop import StudyRun, StudyState, prepared, study_k, warm_queries
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import EntityBridgeOptions, MultihopOptions
from memini_bench.results.schema import study_document
from memini_bench.studies import bridge
from memini_bench.systems.config import pool_size
from memini_bench.systems.lineup import systems_for


def _settings(opts: RunOptions, k: int, caps: tuple[float, ...], names: list[str]) -> tuple[dict, tuple[str, ...]]:
    """The diagnostic's settings (in its identity) and the name tokens of the non-default ones."""
    m = opts.mode(MultihopOptions)
    settings = {"category": m.multihop_category, "min_gold": m.multihop_min_gold, "k": k, "df_caps": list(caps)}
    if names != [bridge.DEFAULT_VOCABULARY]:
        settings["vocabularies"] = names
    tokens = tuple(t for t, default in ((f"cat{m.multihop_category}", m.multihop_category == "1"),
                                        (f"mingold{m.multihop_min_gold}", m.multihop_min_gold == 2),
                                        (f"k{k}", k == 10),
                                        ("caps" + "+".join(f"{c:g}" for c in caps), caps == bridge.DEFAULT_CAPS),
                                        ("vocab-" + "+".join(names), names == [bridge.DEFAULT_VOCABULARY]))
                   if not default)
    return settings, tokens


@dataclass
class BridgeState(StudyState):
    """The entity-bridge study's plan state: a study's, with the document-frequency caps and the vocabularies."""

    caps: tuple[float, ...] = ()
    names: list[str] = field(default_factory=list)


class EntityBridgeMode(Mode):
    """``memini-bench study entity-bridge`` (see the module docstring): ``plan`` builds the systems, picks the
    questions and claims the results path; ``run`` diagnoses each system per vocabulary in its guard; ``render``
    prints the tables; ``write`` the results file."""

    verb = "study entity-bridge"

    def plan(self, opts: RunOptions) -> Plan:
        check_outputs(opts)
        caps = tuple(sorted(opts.mode(EntityBridgeOptions).bridge_df_caps, reverse=True))
        k = study_k(opts)
        ctx = opts.context()
        systems = systems_for(opts.lineup, ctx)
        ds = prepared(opts)
        names = list(dict.fromkeys(opts.mode(EntityBridgeOptions).bridge_vocab))
        settings, tokens = _settings(opts, k, caps, names)
        ident, out = plan_results(opts, ds, ctx, systems, mode="entity-bridge", mode_settings=settings,
                                  suffix="-entity-bridge", extra_tokens=tokens)
        return Plan(self.verb, opts, systems=[s.name for s in systems], items=len(ds.items),
                    questions=len(ds.questions), identity=ident, writes=[out] if out is not None else [], ks=(k,),
                    state=BridgeState(ds=ds, ctx=ctx, out=out, systems=systems, k=k, settings=settings, caps=caps,
                                      names=names))

    def run(self, plan: Plan) -> Outcome:
        opts, st = plan.opts, plan.state
        ds, ctx, k, caps = st.ds, st.ctx, st.k, st.caps
        vocabs = {name: bridge.Vocabulary(ds, bridge.VOCABULARIES[name]) for name in st.names}
        results = []
        with guarded_systems(st.systems, opts.guard, questions=ds.questions) as guarded:
            for system in guarded:
                system.ingest(ds.items)
                for name, vocab in vocabs.items():
                    before = system.leaked
                    found = bridge.diagnose(system, ds, vocab, k, caps, warm=lambda texts: warm_queries(ctx, texts),
                                            vocabulary=name)
                    results.append({**found.as_dict(), **system.leak_fields(since=before)})
        m = opts.mode(MultihopOptions)
        config = build_config(opts, ds, ctx, st.systems, mode="entity-bridge", mode_settings=st.settings,
                              identity=plan.identity, multihop_category=m.multihop_category,
                              multihop_min_gold=m.multihop_min_gold, bridge_k=k, bridge_pool=pool_size(k),
                              bridge_df_caps=list(caps), anchors=bridge.ANCHORS, max_promote=bridge.MAX_PROMOTE)
        first = vocabs.get(bridge.DEFAULT_VOCABULARY) or bridge.Vocabulary(ds)  # the entity coverage line, always
        doc = {"config": config, "vocabulary": bridge.vocabulary_stats(first), "results": results}
        others = {n: bridge.vocabulary_stats(v) for n, v in vocabs.items() if n != bridge.DEFAULT_VOCABULARY}
        if others:
            doc["vocabularies"] = others
        return Outcome(plan, 0, bridge.render(doc), StudyRun(doc))

    def write(self, outcome: Outcome) -> None:
        out = outcome.plan.state.out
        if out is not None:
            write_results(out, study_document(outcome.result.doc))
