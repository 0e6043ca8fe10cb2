"""``-protocol time-ordered`` (LoCoMo, LongMemEval; docs/temporal.md): the data set's items written in time order,
each question asked at its own time against only what was written before it, reported beside the usual protocol
(everything ingested, then every question) on the same questions.

When a question is asked (its *cut*, in its group's items ordered by time, ties and undated items in data set order:
``systems.floors.time_ordered``):

- LongMemEval: after every item of its group dated at or before its ``question_date`` (``now``);
- LoCoMo: after the session holding its latest evidence (its gold item furthest in time order, and the rest of that
  session: ``Item.session`` where set, else the run of items with its time); ``now`` is that session's time.

The groups' writes are merged into one timeline by time (ties: group order, then data set order), so the store
grows as one store would. Between writes and the next questions the system may consolidate (``consolidate(now)``,
``core.contract``). A recall that returns an item written after the question's cut is a leak from the future,
refused (or dropped and counted under ``-leaks count``) like a hit of another group (``evaluation.hits``).

Printed: per system and K, recall_any@K and MRR under both protocols with the paired difference (exact McNemar on
recall_any@K, Holm across the table); the drift curve (recall_any@K by the number of items the question's group
held when it was asked, both protocols on the same questions); the write cost (store ms per item written, and the
usual protocol's ingest per item).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from memini_bench.core.dataset import Dataset, Item, Question
from memini_bench.core.metrics import parse as parse_metric
from memini_bench.core.runs import RunResult
from memini_bench.core.table import Cell, Column, Table, fmt_interval, fmt_num, fmt_pct, markdown
from memini_bench.errors import BenchError
from memini_bench.evaluation.runner import run_all
from memini_bench.evaluation.stats import adjust, compare
from memini_bench.evaluation.timeline import Ask, Replayed, Step, embed_ahead, run_guarded
from memini_bench.loaders.corrections import Write
from memini_bench.modes.base import Outcome, Plan, ScoredRuns
from memini_bench.modes.common import build_config
from memini_bench.modes.options import RunOptions
from memini_bench.systems.floors import time_ordered

SUITES = ("locomo", "locomo-sessions", "longmemeval")
BINS = 5  # drift curve: history-length bins (quantiles of the questions' history lengths)


def _session_end(ordered: Sequence[tuple[datetime | None, Item]], at: int) -> int:
    """The index after the last item of the session holding ``ordered[at]``."""
    t, item = ordered[at]
    end = at + 1
    while end < len(ordered):
        nt, nxt = ordered[end]
        same = (nxt.session == item.session) if item.session else (nt == t and not nxt.session)
        if not same:
            break
        end += 1
    return end


def cuts(ds: Dataset, suite: str) -> tuple[dict[str, int], dict[str, datetime | None],
                                           dict[str, list[tuple[datetime | None, Item]]]]:
    """Each question's cut (items of its group written before it is asked) and time (module docstring), and each
    group's items in time order."""
    groups = time_ordered(ds.items)
    cut: dict[str, int] = {}
    when: dict[str, datetime | None] = {}
    by_date = suite == "longmemeval"
    position = {g: {item.id: i for i, (_, item) in enumerate(ordered)} for g, ordered in groups.items()}
    for q in ds.questions:
        ordered = groups.get(q.group, [])
        if by_date and q.now is not None:
            n = 0
            while n < len(ordered) and (ordered[n][0] is None or ordered[n][0] <= q.now):
                n += 1
            cut[q.id], when[q.id] = n, q.now
            continue
        places = [position[q.group][g] for g in q.gold if g in position.get(q.group, {})]
        if not places:
            cut[q.id], when[q.id] = len(ordered), q.now
            continue
        end = _session_end(ordered, max(places))
        cut[q.id], when[q.id] = end, ordered[end - 1][0]
    return cut, when, groups


def steps_of(ds: Dataset, suite: str, depth: int) -> tuple[list[Step], list[Question]]:
    """The time-ordered timeline (module docstring) and its questions, each with its own ``now``."""
    cut, when, groups = cuts(ds, suite)
    order = {g: n for n, g in enumerate(groups)}

    def key(t: datetime | None) -> float:
        return float("-inf") if t is None else t.timestamp()

    events: list[tuple[float, int, int, int, object]] = []
    for g, ordered in groups.items():
        for i, (t, item) in enumerate(ordered):
            events.append((key(t), order[g], i, 0, item))
    asked = []
    for q in ds.questions:
        ordered = groups.get(q.group, [])
        c = cut[q.id]
        q2 = dataclasses.replace(q, now=when[q.id])
        asked.append(q2)
        t = ordered[c - 1][0] if c else (ordered[0][0] if ordered else None)
        events.append((key(t), order.get(q.group, 0), c - 1, 1, q2))
    events.sort(key=lambda e: e[:4])
    steps: list[Step] = []
    writes: list[Item] = []
    questions: list[Question] = []
    for event in events:
        kind, payload = event[3], event[4]
        if kind == 0:
            if questions:
                steps.append(Ask(tuple(questions), lambda q: depth))
                questions = []
            writes.append(payload)  # type: ignore[arg-type]
        else:
            if writes:
                steps.append(Write(tuple(writes)))
                writes = []
            questions.append(payload)  # type: ignore[arg-type]
    if writes:
        steps.append(Write(tuple(writes)))
    if questions:
        steps.append(Ask(tuple(questions), lambda q: depth))
    return steps, asked


def check_suite(suite: str) -> None:
    """Refuse a suite the protocol does not take (before any work)."""
    if suite not in SUITES:
        raise BenchError(f"-protocol time-ordered: not used by -suite {suite} (it takes {', '.join(SUITES)}); drop it")


def plan_state(mode, opts: RunOptions, state) -> None:
    """``state`` (a ``modes.temporal.OverTimeState``) given the usual protocol's own systems (a second lineup on
    the same encoder: a store ingested whole cannot be replayed) and the timeline."""
    ctx = state.ctx
    state.usual_ctx = opts.context(lambda: ctx.encoder)
    state.usual_systems = mode.make_systems(opts, state.usual_ctx)
    state.steps, state.asked = steps_of(state.ds, opts.suite, opts.depth)


def _bins(sizes: np.ndarray) -> list[tuple[int, int]]:
    edges = sorted(set(int(x) for x in np.quantile(sizes, np.linspace(0, 1, BINS + 1)))) if len(sizes) else [0]
    if len(edges) == 1:
        return [(edges[0], edges[0])]
    out = [(edges[i] + (1 if i else 0), edges[i + 1]) for i in range(len(edges) - 1)]
    return [(lo, hi) for lo, hi in out if lo <= hi]


def side_by_side(usual: Sequence[RunResult], ordered: Sequence[RunResult], replayed: Sequence[Replayed],
                 ks: Sequence[int], opts: RunOptions) -> tuple[str, list[dict]]:
    """The two protocols per system and K, with the paired test (exact McNemar, Holm over the table)."""
    from memini_bench.modes.specs import SystemsRunOptions

    own = opts.mode(SystemsRunOptions)
    tests, cells = [], []
    for u, o in zip(usual, ordered, strict=True):
        by_id = {r.question.id: r for r in u.questions}
        pairs = [(by_id[r.question.id], r) for r in o.questions]
        for k in ks:
            m = parse_metric(f"recall_any@{k}")
            a, b = [m.per_question(x) for x, _ in pairs], [m.per_question(y) for _, y in pairs]
            tests.append(compare(u.system, o.system, f"recall_any@{k}", a, b, binary=True, resamples=own.resamples,
                                 seed=own.seed))
            cells.append((u.system, k, pairs))
    tests = adjust(tests)
    mrr = parse_metric("mrr")
    columns = (Column("system", "system", "left"), Column("k", "K"), Column("usual", "usual R@K"),
               Column("ordered", "time-ordered R@K"), Column("delta", "delta (points)"), Column("p", "p (Holm)"),
               Column("usual_mrr", "usual MRR"), Column("ordered_mrr", "time-ordered MRR"),
               Column("write_ms", "write ms/item (time-ordered)"), Column("ingest_ms", "ingest ms/item (usual)"))
    rows, records = [], []
    costs = {r.system: r for r in replayed}
    usual_of = {u.system: u for u in usual}
    for (system, k, pairs), t in zip(cells, tests, strict=True):
        um = float(np.mean([mrr.per_question(x) for x, _ in pairs])) if pairs else 0.0
        om = float(np.mean([mrr.per_question(y) for _, y in pairs])) if pairs else 0.0
        rp, u = costs[system], usual_of[system]
        per_item = u.ingest_ms / max(1, rp.written)
        rows.append((Cell(system, system), Cell(k, str(k)), Cell(t.mean_a, fmt_pct(t.mean_a)),
                     Cell(t.mean_b, fmt_pct(t.mean_b)),
                     Cell(-t.delta, f"{-t.delta * 100:+.1f} {fmt_interval(-t.ci_high, -t.ci_low)}"),
                     Cell(t.p_adjusted, f"{t.p_adjusted:.3g}", strong=t.significant),
                     Cell(um, fmt_pct(um)), Cell(om, fmt_pct(om)), Cell(rp.ms_per_write, fmt_num(rp.ms_per_write, 3)),
                     Cell(per_item, fmt_num(per_item, 3))))
        records.append({"system": system, "k": k, "usual": t.mean_a, "time_ordered": t.mean_b,
                        "delta": -t.delta, "ci_low": -t.ci_high, "ci_high": -t.ci_low, "p": t.p,
                        "p_adjusted": t.p_adjusted, "usual_mrr": um, "time_ordered_mrr": om,
                        "write_ms_per_item": rp.ms_per_write, "consolidate_ms": rp.consolidate_ms,
                        "usual_ingest_ms_per_item": per_item, "questions": t.questions, "leaked": rp.leaked})
    n = len(cells[0][2]) if cells else 0
    table = Table(columns, tuple(rows), title="## the usual protocol and time-ordered, on the same questions",
                  notes=(f"N = {n} questions. usual: every item ingested, then every question; time-ordered: items "
                         "written in time order, each question asked at its own time against what was written "
                         "before it. delta = time-ordered minus usual, 95% paired bootstrap interval; p: exact "
                         "McNemar, Holm across the table (bold: significant at 0.05). write ms/item: the store's "
                         "cost per item written (ingest and consolidate, the run's embeddings made ahead); ingest "
                         "ms/item: the usual protocol's whole ingest over its items.",), notes_in_markdown=True)
    return markdown(table), records


def drift(usual: Sequence[RunResult], replayed: Sequence[Replayed], k: int) -> tuple[str, list[dict]]:
    """recall_any@K by the history length of the question's group when it was asked, both protocols."""
    m = parse_metric(f"recall_any@{k}")
    sizes = np.array(replayed[0].store_sizes) if replayed else np.zeros(0)
    bins = _bins(sizes)
    columns = [Column("history", "history (items)", "left"), Column("n", "N")]
    for r in replayed:
        columns += [Column(f"{r.system}:usual", f"{r.system} usual"), Column(f"{r.system}:ordered",
                                                                          f"{r.system} time-ordered")]
    rows, records = [], []
    for lo, hi in bins:
        chosen = [i for i, s in enumerate(sizes.tolist()) if lo <= s <= hi]
        row = [Cell(f"{lo}-{hi}", f"{lo}-{hi}"), Cell(len(chosen), str(len(chosen)))]
        record: dict[str, object] = {"history_min": lo, "history_max": hi, "questions": len(chosen)}
        for u, r in zip(usual, replayed, strict=True):
            by_id = {x.question.id: x for x in u.questions}
            ordered = [m.per_question(r.runs[i]) for i in chosen]
            plain = [m.per_question(by_id[r.runs[i].question.id]) for i in chosen]
            ov = float(np.mean(ordered)) if chosen else None
            uv = float(np.mean(plain)) if chosen else None
            row += [Cell(uv, fmt_pct(uv)), Cell(ov, fmt_pct(ov))]
            record[r.system] = {"usual": uv, "time_ordered": ov}
        rows.append(tuple(row))
        records.append(record)
    table = Table(tuple(columns), tuple(rows), title=f"## drift: recall_any@{k} by history length",
                  notes=("history: the items of the question's group written when it was asked (time-ordered); the "
                         "usual protocol's figure is on the same questions, with every item written.",),
                  notes_in_markdown=True)
    return markdown(table), records


def run(plan: Plan) -> Outcome:
    opts, st = plan.opts, plan.state
    ds = st.ds
    embed_ahead(st.ctx, ds)
    replayed = run_guarded(st.systems, ds, st.steps, opts.guard, label="time-ordered")
    ordered = [r.result(ds, opts.depth) for r in replayed]
    usual = run_all(st.usual_systems, ds, opts.depth, guard=opts.guard)  # the same questions, the usual way
    text, records = side_by_side(usual, ordered, replayed, sorted(opts.k), opts)
    curve, curve_records = drift(usual, replayed, min(opts.k))
    text += "\n" + curve
    leaks = {r.system: r.leaked for r in replayed if r.leaked}
    if leaks:
        text += "\nleaked hits dropped (-leaks count): " + ", ".join(f"{n} {c}" for n, c in leaks.items()) + "\n"
    from memini_bench.loaders.protocols import protocol_of

    config = build_config(opts, ds, st.ctx, st.systems, mode="time-ordered", identity=plan.identity,
                          protocol=f"{protocol_of(opts.suite, opts.load)}+time-ordered")
    extra = {"time_ordered": {"protocols": records, "drift": curve_records,
                              "writes": {r.system: {"written": r.written, "write_ms": r.write_ms,
                                                    "consolidate_ms": r.consolidate_ms, "write_calls": r.write_calls,
                                                    "leaked": r.leaked} for r in replayed}}}
    return Outcome(plan, 0, text, ScoredRuns(ordered, [], config, extra))
