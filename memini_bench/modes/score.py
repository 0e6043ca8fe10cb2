"""``memini-bench score``: score rankings made elsewhere with the arithmetic of a run ("no grading your own
homework"): the same metrics (``evaluation.metrics``), K list, per-category tables and paired tests
(``evaluation.significance``: exact McNemar on recall_any@K, paired bootstrap on MRR and nDCG@K, Holm over the
family, every pair of runs), without running any system.

Two forms (``results.rankings`` reads the files, ``evaluation.external`` joins them with the gold):

- ``score -qrels Q -run R1 -run R2``: TREC run files against TREC qrels (``-trec`` writes both);
- ``score -suite S -data F -run R.jsonl``: JSONL ``{question_id, ranked_ids}`` rankings (or TREC runs) against a
  suite's data file, the gold from the suite's loader; the ranked ids are checked against the data set (the
  ``-leaks`` rule), the file's ``data_sha256`` (when it records one) against ``-data``, and the suite's list of
  known bad gold is reported (``-exclude known-bad`` leaves those questions out).

Several ``-run`` files are compared pairwise. With ``-out DIR`` the scores and tests are written to
``DIR/score-<dataset>.json`` (its hashed name when that file holds another scoring: ``results.identity.claim``).
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import click

from memini_bench.core.settings import CommaList, Int, Real, setting
from memini_bench.core.settings import command as settings_command
from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_pct, render
from memini_bench.errors import BenchError
from memini_bench.evaluation.external import Gold, as_result, questions_from_dataset, questions_from_qrels
from memini_bench.loaders import LoadOptions
from memini_bench.loaders.known_bad import EXCLUDES
from memini_bench.loaders.locomo_units import UNITS
from memini_bench.loaders.longmemeval import ABSTENTION_MODES
from memini_bench.loaders.longmemeval_turns import GRANULARITIES
from memini_bench.results.rankings import Rankings, read_qrels, read_rankings
from memini_bench.results.schema import Score
from memini_bench.results.write import category_table


@dataclass(frozen=True)
class ScoreOptions:
    run: tuple[str, ...] = setting("run", (), "A run file to score: TREC (qid Q0 docid rank score tag) or JSONL "
                                   "({question_id, ranked_ids}); repeat for several (compared pairwise).",
                                   multiple=True)
    qrels: str = setting("qrels", "", "TREC qrels with the gold (qid iter docid rel; rel > 0 is gold).")
    suite: str = setting("suite", "", "Instead of -qrels: the suite whose loader reads the gold from -data.")
    data: str = setting("data", "", "The data file of -suite (the one the rankings were made from).")
    k: tuple[int, ...] = setting("k", (5,), "Comma-separated K list.", type=CommaList(Int(min=1, max=1000), sort=True))
    leaks: str = setting("leaks", "error", "With -suite: a ranked id of another group than the question's is an "
                         "error, or count (dropped before scoring and counted).", type=click.Choice(["error", "count"]))
    exclude: str = setting("exclude", "", "With -suite: known-bad leaves out the questions on the data set's list of "
                           "known bad gold (reported either way).", type=click.Choice(EXCLUDES))
    resamples: int = setting("resamples", 10_000, "Bootstrap resamples of the paired tests.",
                             type=Int(min=100, max=1_000_000))
    seed: int = setting("seed", 0, "Bootstrap seed of the paired tests.", type=Int(min=0))
    alpha: float = setting("alpha", 0.05, "Significance level (after Holm).", type=Real(min=0, max=1, min_open=True))
    out: str = setting("out", "", "Also write the scores and tests to <out>/score-<dataset>.json.")
    abstention: str = setting("abstention", "exclude", "With -suite longmemeval: the _abs questions excluded "
                              "(protocol answerable-470) or included (all-500).", type=click.Choice(ABSTENTION_MODES))
    granularity: str = setting("granularity", "session", "With -suite longmemeval: session, or turn (protocol "
                               "official: gold the has_answer turns, session scores from the turn ranking).",
                               type=click.Choice(GRANULARITIES))
    unit: str = setting("unit", "turn", "With -suite locomo: turn, observation or summary.", type=click.Choice(UNITS))

    def __post_init__(self) -> None:
        object.__setattr__(self, "run", tuple(self.run or ()))
        if not self.run:
            raise BenchError("score: give at least one -run FILE (a TREC run or a JSONL of rankings)")
        if bool(self.qrels) == bool(self.suite):
            raise BenchError("score: give the gold once: -qrels FILE (TREC qrels) or -suite NAME -data FILE")
        if self.data and not self.suite:
            raise BenchError("-data: names the data file of -suite; add -suite NAME (or drop -data with -qrels)")
        if self.qrels and (self.leaks != "error" or self.exclude):
            flag = "-leaks" if self.leaks != "error" else "-exclude"
            raise BenchError(f"{flag}: needs the data set (-suite NAME -data FILE); qrels list only gold ids")
        if self.exclude and self.suite:
            from memini_bench.loaders.known_bad import for_suite

            if for_suite(self.suite) is None:
                raise BenchError(f"-exclude {self.exclude}: -suite {self.suite} has no list of known bad gold; drop it")
        for name in ("abstention", "granularity", "unit"):
            if getattr(self, name) != getattr(LoadOptions(), name):
                from memini_bench.loaders import suite

                if self.qrels or name not in suite(self.suite).uses:
                    raise BenchError(f"-{name}: not used by {'-qrels' if self.qrels else f'-suite {self.suite}'}; "
                                     "drop it")
        if len(set(self.run)) != len(self.run):
            raise BenchError("-run: the same file is given twice; give each run once")


def gold_of(o: ScoreOptions, runs: list[Rankings]) -> Gold:
    """The questions and gold to score against: the qrels', or the suite loader's (its notes on stderr)."""
    if o.qrels:
        return questions_from_qrels(Path(o.qrels).stem, read_qrels(o.qrels), runs)
    from memini_bench.loaders import load
    from memini_bench.loaders.known_bad import for_suite, status
    from memini_bench.loaders.protocols import caption, depth_notes

    options = LoadOptions(exclude=o.exclude, abstention=o.abstention, granularity=o.granularity, unit=o.unit)
    ds = load(o.suite, o.data, options)
    _log(f'dataset "{ds.name}": {len(ds.items)} items, {len(ds.questions)} questions')
    for note in (*ds.notes, *depth_notes(ds, o.k)):
        _log(f"  note: {note}")
    listed = for_suite(o.suite)
    return questions_from_dataset(ds, skipped=listed.ids if listed is not None else (),
                                  caption=caption(ds, o.suite, options, status(ds, o.suite)))


def labels(runs: list[Rankings]) -> list[str]:
    """Each run's row label: its system name, or its file's name where two runs share a system name."""
    names = Counter(r.system for r in runs)
    out = [r.system if names[r.system] == 1 else Path(r.path).name for r in runs]
    if len(set(out)) != len(out):
        raise BenchError("-run: two runs have the same system name and file name; rename one file")
    return out


def _table(rows: list[Score], gold: Gold, k: int, tokens: bool, leaks: bool) -> Table:
    """One K's table: a row per run (recall_any@K descending), N and the marks in its footnote."""
    cols = [Column("run", "Run", "left"), Column("recall_any", f"Recall@{k}", better="higher"),
            Column("recall_all", f"RecallAll@{k}", better="higher"), Column("mrr", "MRR", better="higher"),
            Column("ndcg", f"nDCG@{k}", better="higher")]
    cols += [Column("tokens_injected", "inj tok")] if tokens else []
    cols += [Column("leaked", "leaked")] if leaks else []
    body = tuple((Cell(s.system, s.system), *(Cell(v, fmt_pct(v)) for v in (s["recall_any@{k}"], s["recall_all@{k}"],
                                                                             s["mrr"], s["ndcg@{k}"])),
                  *([Cell(s["tokens_injected@{k}"], fmt_num(s["tokens_injected@{k}"], 0))] if tokens else []),
                  *([Cell(s.leaked, str(s.leaked))] if leaks else [])) for s in rows)
    title = f"## {gold.dataset} — {rows[0].questions} questions, recall_any@{k}"
    note = (f"N = {rows[0].questions} questions per run. No marks here: the paired tests between the runs, when "
            "there are several, follow in their own table.")
    return Table(tuple(cols), body, title=f"{title}\n\n{gold.caption}." if gold.caption else title, notes=(note,),
                 notes_in_markdown=True)


def markdown(scores: list[Score], gold: Gold) -> str:
    """Per K: recall_any, recall_all, MRR and nDCG (and the injected tokens with a data set, the leaked hits
    when any), rows by recall_any@K descending; then each run's per-category table at the largest K."""
    ks = sorted({s.k for s in scores})
    leaks, tokens = any(s.leaked for s in scores), gold.content_of is not None
    tables = [_table(sorted((s for s in scores if s.k == k), key=lambda s: -s["recall_any@{k}"]), gold, k, tokens,
                     leaks) for k in ks]
    tables += [category_table(s.system, s, ks[-1], gold.category_labels or {})
               for s in scores if s.k == ks[-1] and s.category("recall_any@{k}")]
    return "".join(render(t, "md") + "\n" for t in tables)


@settings_command(ScoreOptions, name="score")
def command(o: ScoreOptions) -> int:
    """Score rankings made elsewhere (TREC runs with qrels, or JSONL rankings with -suite and -data) with a run's
    metrics, K list, per-category tables and paired tests (see docs/scoring.md)."""
    from memini_bench.evaluation.metrics import score_all

    if o.out:
        from memini_bench.results.write import check_destinations

        check_destinations(folders=[("-out", o.out)])
    runs = [read_rankings(p) for p in o.run]
    gold = gold_of(o, runs)
    results = []
    for run, label in zip(runs, labels(runs), strict=True):
        result, missing = as_result(run, gold, system=label, leaks=o.leaks)
        if o.k[-1] > result.depth:
            _log(f"  note: {run.path}: ranks at most {result.depth} items per question, fewer than K={o.k[-1]}")
        if missing:
            _log(f"  note: {run.path}: ranks no item for {missing} of the {len(gold.questions)} questions (scored "
                 "as misses)")
        results.append(result)
    scores = score_all(results, o.k)
    sys.stdout.write(markdown(scores, gold))
    own, blocks = ("", {})
    if gold.source is not None:
        from memini_bench.evaluation.breakdowns import breakdowns

        own, blocks = breakdowns(gold.source, results, o.k)  # the data set's own tables, as a run prints them
    sys.stdout.write(own)
    tests = _significance(o, results)
    sys.stdout.flush()
    if o.out:
        _write(o, gold, runs, scores, {**blocks, **({"significance": tests} if tests else {})})
    return 0


def _significance(o: ScoreOptions, results: list) -> list[dict]:
    """Every pair of runs, paired on the same questions (printed); [] for one run."""
    import dataclasses

    from memini_bench.evaluation.significance import compare_pairs
    from memini_bench.evaluation.significance import markdown as sig_markdown

    if len(results) < 2:
        return []
    depth = min(r.depth for r in results)
    ks = [k for k in o.k if k <= depth]
    if len(ks) < len(o.k):
        _log(f"  note: the paired tests use K <= {depth}, the shortest ranking depth of the runs")
    if not ks:
        return []
    sig = compare_pairs(list(itertools.combinations(results, 2)), ks, resamples=o.resamples, seed=o.seed,
                        alpha=o.alpha)
    sys.stdout.write("\n" + sig_markdown(sig, "Every pair of runs, paired on the same questions"))
    return [dataclasses.asdict(r) for r in sig.rows]


def _write(o: ScoreOptions, gold: Gold, runs: list[Rankings], scores: list[Score], extra: dict) -> None:
    from memini_bench.loaders.protocols import protocol_of
    from memini_bench.modes.common import write_results
    from memini_bench.results.identity import claim, safe_name
    from memini_bench.results.provenance import harness, input_sha256
    from memini_bench.results.write import results_document

    files = [{"path": r.path, "sha256": input_sha256(r.path) or "", "system": r.system, "form": r.form}
             for r in runs]
    ident = {"mode": "score", "runs": [f["sha256"] or f["path"] for f in files],
             "gold": input_sha256(o.qrels) if o.qrels else gold.data_sha256, "suite": o.suite, "ks": list(o.k),
             "leaks": o.leaks, "exclude": o.exclude, "resamples": o.resamples, "seed": o.seed, "alpha": o.alpha,
             **{n: getattr(o, n) for n in ("abstention", "granularity", "unit")
                if getattr(o, n) != getattr(LoadOptions(), n)}}
    out = claim(Path(o.out) / f"score-{safe_name(gold.dataset)}.json", ident)
    config = {"mode": "score", "dataset": gold.dataset, "suite": o.suite, "data": o.data, "qrels": o.qrels,
              "data_sha256": gold.data_sha256, "runs": files, "ks": list(o.k), "questions": len(gold.questions),
              "leaks": o.leaks, "exclude": o.exclude, "caption": gold.caption,
              "protocol": protocol_of(o.suite, o) if o.suite else "", "identity": ident, **harness()}
    write_results(out, results_document(config, scores, **extra))


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
