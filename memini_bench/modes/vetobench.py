"""``-suite vetobench``: veto recall of every system on each VetoBench suite, the scale curve (``-scale``), the
behavioural layer (``-live``; its conditions in ``vetobench.conditions``) and the summary of archived live runs
(``-veto-summary``: behaviour, veto absence, what ingestion kept).

Systems: ``veto-composite`` (files known) and ``veto-composite-nofiles`` (the five-signal scorer), memini's hybrid
and vector per embedder in ``-veto-embedders`` (``memini-hybrid/hash``, ``memini-hybrid/minilm``, ...) and
``memini-keyword``, with every hybrid flag of the run (``compare.systems_for``); ``-systems`` picks a subset by
name (``compare.select_systems``: ``hybrid`` or ``memini-hybrid`` picks every embedder's, ``hybrid/hash`` one).
The CI gate is RoBrain's: veto recall@5 of ``veto-composite`` on the first suite (``vetobench``) >= 0.80, else
exit code 1 (not checked, with a logged line, when ``veto-composite`` is not in the run).

Every user error (flags, fixtures, sizes below a suite's decisions, unknown conditions, ``-plot`` without
matplotlib, a holdout that leaves no scenario) is a BenchError raised before anything is ingested or written.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memini_bench.core.contract import System, describe
from memini_bench.core.dataset import Dataset, EmptyDataset, prepare
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import build_encoder
from memini_bench.errors import BenchError
from memini_bench.evaluation.runner import close_all
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState
from memini_bench.modes.common import embedding_identity, log, mode_identity, shared_parts, write_results
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import VetoOptions
from memini_bench.results.provenance import harness
from memini_bench.results.schema import VetoResults, VetoScaleResults
from memini_bench.results.write import check_destinations, write_json
from memini_bench.vetobench.composite import FILES_KNOWN
from memini_bench.vetobench.conditions import Makers
from memini_bench.vetobench.scale import PLOT_NEEDS

GATE_SYSTEM = FILES_KNOWN
GATE_MIN = 0.80


def _encoder(opts: RunOptions, name: str) -> TextEncoder:
    """The run's embedding settings (model flags, cache) with another embedder name."""
    return build_encoder(dataclasses.replace(opts.embed, embedder=name), strict=False)


def _archive_path(base: str, run: int, runs: int) -> Path:
    p = Path(base)
    return p if runs == 1 else p.with_name(f"{p.stem}-run{run}{p.suffix or '.json'}")


def _check_flags(opts: RunOptions) -> None:
    x = opts.mode(VetoOptions)
    if opts.output.plot and not x.scale:
        raise BenchError("-plot: VetoBench draws only the scale curve; add -scale")
    if x.archive and opts.output.no_write:
        raise BenchError("-archive: cannot be combined with -no-write (which writes nothing); drop one of them")
    if not opts.output.no_write:
        check_destinations(folders=[("-out", opts.output.out)], files=[("-archive", x.archive)])


def _suite_runs(opts: RunOptions, suites: list, systems_for) -> tuple[list, list]:
    """(suite, prepared data set, its systems) per suite the holdout leaves scenarios in; and the emptied ones."""
    from memini_bench.loaders.vetobench import suite_dataset

    runs, emptied = [], []
    for suite in suites:
        try:
            ds = prepare(suite_dataset(suite), holdout=opts.core.holdout, limit=opts.core.limit)
        except EmptyDataset:
            emptied.append(suite)
            continue
        runs.append((suite, ds, systems_for(ds)))
    if not runs:
        raise BenchError(f"-holdout {opts.core.holdout}: leaves no scenario in any suite of {opts.data}; use -holdout "
                         "all (or tune)")
    return runs, emptied


def _scale_plan(opts: RunOptions, suites: list) -> tuple[list[int], object]:
    """-scale: the sizes and the suite the curve grows (the first without a lifecycle), checked."""
    x = opts.mode(VetoOptions)
    if not x.scale:
        return [], None
    sizes = list(x.veto_sizes)
    base = next((s for s in suites if not s.lifecycle), suites[0])
    if sizes[0] < len(base.active):
        raise BenchError(f"-veto-sizes {sizes[0]}: smaller than suite {base.name}'s {len(base.active)} "
                         f"decisions; use sizes from {len(base.active)} up")
    if opts.output.plot and not opts.output.no_write and importlib.util.find_spec("matplotlib") is None:
        raise BenchError(PLOT_NEEDS)
    return sizes, base


def _live_plan(opts: RunOptions, names: list[str], encoders: dict, composite_encoder) -> tuple:
    """-live: the chat client and the condition makers (a third-party system's factory is loaded, checked, here);
    (None, None) without -live."""
    from memini_bench.vetobench import conditions

    x = opts.mode(VetoOptions)
    if not x.live:
        return None, None
    from memini_bench.clients.providers import chat_from_env

    conditions.condition_names(names, list(x.veto_conditions))
    client = chat_from_env()  # MEMINI_LLM_PROVIDER: OpenAI-compatible or Anthropic (clients.providers)
    extractor = dataclasses.replace(client, model=x.extract_model) if x.extract_model else client
    first = next(iter(encoders.values()), None)
    makers = Makers(third_party=lambda name: _third_party(opts, name, first), extract=extractor.complete,
                    extract_model=extractor.model, composite_encoder=composite_encoder, echo=log)
    return client, makers


def veto_settings(opts: RunOptions, data_sha256: dict[str, str], names: list[str]) -> dict:
    """What VetoBench's results config records of its settings (and its identity holds): the data files' sha256,
    the systems, -veto-files, -composite-embedder, every hybrid setting, the holdout and limit."""
    x = opts.mode(VetoOptions)
    return {"suite": "vetobench", "data_sha256": data_sha256, "systems": names, "veto_files": x.veto_files,
            "composite_embedder": x.composite_embedder, **shared_parts(opts, "hybrid", "split")}


def veto_identity(opts: RunOptions, settings: dict, embedding: dict[str, dict], composite_embedding: dict,
                  system_settings: list[dict]) -> dict:
    """VetoBench's results identity (``modes.common.mode_identity``): its ``settings`` (``veto_settings``), the
    embedders as built, the systems' ``describe()`` and the leak rule."""
    return mode_identity(opts, "vetobench", settings, shared=("leaks",), measured={
        "embedding": embedding, "composite_embedding": composite_embedding, "system_settings": system_settings})


def _identity(opts: RunOptions, suites: list, names: list[str], encoders: dict, composite_encoder,
              systems: list) -> tuple[dict, dict]:
    """The results file's config (its identity in it) and the identity itself."""
    settings = veto_settings(opts, {source.path: source.sha256 for suite in suites for source in suite.sources},
                             names)
    ident = veto_identity(opts, settings, {name: embedding_identity(enc) for name, enc in encoders.items()},
                          embedding_identity(composite_encoder), [describe(s) for s in systems])
    return {"suite": settings["suite"], "data": opts.data, **settings, "identity": ident}, ident


@dataclass
class VetoState(PlanState):
    """VetoBench's plan state: ``summary`` (-veto-summary: only archives are summarised), each suite's run
    (suite, data set, systems), the lineup builder, the scale curve's sizes and base suite (None without
    -scale), the live layer's client and makers (None without -veto-live), the results file's config, the
    scale file's claimed path and the embedders by name."""

    summary: bool = False
    runs: list = field(default_factory=list)
    systems_for: Callable[[Dataset], list] | None = None
    sizes: list[int] = field(default_factory=list)
    base: Any = None
    client: Any = None
    makers: Makers | None = None
    config: dict = field(default_factory=dict)
    scale_out: Path | None = None
    encoders: dict[str, TextEncoder] = field(default_factory=dict)


@dataclass
class VetoRun:
    """VetoBench's result: one record per suite and the scale curve's points (None without -scale)."""

    records: list[dict]
    points: list | None = None


class VetoMode(Mode):
    """``memini-bench vetobench`` (see the module docstring): ``plan`` reads the suites, builds every system and
    claims the results paths (every refusal before any ingest); ``run`` scores each suite, printing its table as
    it is done (a long -live run shows what it has), then the scale curve and the live layer; ``write`` writes the
    results files."""

    verb = "vetobench"

    def plan(self, opts: RunOptions) -> Plan:
        from memini_bench.loaders.vetobench import read_suites
        from memini_bench.vetobench import evaluate as ev

        _check_flags(opts)
        x = opts.mode(VetoOptions)
        if x.veto_summary:
            return Plan(self.verb, opts, state=VetoState(summary=True))
        suites = read_suites(opts.data)
        encoders = {name: _encoder(opts, name) for name in x.veto_embedders}
        composite_encoder = _encoder(opts, x.composite_embedder)  # one per run: every suite and size shares it

        def systems_for(ds: Dataset) -> list:
            return ev.select_systems(ev.lineup(ds, encoders, composite_encoder=composite_encoder,
                                            veto_files=x.veto_files, hybrid=opts.hybrid, extra=opts.lineup.system),
                                     opts.lineup.systems, "VetoBench")

        runs, emptied = _suite_runs(opts, suites, systems_for)
        names = [s.name for s in runs[0][2]]
        sizes, base = _scale_plan(opts, suites)
        client, makers = _live_plan(opts, names, encoders, composite_encoder)
        for suite in emptied:
            log(f'suite "{suite.name}": none of its {len(suite.scenarios)} scenarios is left after -holdout '
                f"{opts.core.holdout}; skipped")
        if GATE_SYSTEM not in names:
            log(f"gate: {GATE_SYSTEM} is not in this run (-systems / -veto-files); the {GATE_MIN:.2f} veto "
                "recall@5 gate is not checked")
        config, ident = _identity(opts, suites, names, encoders, composite_encoder, runs[0][2])
        state = VetoState(runs=runs, systems_for=systems_for, sizes=sizes, base=base, client=client, makers=makers,
                          config=config, encoders=encoders)
        plan = Plan(self.verb, opts, systems=names, questions=sum(len(ds.questions) for _, ds, _ in runs),
                    items=sum(len(ds.items) for _, ds, _ in runs), identity=ident, state=state)
        if not opts.output.no_write:  # the path each results file claims, before any system ingests
            state.out = plan.claim(Path(opts.output.out) / "vetobench.json", ident)
            if x.scale:
                state.scale_out = plan.claim(Path(opts.output.out) / "vetobench-scale.json",
                                                {**ident, "sizes": sizes, "seed": x.scale_seed})
        return plan

    def run(self, plan: Plan) -> Outcome:
        opts, st = plan.opts, plan.state
        x = opts.mode(VetoOptions)
        if st.summary:
            from memini_bench.vetobench import summary

            text = summary.summarize_archives(summary.read_archives(list(x.veto_summary)))
            return Outcome(plan, 0, text)
        records, live_suites, gate = _score_suites(opts, st.runs, st.client)
        st.config = {**st.config, "embedders": {n: e.describe() for n, e in st.encoders.items()}, **harness()}
        points = None
        if st.base is not None:
            from memini_bench.vetobench import scale

            points = scale.curve(st.base, st.systems_for, st.sizes, seed=x.scale_seed, echo=log,
                                 guard=opts.guard)
            sys.stdout.write(scale.markdown(points, st.base.name))
        if st.client is not None:
            try:
                _live(st.client, live_suites, runs=x.veto_runs, wanted=list(x.veto_conditions),
                      archive=x.archive, makers=st.makers)
            finally:
                for _, systems in live_suites:
                    close_all(systems)
        return Outcome(plan, 0 if gate is None or gate >= GATE_MIN else 1, result=VetoRun(records, points))

    def write(self, outcome: Outcome) -> None:
        opts, st, data = outcome.plan.opts, outcome.plan.state, outcome.result
        if st.summary:
            return
        if st.out is not None:
            write_results(st.out, VetoResults(config=st.config, suites=tuple(data.records)))
        if st.scale_out is not None and data.points is not None:
            from memini_bench.vetobench import scale

            x, base = opts.mode(VetoOptions), st.base
            write_results(st.scale_out, VetoScaleResults(
                config={**st.config, "sizes": st.sizes, "seed": x.scale_seed,
                        "identity": outcome.plan.claims[st.scale_out]},
                points=tuple(scale.as_json(data.points))))
            if opts.output.plot:
                png = st.scale_out.with_suffix(".png")
                scale.plot(data.points, png, f"{base.name}: veto recall@5 vs decision-log size", len(base.active))
                log(f"wrote {png}")


def _score_suites(opts: RunOptions, runs: list, client) -> tuple[list[dict], list, float | None]:
    """Score every suite (its table printed as soon as it is done); the records, the suites the live layer reuses,
    and the gate's veto recall@5 (None: not in the run)."""
    from memini_bench.vetobench import evaluate as ev

    records, live_suites, gate = [], [], None
    for suite, ds, systems in runs:
        log(f'suite "{ds.name}": {len(ds.items)} decisions, {len(ds.questions)} scenarios'
            + "".join(f"; {n}" for n in ds.notes))
        _, scores = ev.evaluate(systems, ds, close=client is None, guard=opts.guard)  # the live layer reuses them
        sys.stdout.write(ev.markdown(scores, ds, suite.as_of))
        sys.stdout.flush()
        records.append({"suite": ds.name, "decisions": len(ds.items), "scenarios": len(ds.questions),
                        "as_of": suite.as_of.isoformat(), "veto": [ev.as_json(s) for s in scores],
                        "scores": [dataclasses.asdict(m) for s in scores for m in s.scores]})
        if gate is None and not suite.lifecycle:
            gate = next((s.recall_at_5 for s in scores if s.system == GATE_SYSTEM), None)
        if client is not None:
            kept = {q.id for q in ds.questions}
            live_suites.append((dataclasses.replace(suite, scenarios=tuple(s for s in suite.scenarios
                                                                             if s.id in kept)), systems))
    if gate is not None:
        verdict = "PASS" if gate >= GATE_MIN else "FAIL"
        print(f"gate: {GATE_SYSTEM} veto recall@5 (files known) {gate:.2f} >= {GATE_MIN:.2f}: {verdict}\n")
    return records, live_suites, gate


def _third_party(opts: RunOptions, name: str, encoder: TextEncoder | None) -> System:
    """A fresh registered system for a third-party condition, on the run's options and first embedder."""
    from memini_bench.vetobench.conditions import registry_system

    return registry_system(name, opts.context(lambda: encoder))


def _live(client, live_suites: list, *, runs: int = 1, wanted: Sequence[str] = (), archive: str = "",
          makers: Makers | None = None) -> None:
    """``runs`` live runs over every (suite, systems). Each suite's built-in and corpus conditions are built (and
    their systems ingest) once and reused by every run; third-party and extraction conditions ingest anew in every
    run (their ingestion is what varies), and are closed after it."""
    from memini_bench.vetobench import conditions as cond
    from memini_bench.vetobench import live, summary

    makers = makers or Makers(extract=client.complete, extract_model=client.model, echo=log)
    prepared = [cond.SuiteConditions(suite, systems, wanted, makers) for suite, systems in live_suites]
    docs = []
    for i in range(1, runs + 1):
        records, aborted = [], ""
        for plan in prepared:
            suite = plan.suite
            conditions = plan.for_run()
            try:
                log(f"live run {i}/{runs}, {suite.name}: {len(conditions)} conditions x {len(suite.scenarios)} "
                    f"scenarios, model {client.model}")
                result = live.run_live(suite, conditions, client.complete, echo=log)
                records.append(live.suite_record(result, suite, conditions))
                for name, rec in records[-1]["ingest"].items():  # say so rather than score an empty store silently
                    if rec.get("memories") == []:
                        log(f"warning: {name} held 0 memories after ingestion (run {i}): its cells score an empty "
                            "context")
            finally:
                plan.close(conditions)
            if result.aborted:
                aborted = result.aborted
                break
        doc = live.archive_document(records, model=client.model, endpoint=client.url)
        docs.append(doc)
        if archive:
            path = _archive_path(archive, i, runs)
            write_json(path, doc)
            log(f"wrote {path}")
        if aborted:
            raise BenchError(f"-live: {aborted}; check MEMINI_LLM_BASE_URL, MEMINI_LLM_MODEL and the API key")
    sys.stdout.write(summary.summarize_archives(docs))
