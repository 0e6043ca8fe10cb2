"""Veto recall for any System: the systems on a suite, the rank of every veto, recall@1/@5 per trap kind.

For scenario s with veto decision v, ``rank(s)`` is the 1-based position of v in the system's list
(``metrics.first_gold_rank`` + 1; None when v is not in the list the system returned, at most ``depth`` long).
Veto recall@K is ``metrics.score``'s recall_any@K with gold = {v}: |{s : rank(s) <= K}| / |S|; per trap kind its
per-category recall and question counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memini_bench.core.contract import System
from memini_bench.core.dataset import Dataset
from memini_bench.core.runs import RunResult, first_gold_rank
from memini_bench.core.table import Cell, Column, Table, fmt_num
from memini_bench.core.table import render as render_table
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.evaluation.hits import RunGuardOptions
from memini_bench.evaluation.metrics import score
from memini_bench.evaluation.runner import run_all
from memini_bench.results.schema import Score
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.lineup import build_systems, context_for
from memini_bench.vetobench.composite import DEFAULT_FILES, veto_composite_systems

VETO_KS = (1, 5)
MAX_DEPTH = 100  # memini clamps recall to 100


@dataclass(frozen=True)
class VetoScore:
    """One system on one suite: recall@K (K in VETO_KS), the rank of each veto, and both per trap kind;
    ``scores`` keeps the full ``metrics.Score`` at each K."""

    system: str
    suite: str
    scenarios: int
    depth: int
    recall: dict[int, float]
    ranks: dict[str, int | None]
    per_trap: dict[str, dict[str, float]] = field(default_factory=dict)
    scores: tuple[Score, ...] = ()

    @property
    def recall_at_5(self) -> float:
        return self.recall[5]


def veto_score(result: RunResult, ks: Sequence[int] = VETO_KS) -> VetoScore:
    """Veto recall of one run, from ``metrics.score`` at each K (per trap kind in scenario order)."""
    scores = tuple(score(result, k) for k in ks)
    ranks = {}
    for run in result.questions:
        r0 = first_gold_rank(run)
        ranks[run.question.id] = r0 + 1 if r0 >= 0 else None
    traps = dict.fromkeys(run.question.category for run in result.questions)
    per_trap = {trap: {"scenarios": scores[0].per_category_questions.get(trap, 0),
                       **{f"recall@{s.k}": s.category("recall_any@{k}").get(trap, 0.0) for s in scores}}
                for trap in traps}
    return VetoScore(result.system, result.dataset, len(ranks), result.depth,
                     {s.k: s["recall_any@{k}"] for s in scores}, ranks, per_trap, scores)


def lineup(ds: Dataset, encoders: Mapping[str, TextEncoder], *, composite_encoder: TextEncoder | None = None,
           veto_files: str = DEFAULT_FILES, hybrid: HybridConfig | None = None,
           extra: Sequence[str] = ()) -> list[System]:
    """Every system on the suite: ``veto-composite`` (files known / no files), then memini's hybrid and vector per
    embedder (named ``memini-hybrid/<embedder>``), then ``memini-keyword`` once (it embeds nothing), then each
    system named in ``extra`` (the run's ``-system``, on the first embedder's context). memini's systems take every
    setting of ``hybrid`` (defaults without it); each embedder's systems share one fresh backend."""
    hybrid = hybrid or HybridConfig()
    systems: list[System] = list(veto_composite_systems(composite_encoder, veto_files))
    contexts = [context_for(hybrid, make_encoder=lambda e=encoder: e, label=label)
                for label, encoder in encoders.items()]
    for ctx in contexts:
        systems += build_systems(["memini-hybrid", "memini-vector"], ctx)
    if contexts:
        systems += build_systems(["memini-keyword"], context_for(hybrid, make_encoder=lambda: None))
    if extra:
        first = contexts[0] if contexts else context_for(hybrid, make_encoder=lambda: None)
        systems += build_systems(list(extra), first)
    return systems


def names_system(wanted: str, name: str) -> bool:
    """``wanted`` names system ``name`` exactly, without the ``memini-`` prefix, or names the system of which
    ``name`` is a ``<system>/<embedder>`` variant (``hybrid`` and ``memini-hybrid`` match ``memini-hybrid/hash``)."""
    return any(wanted in (n, n.removeprefix("memini-")) for n in (name, name.split("/", 1)[0]))


def select_systems(systems: list[System], wanted: Sequence[str], where: str = "VetoBench") -> list[System]:
    """The systems ``-systems`` names, in the order named (a name matching several variants brings them all, in
    ``systems`` order; each system once); every system when none is named. A name that matches nothing is a
    BenchError listing the names that run on ``where``."""
    if not wanted:
        return systems
    unknown = [w for w in wanted if not any(names_system(w, s.name) for s in systems)]
    if unknown:
        raise BenchError(f"-systems {','.join(unknown)}: none of them runs on {where}; use "
                         f"{', '.join(s.name for s in systems)}")
    chosen = {id(s): s for w in wanted for s in systems if names_system(w, s.name)}
    return list(chosen.values())


def evaluate(systems: Sequence[System], ds: Dataset, *, close: bool = True,
             guard: RunGuardOptions | None = None) -> tuple[list[RunResult], list[VetoScore]]:
    """Run every system over the suite at depth min(|decisions|, 100) and score veto recall (``close``: close the
    systems afterwards; the live layer reuses them and closes them itself; ``guard``: the run's -leaks and
    -recall-timeout, under which every recall is checked as in the normal run)."""
    results = run_all(systems, ds, min(len(ds.items), MAX_DEPTH), close=close, guard=guard)
    return results, [veto_score(r) for r in results]


def _rank_text(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def markdown(scores: Sequence[VetoScore], ds: Dataset, as_of: datetime) -> str:
    """Per suite: recall@1/@5 overall and per trap kind, the ranks in scenario order, then one row per scenario;
    ``as_of`` is the suite's "now"."""
    if not scores:
        return ""
    traps = list(dict.fromkeys(q.category for q in ds.questions))
    counts = {t: sum(1 for q in ds.questions if q.category == t) for t in traps}
    cols = (Column("system", "System", "left"), Column("r1", "R@1"), Column("r5", "R@5"),
            *(Column(f"{t}_r5", f"{t} R@5 (n={counts[t]})") for t in traps), Column("ranks", "veto ranks", "left"))
    rows = tuple((Cell(s.system, s.system), Cell(s.recall[1], fmt_num(s.recall[1])),
                  Cell(s.recall[5], fmt_num(s.recall[5])),
                  *(Cell(s.per_trap[t]["recall@5"], fmt_num(s.per_trap[t]["recall@5"])) for t in traps),
                  Cell(list(s.ranks.values()), "[" + ",".join(_rank_text(r) for r in s.ranks.values()) + "]"))
                 for s in scores)
    summary = Table(cols, rows, title=f"## {ds.name}: veto recall, {len(ds.questions)} scenarios over "
                                      f"{len(ds.items)} decisions (as of {as_of.date().isoformat()})")
    rank_cols = (Column("scenario", "Scenario", "left"), Column("trap", "trap", "left"),
                 Column("veto", "veto", "left"), *(Column(s.system, s.system) for s in scores))
    rank_rows = tuple((Cell(q.id, q.id), Cell(q.category, q.category), Cell(q.gold[0], q.gold[0]),
                       *(Cell(s.ranks[q.id], _rank_text(s.ranks[q.id])) for s in scores)) for q in ds.questions)
    return (render_table(summary, "md") + f"\nRank of each veto decision (1 = top; - = not in the top "
            f"{scores[0].depth}):\n\n" + render_table(Table(rank_cols, rank_rows), "md") + "\n")


def as_json(score: VetoScore) -> dict:
    return {"system": score.system, "suite": score.suite, "scenarios": score.scenarios, "depth": score.depth,
            **{f"veto_recall@{k}": v for k, v in score.recall.items()}, "ranks": score.ranks,
            "per_trap": score.per_trap}
