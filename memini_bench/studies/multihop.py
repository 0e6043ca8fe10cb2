"""The multi-hop retrieval ceiling (memini ``bench/multihop_test.go → TestMultiHopRetrievalCeiling``).

Questions: those of one category (LoCoMo "1", multi-hop) with at least two gold ids (277 on LoCoMo-10). For each,
with ``got`` = the ids of one recall at k (10) and G = the gold list (as the loader gives it, repeats kept, as
memini counts them):

    found(S)        = #{g in G : g in S}           coverage of a set S of recalled ids
    full-gold       = share of questions with found(S) == |G|
    mean gold recall = mean over questions of found(S) / |G|

Three regimes, each an id set S:

- single: S = got;
- realistic second hop: S = got ∪ recall(query + " " + content(got[0]))   (the top-1 hit's item text; "" for an
  id the data set does not hold);
- oracle second hop: S = got ∪ recall(query + " " + content(b)), b = the first gold (in G's order) found in got
  (no second recall when none is found).

A question the single recall already covers counts as covered in all three (no second recall is made). The union
spans two k-sized lists: an agent that issues two recalls and reads both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memini_bench.core.contract import System
from memini_bench.core.dataset import Dataset, Question, subsample
from memini_bench.core.table import Cell, Column, Table, fmt_pct
from memini_bench.core.table import render as render_table
from memini_bench.errors import BenchError
from memini_bench.evaluation.guarded import leaked_line
from memini_bench.studies import published

REGIMES = ("single", "realistic", "oracle")
REGIME_LABELS = {"single": "single recall", "realistic": "+ realistic 2nd hop (top-1)",
                 "oracle": "+ oracle 2nd hop (found gold)"}

Recall = Callable[[Question, str, int], list[str]]  # (question, query, k) -> recalled item ids, best first


def select(ds: Dataset, category: str = "1", min_gold: int = 2, limit: int = 0) -> Dataset:
    """The questions of ``category`` with at least ``min_gold`` gold ids (memini counts repeats), then memini's
    even subsample to ``limit``; items pruned to the kept questions' groups; the name gets ``-multihop``."""
    kept = tuple(q for q in ds.questions if q.category == category and len(q.gold) >= min_gold)
    if not kept:
        cats = ", ".join(sorted({q.category for q in ds.questions if q.category})) or "none"
        raise BenchError(f"-multihop-category {category!r}: no question of that category has {min_gold} or more gold "
                         f"ids (this data set's categories: {cats}); use LoCoMo (-suite locomo) or another category")
    groups = {q.group for q in kept}
    out = ds.with_(name=f"{ds.name}-multihop", questions=kept,
                   items=tuple(it for it in ds.items if it.group in groups))
    return subsample(out, limit)


def recall_ids(system: System) -> Recall:
    """A ``Recall`` over a system (in the question's group, at its date, with its context): the item ids of its
    hits, flattened in rank order, each once."""
    def recall(q: Question, query: str, k: int) -> list[str]:
        hits = system.recall(q.group, query, k, now=q.now, context=dict(q.context))
        return list(dict.fromkeys(i for h in hits for i in h.ids))

    return recall


def found(got: Sequence[str] | set[str], gold: Sequence[str]) -> int:
    have = set(got)
    return sum(1 for g in gold if g in have)


def union(a: Sequence[str], b: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


@dataclass(frozen=True, slots=True)
class QuestionHops:
    """One question's coverage in each regime (gold entries found, of ``total``)."""

    id: str
    total: int
    single: int
    realistic: int
    oracle: int


def hop_queries(q: Question, got: Sequence[str], content: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The (realistic, oracle) second-hop queries of a question whose first recall is ``got``; None where no
    second recall is made (the question is already covered, nothing was recalled, or no gold was found)."""
    if found(got, q.gold) == len(q.gold):
        return None, None
    realistic = f"{q.query} {content.get(got[0], '')}" if got else None
    bridge = next((g for g in q.gold if g in set(got)), None)
    oracle = f"{q.query} {content.get(bridge, '')}" if bridge is not None else None
    return realistic, oracle


@dataclass(frozen=True, slots=True)
class RegimeScore:
    regime: str
    full_gold: float
    mean_gold_recall: float
    full_gold_count: int


def summarize(rows: Sequence[QuestionHops]) -> list[RegimeScore]:
    n = len(rows)
    out = []
    for regime in REGIMES:
        full = sum(1 for r in rows if getattr(r, regime) == r.total)
        mean = sum(getattr(r, regime) / r.total for r in rows) / n if n else 0.0
        out.append(RegimeScore(regime, full / n if n else 0.0, mean, full))
    return out


def run_system(system: System, ds: Dataset, k: int,
               warm: Callable[[list[str]], None] | None = None) -> tuple[list[QuestionHops], list[RegimeScore]]:
    """Every question's three regimes (module docstring). The first recalls run first, then every second hop;
    ``warm(queries)`` is called before each phase (the mode embeds the phase's queries in one batch there)."""
    content = {it.id: it.content for it in ds.items}
    recall = recall_ids(system)
    if warm is not None:
        warm([q.query for q in ds.questions])
    firsts = [recall(q, q.query, k) for q in ds.questions]
    plans = [hop_queries(q, got, content) for q, got in zip(ds.questions, firsts, strict=True)]
    if warm is not None:
        warm([text for plan in plans for text in plan if text is not None])
    rows = []
    for q, got, plan in zip(ds.questions, firsts, plans, strict=True):
        covered = [found(got, q.gold) if text is None else found(union(got, recall(q, text, k)), q.gold)
                   for text in plan]
        rows.append(QuestionHops(q.id, len(q.gold), found(got, q.gold), *covered))
    return rows, summarize(rows)


def render(doc: dict) -> str:
    """Markdown from a ``-multihop`` results file: one table per system, memini's published full-gold figure
    beside memini-hybrid's rows when the embedder is one memini published (MiniLM)."""
    config = doc["config"]
    key = published.embedder_key(config.get("embedder", ""))
    out = [f"Multi-hop retrieval ceiling — {config['dataset']}: {config['questions']} questions (category "
           f"{config['multihop_category']!r}, >= {config['multihop_min_gold']} gold), k {config['multihop_k']}, "
           f"embedder {config.get('embedder') or '-'}"]
    for result in doc["results"]:
        ours_only = not (key and result["system"] == "memini-hybrid")
        cols = (Column("regime", "regime", "left"), Column("full_gold", "full-gold coverage"),
                Column("mean_gold_recall", "mean gold recall"),
                *(() if ours_only else (Column("memini", "memini full-gold (MiniLM / qwen3)"),)))
        body = []
        for r in result["regimes"]:
            theirs = () if ours_only else (published.MULTIHOP_FULL_GOLD["minilm"][r["regime"]],
                                           published.MULTIHOP_FULL_GOLD["qwen3-0.6b"][r["regime"]])
            body.append((Cell(r["regime"], REGIME_LABELS[r["regime"]]),
                         Cell(r["full_gold"], f"{fmt_pct(r['full_gold'])} ({r['full_gold_count']})"),
                         Cell(r["mean_gold_recall"], fmt_pct(r["mean_gold_recall"])),
                         *(() if ours_only else (Cell(theirs, f"{theirs[0]:.1f}% / {theirs[1]:.1f}%"),))))
        out += ["", f"**{result['system']}**", "", render_table(Table(cols, tuple(body)), "md").rstrip("\n")]
        if "leaked" in result:  # -leaks count
            out += ["", leaked_line({result["system"]: result["leaked"]})]
    if key:
        out += ["", f"memini's figures: {published.MULTIHOP_QUESTIONS} questions, its default service (async "
                "reinforcement), embedders over HTTP; mean gold recall was not published."]
    return "\n".join(out) + "\n"
