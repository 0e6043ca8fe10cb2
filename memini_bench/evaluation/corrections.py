"""The correction suite's scores (``-suite corrections``; docs/temporal.md): per question kind, per system, with a
95% bootstrap interval, and each system paired against the reference on the same questions.

For one question, G = its ``gold`` ids and S = its ``stale`` ids (``loaders.corrections``), h_0, h_1, ... the
ranked hits, K the cut-off:

- ``current`` questions: ``recall_any@K`` (``core.metrics``, registered) over G = the writes of the current value,
  and ``stale_above@K`` = 1 when some hit in the top K meets S and no hit before it meets G (the stale value
  outranks the current one, or comes back without it), over the questions with S non-empty (the value changed);
- ``forgotten`` questions (recalled at the group's whole size, so "any K"): ``resurrection`` = 1 when any hit meets
  G = the forgotten writes. A system without ``forget`` is scored the same way (its forgets are not honoured, and
  are counted beside);
- ``as-of`` questions (``recall(..., now=at)``): ``recall_any@K`` over G = the writes of the value valid at ``at``,
  and ``stale_above@K`` over S = the writes of other values.

Lower is better for ``stale_above`` and ``resurrection``. Intervals: ``stats.bootstrap_mean`` (percentile, the
run's -resamples and -seed); paired tests: exact McNemar on each binary score against the reference system, Holm
across the whole family (``stats.compare``, ``stats.adjust``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from memini_bench.core.metrics import Metric
from memini_bench.core.metrics import parse as parse_metric
from memini_bench.core.runs import QuestionRun
from memini_bench.core.table import Cell, Column, Table, fmt_interval, fmt_num, fmt_pct
from memini_bench.core.table import markdown as table_markdown
from memini_bench.evaluation.stats import PairedComparison, adjust, bootstrap_mean, compare
from memini_bench.evaluation.timeline import Replayed
from memini_bench.loaders.corrections import meta_of


def _stale(run: QuestionRun) -> set[str]:
    return set(meta_of(run.question.meta, "stale", ()))  # type: ignore[arg-type]


@dataclass(frozen=True)
class StaleAbove(Metric):
    """stale_above@K: the stale value outranks the current (or valid) one in the top K."""

    family: ClassVar[str] = "stale_above"
    formula: ClassVar[str] = ("1 if some hit in the top K meets S (the stale ids) and no hit before it meets G; mean "
                              "over the questions with S non-empty")
    citation: ClassVar[str] = "memini-bench docs/temporal.md"
    higher_is_better: ClassVar[bool] = False
    params: ClassVar[tuple[str, ...]] = ()

    def per_question(self, run: QuestionRun) -> float:
        gold, stale = set(run.question.gold), _stale(run)
        for ids in self.top(run):
            if gold.intersection(ids):
                return 0.0
            if stale.intersection(ids):
                return 1.0
        return 0.0


@dataclass(frozen=True)
class Resurrection(Metric):
    """resurrection: a forgotten memory comes back, at any depth."""

    family: ClassVar[str] = "resurrection"
    formula: ClassVar[str] = "1 if any hit of the whole recalled list meets G (the forgotten ids), else 0; mean"
    citation: ClassVar[str] = "memini-bench docs/temporal.md"
    higher_is_better: ClassVar[bool] = False
    cutoff: ClassVar[str] = "none"
    params: ClassVar[tuple[str, ...]] = ()

    def per_question(self, run: QuestionRun) -> float:
        gold = set(run.question.gold)
        return 1.0 if any(gold.intersection(ids) for ids in run.ranked_ids) else 0.0


@dataclass(frozen=True)
class Score:
    """One system's value of one score on one kind: the mean, its interval, N, and the per-question values."""

    kind: str
    metric: str
    mean: float
    low: float
    high: float
    values: tuple[float, ...]
    ids: tuple[str, ...]


def _scores_of(runs: Sequence[QuestionRun], kind: str, metric: Metric, only_stale: bool, resamples: int,
               seed: int) -> Score | None:
    chosen = [r for r in runs if r.question.category == kind and (not only_stale or _stale(r))]
    if not chosen:
        return None
    values = tuple(metric.per_question(r) for r in chosen)
    interval = bootstrap_mean(values, resamples=resamples, seed=seed)
    return Score(kind, metric.name, interval.delta, interval.low, interval.high, values,
                 tuple(r.question.id for r in chosen))


def scores(replayed: Replayed, k: int, resamples: int, seed: int) -> list[Score]:
    """The system's scores at K (module docstring), kind by kind, those with no question left out."""
    plan = (("current", parse_metric(f"recall_any@{k}"), False), ("current", StaleAbove(k=k), True),
            ("forgotten", Resurrection(), False),
            ("as-of", parse_metric(f"recall_any@{k}"), False), ("as-of", StaleAbove(k=k), True))
    out = [_scores_of(replayed.runs, kind, m, only, resamples, seed) for kind, m, only in plan]
    return [s for s in out if s is not None]


#: (kind, metric family, header, better) of each score, the header the kind and the metric's registered name (as
#: the paired tests' rows name them); the CLI's table, the report's board and the docs' table read this one list.
COLUMNS = (("current", "recall_any", "current recall_any@{k}", "higher"),
           ("current", "stale_above", "current stale_above@{k}", "lower"),
           ("forgotten", "resurrection", "forgotten resurrection", "lower"),
           ("as-of", "recall_any", "as-of recall_any@{k}", "higher"),
           ("as-of", "stale_above", "as-of stale_above@{k}", "lower"))


def as_dict(s: Score) -> dict:
    """A score as a results file records it (the per-question values stay in -per-question)."""
    return {"kind": s.kind, "metric": s.metric, "mean": s.mean, "ci_low": s.low, "ci_high": s.high,
            "questions": len(s.values)}


def _family(s: Score) -> str:
    return s.metric.split("@")[0]


def table(replayed: Sequence[Replayed], k: int, resamples: int, seed: int) -> tuple[Table, dict[str, list[Score]]]:
    """The per-system table at K and every system's scores."""
    by_system = {r.system: scores(r, k, resamples, seed) for r in replayed}
    columns = [Column("system", "system", "left")]
    for _, _, header, better in COLUMNS:
        columns.append(Column(header.format(k=k), header.format(k=k), better=better))
    columns += [Column("forgets", "forgets honoured"), Column("updates", "updates native"),
                Column("write_ms", "write ms/item")]
    rows = []
    counts: dict[str, int] = {}
    for r in replayed:
        found = {(s.kind, _family(s)): s for s in by_system[r.system]}
        row = [Cell(r.system, r.system)]
        for kind, family, _, _ in COLUMNS:
            s = found.get((kind, family))
            if s is None:
                row.append(Cell(None, "-"))
                continue
            counts[f"{kind} {family}"] = len(s.values)
            row.append(Cell(s.mean, f"{fmt_pct(s.mean)} [{s.low * 100:.1f}, {s.high * 100:.1f}]"))
        forgets = r.forgets_honoured + r.forgets_unhonoured
        row.append(Cell(r.forgets_honoured, f"{r.forgets_honoured}/{forgets}" if forgets else "-"))
        updates = r.updates_native + r.updates_fallback
        row.append(Cell(r.updates_native, f"{r.updates_native}/{updates}" if updates else "-"))
        row.append(Cell(r.ms_per_write, fmt_num(r.ms_per_write, 3)))
        rows.append(tuple(row))
    notes = (f"N: {', '.join(f'{key} {n}' for key, n in counts.items())}; intervals: 95% percentile bootstrap "
             f"({resamples} resamples, seed {seed}). stale above: the stale value ranks above the current one (or "
             "comes without it), over the questions whose value changed; resurrected: a forgotten write comes back "
             "at any depth; lower is better for both. forgets honoured: forget calls the system has a hook for (a "
             "system without one keeps what it was told to forget, and is scored on what it returns); updates "
             "native: corrections through the system's update (else stored beside the old value).",)
    title = f"## corrections: writes over time, K={k}"
    return Table(tuple(columns), tuple(rows), title=title, notes=notes, notes_in_markdown=True), by_system


def significance(by_system: dict[str, list[Score]], reference: str, resamples: int, seed: int) -> list[
        PairedComparison]:
    """Every system against ``reference`` on each score, paired on the same questions (exact McNemar), Holm across
    the family."""
    ref = {(s.kind, s.metric): s for s in by_system[reference]}
    family = []
    for name, own in by_system.items():
        if name == reference:
            continue
        for s in own:
            r = ref.get((s.kind, s.metric))
            if r is None or r.ids != s.ids:
                continue
            family.append(compare(reference, name, f"{s.kind} {s.metric}", r.values, s.values, binary=True,
                                  resamples=resamples, seed=seed))
    return adjust(family)


def significance_markdown(rows: Sequence[PairedComparison], reference: str) -> str:
    columns = (Column("system", "system", "left"), Column("score", "score", "left"), Column("n", "N"),
               Column("ref", reference), Column("other", "system's"), Column("delta", "delta (points)"),
               Column("p", "p (Holm)"))
    body = tuple((Cell(c.system_b, c.system_b), Cell(c.metric, c.metric), Cell(c.questions, str(c.questions)),
                  Cell(c.mean_a, fmt_pct(c.mean_a)), Cell(c.mean_b, fmt_pct(c.mean_b)),
                  Cell(c.delta, f"{c.delta * 100:+.1f} {fmt_interval(c.ci_low, c.ci_high)}"),
                  Cell(c.p_adjusted, f"{c.p_adjusted:.3g}", strong=c.significant)) for c in rows)
    t = Table(columns, body, title=f"## corrections: {reference} against each system, paired (exact McNemar, Holm)",
              notes=("bold: significant at 0.05 after Holm; delta = reference minus system, with its 95% bootstrap "
                     "interval.",), notes_in_markdown=True)
    return table_markdown(t)
