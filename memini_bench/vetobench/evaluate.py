"""Veto recall for any System: the systems on a suite, the rank of every veto, recall@1/@5 per trap kind.

For scenario s with veto decision v, ``rank(s)`` is the 1-based position of v in the system's list (None when v
is not in the list the system returned, at most ``depth`` long). Veto recall@K = |{s : rank(s) <= K}| / |S|, the
same as ``metrics.recall_any`` with gold = {v}; per trap kind the same over that kind's scenarios.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memini_bench.dataset import Dataset
from memini_bench.embed.encoder import TextEncoder
from memini_bench.metrics import first_gold_rank
from memini_bench.runner import RunResult, run_all
from memini_bench.systems import System, memini_systems
from memini_bench.vetobench.composite import veto_composite_systems

VETO_KS = (1, 5)
MAX_DEPTH = 100  # memini clamps recall to 100


@dataclass(frozen=True)
class VetoScore:
    """One system on one suite: recall@K (K in VETO_KS), the rank of each veto, and both per trap kind."""

    system: str
    suite: str
    scenarios: int
    depth: int
    recall: dict[int, float]
    ranks: dict[str, int | None]
    per_trap: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def recall_at_5(self) -> float:
        return self.recall[5]


def _recall(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def veto_score(result: RunResult, ks: Sequence[int] = VETO_KS) -> VetoScore:
    ranks = {}
    by_trap: dict[str, list[int | None]] = {}
    for run in result.questions:
        r0 = first_gold_rank(run)
        rank = r0 + 1 if r0 >= 0 else None
        ranks[run.question.id] = rank
        by_trap.setdefault(run.question.category, []).append(rank)
    values = list(ranks.values())
    per_trap = {trap: {"scenarios": len(rs), **{f"recall@{k}": _recall(rs, k) for k in ks}}
                for trap, rs in by_trap.items()}
    return VetoScore(result.system, result.dataset, len(values), result.depth, {k: _recall(values, k) for k in ks},
                     ranks, per_trap)


def lineup(ds: Dataset, encoders: Mapping[str, TextEncoder], *, composite_encoder: TextEncoder | None = None,
           veto_files: str = "both", keyword_backend: str = "numpy", fusion: float = 0.5) -> list[System]:
    """Every system on the suite: ``veto-composite`` (files known / no files), then memini's hybrid and vector per
    embedder (named ``memini-hybrid/<embedder>``), then ``memini-keyword`` once (it embeds nothing)."""
    systems: list[System] = list(veto_composite_systems(ds.questions, composite_encoder, veto_files))
    keyword = None
    for label, encoder in encoders.items():
        hybrid, vector, kw = memini_systems(encoder, keyword_backend=keyword_backend, alpha=fusion)
        for system in (hybrid, vector):
            system.name = f"{system.name}/{label}"
            systems.append(system)
        keyword = keyword or kw
    if keyword is not None:
        systems.append(keyword)
    return systems


def evaluate(systems: Sequence[System], ds: Dataset) -> tuple[list[RunResult], list[VetoScore]]:
    """Run every system over the suite at depth min(|decisions|, 100) and score veto recall."""
    results = run_all(systems, ds, min(len(ds.items), MAX_DEPTH))
    return results, [veto_score(r) for r in results]


def _rank_text(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def markdown(scores: Sequence[VetoScore], ds: Dataset) -> str:
    """Per suite: recall@1/@5 overall and per trap kind, the ranks in scenario order, then one row per scenario."""
    if not scores:
        return ""
    traps = list(dict.fromkeys(q.category for q in ds.questions))
    counts = {t: sum(1 for q in ds.questions if q.category == t) for t in traps}
    as_of = ds.questions[0].now.date().isoformat() if ds.questions[0].now else "?"
    out = [f"## {ds.name}: veto recall, {len(ds.questions)} scenarios over {len(ds.items)} decisions "
           f"(as of {as_of})\n",
           "| System | R@1 | R@5 | " + " | ".join(f"{t} R@5 (n={counts[t]})" for t in traps) + " | veto ranks |",
           "|---|--:|--:|" + "--:|" * len(traps) + "---|"]
    for s in scores:
        per = " | ".join(f"{s.per_trap[t]['recall@5']:.2f}" for t in traps)
        ranks = ",".join(_rank_text(r) for r in s.ranks.values())
        out.append(f"| {s.system} | {s.recall[1]:.2f} | {s.recall[5]:.2f} | {per} | [{ranks}] |")
    out.append(f"\nRank of each veto decision (1 = top; - = not in the top {scores[0].depth}):\n")
    out.append("| Scenario | trap | veto | " + " | ".join(s.system for s in scores) + " |")
    out.append("|---|---|---|" + "--:|" * len(scores))
    for q in ds.questions:
        ranks = " | ".join(_rank_text(s.ranks[q.id]) for s in scores)
        out.append(f"| {q.id} | {q.category} | {q.gold[0]} | {ranks} |")
    return "\n".join(out) + "\n\n"


def as_json(score: VetoScore) -> dict:
    return {"system": score.system, "suite": score.suite, "scenarios": score.scenarios, "depth": score.depth,
            **{f"veto_recall@{k}": v for k, v in score.recall.items()}, "ranks": score.ranks,
            "per_trap": score.per_trap}
