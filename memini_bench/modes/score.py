"""``memini-bench score``: score rankings made elsewhere with the arithmetic of a run ("no grading your own
homework"): the same registered metrics (``core.metrics``, ``-metrics``), K list, per-category tables and paired
tests (``evaluation.significance``: exact McNemar on recall_any@K, paired bootstrap on MRR and nDCG@K, Holm over the
family, every pair of runs under ``-significance``), without running any system. ``ScoreMode`` is a mode like the
others (``modes.base.Mode``: plan, run, render, write; ``--plan`` prints what it would read and write); its own
flags are ``modes.score_options.ScoreOptions`` and it reads the other verbs' ``-suite``, ``-data``, ``-k``,
``-metrics``, ``-out``, ``-leaks``, ``-exclude`` and loader flags, ``-significance``, ``-resamples``, ``-seed`` and
``-categories``.

Two forms (``results.rankings`` reads the files, ``evaluation.external`` joins them with the gold):

- ``score -qrels Q -run R1 -run R2``: TREC run files against TREC qrels (``-trec`` writes both);
- ``score -suite S -data F -run R.jsonl``: JSONL ``{question_id, ranked_ids}`` rankings (or TREC runs) against a
  suite's data file, the gold from the suite's loader; the ranked ids are checked against the data set (the
  ``-leaks`` rule), the file's ``data_sha256`` (when it records one) against ``-data``, and the suite's list of
  known bad gold is reported (``-exclude known-bad`` leaves those questions out).

``mrr`` (no ``@K``) is MRR at the largest ``-k`` (``core.metrics.resolve_cutoff``), as in a run, whatever the depth of
the file. A run made elsewhere has no recall latency: its rows hold none (shown ``-``, never the best). With
``-out DIR`` the scores and tests are written to ``DIR/score-<dataset>.json`` (its hashed name when that file holds
another scoring: ``results.identity.claim``).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from memini_bench.core.metrics import MRR, NDCG, Metric, RecallAllAtK, RecallAnyAtK, TokensInjected
from memini_bench.core.metrics import parse as parse_metric
from memini_bench.core.runs import RunResult
from memini_bench.core.table import Cell, Column, Table, render
from memini_bench.errors import BenchError
from memini_bench.evaluation.external import Gold, Scored, as_result, questions_from_dataset, questions_from_qrels
from memini_bench.loaders import LoadOptions
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState, ScoredRuns
from memini_bench.modes.common import category_systems, log, write_results
from memini_bench.modes.options import RunOptions
from memini_bench.modes.score_options import ScoreOptions
from memini_bench.modes.specs import SystemsRunOptions
from memini_bench.results.rankings import Rankings, read_judgements, read_rankings
from memini_bench.results.schema import Score
from memini_bench.results.write import HYBRID, category_table, format_metric, metrics_table

#: Flags that need the data set (``-suite``/``-data``): qrels list only the judged documents.
DATA_FLAGS = ("leaks", "exclude", "abstention", "granularity", "unit")


def _flag(name: str) -> str:
    return "-" + name.replace("_", "-")


@dataclass
class ScoreState(PlanState):
    """A ``score`` plan's state: the gold (qrels or a suite's data file), the run files read, each one's questions
    as a ``RunResult`` (scored by the same code as a run's) and the category tables asked."""

    gold: Gold | None = None
    runs: list[Rankings] = field(default_factory=list)
    results: list[RunResult] = field(default_factory=list)
    tables: list[str] | None = None


class ScoreMode(Mode):
    """``memini-bench score`` (see the module docstring)."""

    verb = "score"
    recalls_to_k = False

    def check(self, opts: RunOptions) -> None:
        """The refusals that need two flags at once, before the flag check."""
        o, given = opts.mode(ScoreOptions), opts.given
        if not o.run:
            raise BenchError("score: give at least one -run FILE (a TREC run or a JSONL of rankings)")
        suite_given = "suite" in given
        if bool(o.qrels) == suite_given:
            raise BenchError("score: give the gold once: -qrels FILE (TREC qrels) or -suite NAME -data FILE")
        if "data" in given and not suite_given:
            raise BenchError("-data: names the data file of -suite; add -suite NAME (or drop -data with -qrels)")
        for name in DATA_FLAGS:
            if o.qrels and name in given:
                raise BenchError(f"{_flag(name)}: needs the data set (-suite NAME -data FILE); qrels list only the "
                                 "judged documents")
        if opts.load.exclude and suite_given:
            from memini_bench.loaders.known_bad import for_suite

            if for_suite(opts.suite) is None:
                raise BenchError(f"-exclude {opts.load.exclude}: -suite {opts.suite} has no list of known bad gold; "
                                 "drop it")
        c = opts.mode(SystemsRunOptions)
        if c.significance and len(o.run) < 2:
            raise BenchError("-significance: tests every pair of runs; give two or more -run files")
        for name in ("resamples", "seed", "alpha"):
            if name in given and not c.significance:
                raise BenchError(f"{_flag(name)}: sets the paired tests; add -significance (with two or more -run "
                                 "files) or drop it")
        for m in opts.output.metric_list():
            if m.unit in unmeasured(True):
                raise BenchError(f"-metrics {m.name}: a run made elsewhere records no recall latency; drop it")
            if m.unit in unmeasured(False) and o.qrels:
                raise BenchError(f"-metrics {m.name}: counts the tokens of the ranked items, which qrels do not hold; "
                                 "score against -suite NAME -data FILE, or drop it")

    def plan(self, opts: RunOptions) -> Plan:
        o = opts.mode(ScoreOptions)
        out_dir = opts.output.out if "out" in opts.given else ""
        if out_dir:
            from memini_bench.results.write import check_destinations

            check_destinations(folders=[("-out", out_dir)])
        runs = [read_rankings(p) for p in o.run]
        gold = gold_of(opts, runs)
        names = labels(runs)
        scored = [as_result(run, gold, system=label, leaks=opts.guard.leaks) for run, label in zip(runs, names,
                                                                                                     strict=True)]
        for run, s in zip(runs, scored, strict=True):
            _announce(run, s, gold, depth_asked(opts))
        tables = category_systems(opts, names)
        ident = identity(opts, gold, runs)
        writes = []
        if out_dir:
            from memini_bench.results.identity import claim, safe_name

            writes = [claim(Path(out_dir) / f"score-{safe_name(gold.dataset)}.json", ident)]
        source = (f"-qrels {o.qrels}" if o.qrels else f"-suite {opts.suite}" + (f", -data {opts.data}"
                                                                                   if opts.data else ""))
        notes = [f"gold: {source}: {len(gold.questions)} questions, K {','.join(map(str, opts.k))}"]
        notes += [f"run: {r.path} ({r.form}, {len(r.ranked)} questions ranked, as {n})" for r, n in zip(runs, names,
                                                                                                         strict=True)]
        return Plan(self.verb, opts, systems=names, identity=ident, writes=writes, notes=notes, reads_data=False,
                    state=ScoreState(out=writes[0] if writes else None, gold=gold, runs=runs,
                                     results=[s.result for s in scored], tables=tables))

    def run(self, plan: Plan) -> Outcome:
        from memini_bench.evaluation.metrics import score_all

        opts, st = plan.opts, plan.state
        gold, results = st.gold, st.results
        asked = opts.output.metric_list()
        units = unmeasured(gold.content_of is not None)
        scores = [measured(s, units) for s in score_all(results, opts.k, asked)]
        text = markdown(scores, gold, opts.k, asked, st.tables)
        extra: dict = {}
        if gold.source is not None:
            from memini_bench.evaluation.breakdowns import breakdowns

            own, extra = breakdowns(gold.source, results, opts.k)  # the data set's own tables, as a run prints them
            text += own
        if opts.mode(SystemsRunOptions).significance:
            sig_text, rows = significance(opts, results)
            text += sig_text
            if rows:
                extra["significance"] = rows
        return Outcome(plan, 0, text, ScoredRuns(results, scores, config_of(opts, gold, st.runs, plan.identity or {}),
                                                 extra))

    def write(self, outcome: Outcome) -> None:
        out = outcome.plan.state.out
        if out is not None:
            from memini_bench.results.write import results_document

            data = outcome.result
            write_results(out, results_document(data.config, data.scores, **data.extra))


def depth_asked(opts: RunOptions) -> int:
    """The deepest cut-off the scoring reads: the largest -k, or a -metrics cut-off beyond it."""
    return max([*opts.k, *(m.k for m in opts.output.metric_list() if m.k is not None)])


def _announce(run: Rankings, scored: Scored, gold: Gold, depth: int) -> None:
    """The notes on stderr of one run joined with its gold: what it does not rank, what it ranks beyond the gold,
    a ranking shallower than the cut-offs asked for."""
    result = scored.result
    if depth > result.depth:
        log(f"  note: {run.path}: ranks at most {result.depth} items per question, fewer than the cut-off {depth} "
            "(scored as trec_eval scores it: the ranking as it is)")
    if scored.missing:
        log(f"  note: {run.path}: ranks no item for {scored.missing} of the {len(gold.questions)} questions (scored "
            "as misses, as trec_eval -c scores them)")
    if scored.ignored:
        log(f"  note: {run.path}: ranks {len(scored.ignored)} questions the qrels do not hold (e.g. "
            f"{scored.ignored[0]!r}); left out, as trec_eval and ir_measures leave them out")


def gold_of(opts: RunOptions, runs: list[Rankings]) -> Gold:
    """The questions and gold to score against: the qrels' (grades kept), or the suite loader's (its notes on
    stderr)."""
    o = opts.mode(ScoreOptions)
    if o.qrels:
        return questions_from_qrels(Path(o.qrels).stem, read_judgements(o.qrels))
    from memini_bench.loaders import load
    from memini_bench.loaders.known_bad import for_suite, status
    from memini_bench.loaders.protocols import caption, depth_notes

    ds = load(opts.suite, opts.data, opts.load)
    log(f'dataset "{ds.name}": {len(ds.items)} items, {len(ds.questions)} questions')
    for note in (*ds.notes, *depth_notes(ds, opts.k)):
        log(f"  note: {note}")
    listed = for_suite(opts.suite)
    return questions_from_dataset(ds, skipped=listed.ids if listed is not None else (),
                                  caption=caption(ds, opts.suite, opts.load, status(ds, opts.suite)))


def labels(runs: list[Rankings]) -> list[str]:
    """Each run's row label: its system name, or its file's name where two runs share a system name."""
    names = Counter(r.system for r in runs)
    out = [r.system if names[r.system] == 1 else Path(r.path).name for r in runs]
    if len(set(out)) != len(out):
        raise BenchError("-run: two runs have the same system name and file name; rename one file")
    return out


#: The units of the metrics a run made elsewhere cannot have: its recall latency (never), and, without the data
#: set's contents (qrels), the tokens it would inject.
UNMEASURED = {True: frozenset({"ms"}), False: frozenset({"ms", "tokens", "ratio"})}


def unmeasured(gold_has_contents: bool) -> frozenset[str]:
    """The units of the metrics a scoring cannot measure (``UNMEASURED``)."""
    return UNMEASURED[gold_has_contents]


def measured(s: Score, units: frozenset[str]) -> Score:
    """``s`` without the metrics of ``units`` (``unmeasured``): absent, so every table and export shows ``-``
    and never marks them best, rather than a 0 that would look like the fastest or the cheapest."""
    return dataclasses.replace(s, scores={n: v for n, v in s.scores.items() if parse_metric(n, s.k).unit not in units})


def _columns(k: int, tokens: bool) -> list[Metric]:
    return [RecallAnyAtK(k=k), RecallAllAtK(k=k), MRR(), NDCG(k=k), *([TokensInjected(k=k)] if tokens else [])]


def _table(rows: list[Score], gold: Gold, k: int, ks: tuple[int, ...], leaks: bool) -> Table:
    """One K's table: a row per run (recall_any@K descending), each column a registered metric by its name."""
    metrics = _columns(k, gold.content_of is not None)
    cols = [Column("run", "run", "left"), *(Column(m.name, m.name, better="higher" if m.higher_is_better else "")
                                            for m in metrics)]
    cols += [Column("leaked", "leaked")] if leaks else []
    body = tuple((Cell(s.system, s.system), *(Cell(s.scores.get(m.name), format_metric(m, s.scores.get(m.name)))
                                              for m in metrics),
                  *([Cell(s.leaked, str(s.leaked))] if leaks else [])) for s in rows)
    title = f"## {gold.dataset} — {rows[0].questions} questions, recall_any@{k}"
    note = (f"N = {rows[0].questions} questions per run; mrr is MRR@{max(ks)}, at the largest K (docs/metrics.md). "
            "No marks here: the paired tests (-significance) follow in their own table.")
    return Table(tuple(cols), body, title=f"{title}\n\n{gold.caption}." if gold.caption else title, notes=(note,),
                 notes_in_markdown=True)


def markdown(scores: list[Score], gold: Gold, ks: tuple[int, ...], asked: tuple[Metric, ...] = (),
             categories: list[str] | None = None) -> str:
    """Per K: recall_any, recall_all, mrr and ndcg (and the injected tokens with a data set, the leaked hits
    when any), rows by recall_any@K descending, or with ``-metrics`` one table of those metrics; then the
    per-category table at the largest K of each run of ``categories`` (default the hybrid, else the first run)."""
    ks = tuple(sorted(ks))
    leaks = any(s.leaked for s in scores)
    if asked:
        tables = [metrics_table(scores, gold.dataset, asked)]
        if gold.caption:
            tables = [dataclasses.replace(t, title=f"{t.title}\n\n{gold.caption}.") for t in tables]
    else:
        tables = [_table(sorted((s for s in scores if s.k == k), key=lambda s: -s.scores[RecallAnyAtK(k=k).name]),
                         gold, k, ks, leaks) for k in ks]
    names = list(dict.fromkeys(s.system for s in scores))
    for lead in categories or [HYBRID if HYBRID in names else names[0]]:
        top = [s for s in scores if s.system == lead and s.k == ks[-1] and s.categories]
        tables += [category_table(lead, top[0], ks[-1], gold.category_labels or {})] if top else []
    return "".join(render(t, "md") + "\n" for t in tables)


def truncated(result: RunResult, depth: int) -> RunResult:
    """``result`` with every ranking cut at ``depth`` (the depth rule: a run's rankings are its largest K deep)."""
    return dataclasses.replace(result, depth=min(result.depth, depth), questions=tuple(
        dataclasses.replace(q, ranked_ids=q.ranked_ids[:depth], tokens=q.tokens[:depth]) for q in result.questions))


def significance(opts: RunOptions, results: list[RunResult]) -> tuple[str, list[dict]]:
    """Every pair of runs, paired on the same questions, each ranking cut at the largest K (``truncated``): the
    markdown (after a blank line) and the rows."""
    from memini_bench.evaluation.significance import compare_pairs
    from memini_bench.evaluation.significance import markdown as sig_markdown

    c, o = opts.mode(SystemsRunOptions), opts.mode(ScoreOptions)
    depth = min(r.depth for r in results)
    ks = [k for k in opts.k if k <= depth]
    if len(ks) < len(opts.k):
        log(f"  note: the paired tests use K <= {depth}, the shortest ranking depth of the runs")
    if not ks:
        return "", []
    cut = [truncated(r, max(opts.k)) for r in results]
    sig = compare_pairs(list(itertools.combinations(cut, 2)), ks, resamples=c.resamples, seed=c.seed, alpha=o.alpha)
    return "\n" + sig_markdown(sig, "Every pair of runs, paired on the same questions"), \
        [dataclasses.asdict(r) for r in sig.rows]


def identity(opts: RunOptions, gold: Gold, runs: list[Rankings]) -> dict:
    """What changes the numbers of a scoring: the run files' and the gold's sha256, the suite and its loader
    settings, the K list, the metrics asked for, the leak rule, the tests' settings."""
    from memini_bench.results.provenance import input_sha256

    o, c = opts.mode(ScoreOptions), opts.mode(SystemsRunOptions)
    ident = {"mode": "score", "runs": [input_sha256(r.path) or r.path for r in runs],
             "gold": input_sha256(o.qrels) if o.qrels else gold.data_sha256, "suite": opts.suite if gold.source
             else "", "ks": list(opts.k), "leaks": opts.guard.leaks, "exclude": opts.load.exclude,
             **({"metrics": [m.name for m in opts.output.metric_list()]} if opts.output.metrics else {}),
             **({"resamples": c.resamples, "seed": c.seed, "alpha": o.alpha} if c.significance else {})}
    ident.update({n: getattr(opts.load, n) for n in ("abstention", "granularity", "unit")
                  if getattr(opts.load, n) != getattr(LoadOptions(), n)})
    return ident


def config_of(opts: RunOptions, gold: Gold, runs: list[Rankings], ident: dict) -> dict:
    """What the results file records beside the scores."""
    from memini_bench.loaders.protocols import protocol_of
    from memini_bench.results.provenance import harness, input_sha256

    o = opts.mode(ScoreOptions)
    files = [{"path": r.path, "sha256": input_sha256(r.path) or "", "system": r.system, "form": r.form}
             for r in runs]
    suite = opts.suite if gold.source is not None else ""
    return {"mode": "score", "dataset": gold.dataset, "suite": suite, "data": opts.data if suite else "",
            "qrels": o.qrels, "data_sha256": gold.data_sha256, "runs": files, "ks": list(opts.k),
            "questions": len(gold.questions), "leaks": opts.guard.leaks, "exclude": opts.load.exclude,
            "caption": gold.caption, "protocol": protocol_of(suite, opts.load) if suite else "", "latency": None,
            "identity": ident, **harness()}
