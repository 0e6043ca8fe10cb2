"""Paired significance between systems on the same questions: the systems of one run, or two per-question files.

For every pair (A, B), each metric of the run's list that has a per-question value (``core.metrics.paired_metrics``:
recall_any@K per K, mrr, ndcg@K per K, then what ``-metrics`` asked for), named by its registered name: a 0/1
metric (recall_any@K, recall_all@K) by exact McNemar, any other by the paired bootstrap; mrr (taken at the largest
K) once per pair. Every row also carries the bootstrap 95% interval on
``mean(A) - mean(B)``. Holm's correction runs over the whole family of rows made in one call (every pair, metric
and K), and a row is significant when its Holm-adjusted p is below alpha (formulas in
``memini_bench.evaluation.stats``).

Per-question values are the metric objects' own (``Metric.per_question``) over ``runner.RunResult`` objects: a
live run's, or those ``per_question.read_per_question`` rebuilds from a file.
Questions are aligned by id, in A's order; the two sides must hold the same question ids with the same gold.
When the two sides were recalled at different depths (two files from runs with different -k), both rankings are
cut to the smaller depth first, so both sides are read to the same depth.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.metrics import Metric, paired_metrics
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.core.table import Cell, Column, Table, fmt_interval, fmt_pct, fmt_points
from memini_bench.core.table import render as render_table
from memini_bench.errors import BenchError
from memini_bench.evaluation.stats import ALPHA, RESAMPLES, SEED, PairedComparison, adjust, compare
from memini_bench.results.per_question import read_per_question
from memini_bench.results.write import HYBRID


@dataclass(frozen=True, slots=True)
class Significance:
    """One family of paired comparisons (Holm-adjusted together) and how it was computed."""

    rows: tuple[PairedComparison, ...]
    ks: tuple[int, ...]
    resamples: int
    seed: int
    alpha: float

    @property
    def questions(self) -> int:
        return self.rows[0].questions if self.rows else 0


def compare_pairs(pairs: Sequence[tuple[RunResult, RunResult]], ks: Sequence[int], *,
                  metrics: Sequence[Metric] = (), resamples: int = RESAMPLES, seed: int = SEED,
                  alpha: float = ALPHA) -> Significance:
    """Every (A, B) pair on each metric of ``paired_metrics(ks, metrics)`` (McNemar for a 0/1 metric, else the
    bootstrap), Holm over all.

    Raises a BenchError when a pair's question sets or gold differ, or a K exceeds a side's recalled depth."""
    ks = tuple(sorted(set(ks)))
    if not ks or ks[0] < 1:
        raise BenchError(f"-k {','.join(map(str, ks))}: cut-offs must be positive integers")
    rows: list[PairedComparison] = []
    for a, b in pairs:
        for result in (a, b):
            if ks[-1] > result.depth:
                raise BenchError(f"-k {ks[-1]}: {result.system} ranks at most {result.depth} hits per question; "
                                 f"choose K <= {result.depth}")
        runs_a, runs_b = align(a, b)
        if a.depth != b.depth:
            depth = min(a.depth, b.depth)
            runs_a, runs_b = _cut(runs_a, depth), _cut(runs_b, depth)

        for m in paired_metrics(ks, metrics):
            rows.append(compare(a.system, b.system, m.name, [m.per_question(r) for r in runs_a],
                                [m.per_question(r) for r in runs_b], binary=m.paired == "mcnemar",
                                resamples=resamples, seed=seed, alpha=alpha))
    return Significance(rows=tuple(adjust(rows)), ks=ks, resamples=resamples, seed=seed, alpha=alpha)


def compare_run(results: Sequence[RunResult], ks: Sequence[int], *, reference: str = HYBRID,
                metrics: Sequence[Metric] = (), resamples: int = RESAMPLES, seed: int = SEED,
                alpha: float = ALPHA) -> Significance:
    """The systems of one ordinary run: ``reference`` (the hybrid by default) against each other system."""
    by_name = {r.system: r for r in results}
    if reference not in by_name:
        raise BenchError(f"significance: no system {reference!r} in the run (it has {', '.join(by_name) or 'none'});"
                         " name one of those as the reference")
    if len(by_name) < 2:
        raise BenchError(f"significance: the run has only {reference}; run at least two systems to compare them")
    ref = by_name[reference]
    return compare_pairs([(ref, r) for name, r in by_name.items() if name != reference], ks, metrics=metrics,
                         resamples=resamples, seed=seed, alpha=alpha)


def compare_file_systems(path: str | Path, ks: Sequence[int], *, reference: str = HYBRID,
                         resamples: int = RESAMPLES, seed: int = SEED, alpha: float = ALPHA) -> Significance:
    """:func:`compare_run` over the systems of one per-question file."""
    return compare_run(read_per_question(path), ks, reference=reference, resamples=resamples, seed=seed,
                       alpha=alpha)


def compare_files(path_a: str | Path, path_b: str | Path, ks: Sequence[int], *, systems: Sequence[str] = (),
                  resamples: int = RESAMPLES, seed: int = SEED, alpha: float = ALPHA) -> Significance:
    """Two per-question files, system by system: each named system (default: every system in both files, or the
    two files' only systems when each holds one) of file A against the same system of file B. Systems are
    labelled ``<file>:<system>`` (the file's name, or its whole path when both names are equal)."""
    runs_a, runs_b = read_per_question(path_a), read_per_question(path_b)
    label_a, label_b = _labels(Path(path_a), Path(path_b))
    named_a, named_b = {r.system: r for r in runs_a}, {r.system: r for r in runs_b}
    if systems:
        missing = [(path, s) for s in systems for path, named in ((path_a, named_a), (path_b, named_b))
                   if s not in named]
        if missing:
            path, system = missing[0]
            names = ", ".join(named_a if path == path_a else named_b)
            raise BenchError(f"{path}: no system {system!r} (it has {names}); name systems both files hold")
        pairs = [(named_a[s], named_b[s]) for s in systems]
    elif common := [s for s in named_a if s in named_b]:
        pairs = [(named_a[s], named_b[s]) for s in common]
    elif len(runs_a) == 1 and len(runs_b) == 1:
        pairs = [(runs_a[0], runs_b[0])]
    else:
        raise BenchError(f"{path_a} and {path_b}: no system in common ({', '.join(named_a)} vs "
                         f"{', '.join(named_b)}); name the systems to compare")
    labelled = [(_relabel(a, f"{label_a}:{a.system}"), _relabel(b, f"{label_b}:{b.system}")) for a, b in pairs]
    return compare_pairs(labelled, ks, resamples=resamples, seed=seed, alpha=alpha)


def align(a: RunResult, b: RunResult) -> tuple[list[QuestionRun], list[QuestionRun]]:
    """The two runs' questions paired by id, in ``a``'s order; a BenchError when the id sets or a gold differ."""
    by_id_a = {r.question.id: r for r in a.questions}
    by_id_b = {r.question.id: r for r in b.questions}
    only_a = [q for q in by_id_a if q not in by_id_b]
    only_b = [q for q in by_id_b if q not in by_id_a]
    if only_a or only_b:
        example = (only_a or only_b)[0]
        raise BenchError(f"{a.system} has {len(by_id_a)} questions and {b.system} {len(by_id_b)}: {len(only_a)} "
                         f"only in the first, {len(only_b)} only in the second (e.g. {example!r}); compare runs over "
                         "the same questions (same -suite, -data, -holdout, -limit)")
    for qid, run in by_id_a.items():
        if set(run.question.gold) != set(by_id_b[qid].question.gold):
            raise BenchError(f"question {qid!r}: gold differs between {a.system} and {b.system}; the runs come "
                             "from different data sets")
    return list(by_id_a.values()), [by_id_b[qid] for qid in by_id_a]


def markdown(result: Significance, title: str = "Paired significance") -> str:
    """A table of every comparison: means, the difference with its 95% interval, the test, the discordant (or
    win/loss) counts, raw and Holm-adjusted p; significant rows are marked (bold difference, ``yes``)."""
    if not result.rows:
        return ""
    head = (f"## {title} — {result.questions} questions\n\n"
            f"Exact McNemar on recall_any@K, paired bootstrap on mrr and ndcg@K ({result.resamples:,} resamples, "
            f"seed {result.seed}); 95% intervals on A − B; Holm over {len(result.rows)} comparisons, alpha "
            f"{result.alpha:g}. b / c: the questions only A (resp. only B) gets right, or scores higher on. A "
            f"bootstrap p has a floor of 2 / (resamples + 1) (shown as ≤).\n\n")
    return head + render_table(table(result), "md")


def table(result: Significance) -> Table:
    """Every comparison as one table (``core.table``): the difference bold where significant after Holm."""
    cols = tuple(Column(key, header, align) for key, header, align in (
        ("a", "A", "left"), ("b", "B", "left"), ("metric", "Metric", "left"), ("mean_a", "A", "right"),
        ("mean_b", "B", "right"), ("delta", "A − B (pp)", "right"), ("ci", "95% CI (pp)", "left"),
        ("test", "Test", "left"), ("bc", "b / c", "right"), ("p", "p", "right"), ("p_holm", "p (Holm)", "right"),
        ("significant", "Significant", "center")))
    cols = tuple(Column(c.key, c.header, c.align, rule=":-:" if c.align == "center" else "") for c in cols)
    floor = 2 / (result.resamples + 1)
    rows = []
    for c in result.rows:
        p = _p(c.p, bound=c.test == "bootstrap" and c.p <= floor * (1 + 1e-9))
        rows.append((Cell(c.system_a, c.system_a), Cell(c.system_b, c.system_b), Cell(c.metric, c.metric),
                     Cell(c.mean_a, fmt_pct(c.mean_a)), Cell(c.mean_b, fmt_pct(c.mean_b)),
                     Cell(c.delta, fmt_points(c.delta, signed=True), strong=c.significant),
                     Cell((c.ci_low, c.ci_high), fmt_interval(c.ci_low, c.ci_high)),
                     Cell(c.test, "McNemar" if c.test == "mcnemar" else "bootstrap"),
                     Cell((c.only_a, c.only_b), f"{c.only_a} / {c.only_b}"), Cell(c.p, p),
                     Cell(c.p_adjusted, _p(c.p_adjusted)), Cell(c.significant, "yes" if c.significant else "no")))
    return Table(cols, tuple(rows), notes=(f"N = {result.questions} questions, paired; bold difference: significant "
                                           f"after Holm at alpha {result.alpha:g}",))


def _p(p: float, bound: bool = False) -> str:
    text = f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"
    return f"≤ {text}" if bound else text


def _labels(a: Path, b: Path) -> tuple[str, str]:
    return (a.name, b.name) if a.name != b.name else (str(a), str(b))


def _cut(runs: Sequence[QuestionRun], depth: int) -> list[QuestionRun]:
    return [dataclasses.replace(r, ranked_ids=r.ranked_ids[:depth], scores=r.scores[:depth], tokens=r.tokens[:depth])
            for r in runs]


def _relabel(result: RunResult, system: str) -> RunResult:
    return dataclasses.replace(result, system=system)
