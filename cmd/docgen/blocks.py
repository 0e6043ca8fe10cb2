"""The generated number tables of the README and docs pages, each rendered from committed results files
(``memini_bench.results.read``).

Every function takes the results folder and returns markdown. ``docgen.table.blocks()`` maps each block
name (``<!-- NAME:begin -->`` ... ``<!-- NAME:end -->``) to its function. A file a block needs that is missing
renders as a one-line note saying which command makes it, so the README and docs never show a number nobody produced.
Published figures (memini's, RoBrain's) are quotations from ``../shared/docs/anchors.md``, marked as such.
"""

from __future__ import annotations

from pathlib import Path

from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_points
from memini_bench.core.table import render as render_table
from memini_bench.report.boards import MIN_QUESTIONS
from memini_bench.report.model import embedder_label
from memini_bench.results.read import load
from memini_bench.results.schema import (
    CompareResults,
    GateResults,
    QualityResults,
    RankingResults,
    ResultsFile,
    Score,
    VetoResults,
    VetoScaleResults,
)

MAIN_FILES = ("locomo.json", "locomo-sessions.json", "longmemeval.json", "longmemeval-shared.json")



def get(results_dir: Path, name: str, kind: type) -> ResultsFile | None:
    """The committed results file ``name`` as ``kind``, None when absent or of another kind."""
    path = results_dir / name
    if not path.exists():
        return None
    doc = load(path)
    return doc if isinstance(doc, kind) else None


def _missing(name: str) -> str:
    return f"_(`results/{name}` is not committed yet: `make results` writes it)_\n"


def _triple(doc: CompareResults | None, system: str) -> str:
    """``R@5 / R@10 / MRR`` of one system, or ``-``."""
    if doc is None:
        return "-"
    r5, r10 = doc.score(system, 5), doc.score(system, 10)
    if r5 is None or r10 is None:
        return "-"
    return f"{fmt_points(r5.recall_at_k)} / {fmt_points(r10.recall_at_k)} / {fmt_points(r10.mrr)}"


#: The main table's columns (the report's Markdown export has the same: a test holds the two to one table).
MAIN_COLUMNS = (Column("dataset", "data set", "left"), Column("questions", "questions"),
                Column("system", "system", "left"), Column("embedder", "embedder", "left"), Column("r5", "R@5"),
                Column("r10", "R@10"), Column("ra10", "RecallAll@10"), Column("mrr", "MRR"),
                Column("ndcg10", "nDCG@10"), Column("p50", "p50 ms"))
#: The reference system's held-split runs (``make reference-held``), one per main data set: its settings were
#: chosen on the tune split, so its headline number is the held one.
REFERENCE_FILES = ("reference/locomo-held-peers.json", "reference/locomo-sessions-held-peers.json",
                   "reference/longmemeval-shared-held-peers.json")


def _rows(doc: CompareResults, systems: list[str]) -> list[tuple[Cell, ...]]:
    """One table row per system: R@5 / R@10 / RecallAll@10 / MRR / nDCG@10 and p50 at K 10; a run of fewer than
    the report's minimum of questions (a smoke test, ``report.boards.MIN_QUESTIONS``) has none. A held-split run
    names its split in the data set column."""
    out = []
    for system in systems:
        r5, r10 = doc.score(system, 5), doc.score(system, 10)
        if not (r5 and r10) or r10.questions < MIN_QUESTIONS:
            continue
        name = doc.dataset
        if doc.config.get("holdout") == "held":
            name = f"{name.removesuffix('-held')} (held split)"
        out.append((Cell(name, name), Cell(r10.questions, str(r10.questions)), Cell(system, system),
                    Cell(embedder_label(doc.config, system), embedder_label(doc.config, system)),
                    *(Cell(v, fmt_points(v)) for v in (r5.recall_at_k, r10.recall_at_k, r10.recall_all_at_k, r10.mrr,
                                                 r10.ndcg_at_k)), Cell(r10.p50_ms, fmt_num(r10.p50_ms))))
    return out


def _main_rows(results_dir: Path, files: tuple[str, ...], systems: list[str] | None = None) -> tuple:
    rows: list[tuple[Cell, ...]] = []
    for name in files:
        doc = get(results_dir, name, CompareResults)
        if doc is not None:
            rows += _rows(doc, doc.systems if systems is None else systems)
    return tuple(rows)


def main_table(results_dir: Path) -> str:
    """One row per system of each main results file: R@5 / R@10 / RecallAll@10 / MRR / nDCG@10, p50."""
    return render_table(Table(MAIN_COLUMNS, _main_rows(results_dir, MAIN_FILES)), "md")


def reference_rows(results_dir: Path) -> str:
    """The ``reference`` system's row on each main data set's held split (its settings were chosen on the tune
    split; ``results/reference/*-held-peers.json``), in the main table's columns; a held split under the minimum
    of questions has no row."""
    rows = _main_rows(results_dir, REFERENCE_FILES, ["reference"])
    if not rows:
        return "_(`results/reference/` is not committed yet: `make reference-held` writes it)_\n"
    return render_table(Table(MAIN_COLUMNS, rows), "md")


# memini's published LoCoMo figures (R@5 / R@10 / MRR), quoted from anchors.md.
PUBLISHED = {
    ("turn", "memini-keyword"): "58.7 / 67.1 / 44.8",
    ("turn", "memini-vector"): "41.3 / 51.8 / 28.1 and 41.5 / 52.1",
    ("turn", "memini-hybrid"): "59.7 / 69.9 / 42.4 and 59.8 / 69.8 / 42.6",
    ("session", "memini-keyword"): "92.6 / 96.8 / 79.4",
    ("session", "memini-vector"): "64.1 / 79.8 / 45.2",
    ("session", "memini-hybrid"): "90.9 / 96.6 / 74.3",
}


def reproduction(results_dir: Path) -> str:
    """memini's published LoCoMo figures beside ours (``locomo.json``, ``locomo-sessions.json`` and the
    ``-reinforce`` run ``locomo-reinforce-sys-hybrid.json``)."""
    turn = get(results_dir, "locomo.json", CompareResults)
    session = get(results_dir, "locomo-sessions.json", CompareResults)
    reinforce = get(results_dir, "locomo-reinforce-sys-hybrid.json", CompareResults)
    lines = ["| LoCoMo | published (memini) | this harness |", "|---|---|---|"]
    for level, doc in (("turn", turn), ("session", session)):
        for system in ("memini-keyword", "memini-vector", "memini-hybrid"):
            lines.append(f"| {level}, {system.removeprefix('memini-')} | {PUBLISHED[(level, system)]} | "
                         f"{_triple(doc, system)} |")
        if level == "turn":
            lines.append(f"| turn, hybrid with `-reinforce` (memini's access-count side effect) | - | "
                         f"{_triple(reinforce, 'memini-hybrid')} |")
    return "\n".join(lines) + "\n"


TEMPORAL_ROWS = (("`-temporal-boost 0` (memini's bench)", ""), ("`-temporal-boost 0.4` (regex)", "-tboost0.4"),
                 ("`-temporal-boost 0.4 -temporal-extractor extended`", "-tboost0.4-tx-extended"))


def temporal_boost(results_dir: Path) -> str:
    """The hybrid with and without the temporal boost, LoCoMo turn level and the shared LongMemEval sample."""
    lines = ["| hybrid | LoCoMo turn | LME sample, shared haystack |", "|---|---|---|"]
    for label, token in TEMPORAL_ROWS:
        cells = []
        for base in ("locomo", "longmemeval-shared"):
            name = f"{base}.json" if not token else f"{base}{token}-sys-hybrid.json"
            cells.append(_triple(get(results_dir, name, CompareResults), "memini-hybrid"))
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


# (regex file stem, extended file stem, category, column label): the stems ``make results`` writes.
LOCOMO_RERANK = ("locomo-rerank-cats-all", "locomo-rerank-tx-extended-cats-all")
LME_RERANK = ("longmemeval-shared-rerank", "longmemeval-shared-rerank-tx-extended")
RERANK_COLUMNS = ((*LOCOMO_RERANK, "all", "LoCoMo all"), (*LOCOMO_RERANK, "2", "LoCoMo cat 2"),
                  (*LME_RERANK, "knowledge-update", "LME KU"), (*LME_RERANK, "temporal-reasoning", "LME TR"))


def rerank_table(results_dir: Path) -> str:
    """R@1 / R@5 / MRR of memini's five re-rank strategies (regex extractor, then extended's temporal row)."""
    docs = {stem: get(results_dir, f"{stem}.json", RankingResults)
            for regex, extended, _, _ in RERANK_COLUMNS for stem in (regex, extended)}
    first = docs[RERANK_COLUMNS[0][0]]
    if first is None:
        return _missing(f"{RERANK_COLUMNS[0][0]}.json")
    header = []
    for regex, _, cat, label in RERANK_COLUMNS:
        row = docs[regex].row("rrf", cat) if docs[regex] else None
        header.append(label + (f" ({row.questions})" if row else ""))
    lines = ["| R@1 / R@5 / MRR | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
    strategies = list(dict.fromkeys(r.system for r in first.rows))
    for extended in (False, True):
        for strategy in strategies:
            temporal = strategy.startswith("temporal")
            if extended and not temporal:
                continue
            label = f"{strategy} ({'extended' if extended else 'regex'})" if temporal else strategy
            cells = []
            for regex, ext, cat, _ in RERANK_COLUMNS:
                doc = docs[ext if extended else regex]
                row = doc.row(strategy + ("-extended" if extended else ""), cat) if doc else None
                cells.append("-" if row is None else f"{fmt_points(row.recall_at_1)} / {fmt_points(row.recall_at_k)} / "
                             f"{fmt_points(row.mrr)}")
            lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def vec_gate(results_dir: Path) -> str:
    """The vector-gate sweep on LoCoMo: the score distributions and every threshold row."""
    doc = get(results_dir, "locomo-vec-gate.json", GateResults)
    if doc is None:
        return _missing("locomo-vec-gate.json")
    dist = doc.distribution
    lines = ["| top 1/(1+L2) | p10 | p25 | p50 | p75 | p90 |", "|---|--:|--:|--:|--:|--:|"]
    for side in ("positive", "negative"):
        d = dist.get(side, {})
        lines.append(f"| {side} ({'own group' if side == 'positive' else 'foreign'}) | "
                     + " | ".join(f"{d.get(f'p{p}', 0.0):.3f}" for p in (10, 25, 50, 75, 90)) + " |")
    lines += ["", f"| threshold | pos R@{doc.config.get('gate_k', 5)} | neg injection |", "|--:|--:|--:|"]
    lines += [f"| {r['threshold']:.2f} | {fmt_points(r['pos_recall_at_k'])}% | {fmt_points(r['neg_injection_rate'])}% |"
              for r in doc.rows]
    return "\n".join(lines) + "\n"


def quality_table(results_dir: Path) -> str:
    """The recall-quality scoreboard, one row per embedder and config."""
    doc = get(results_dir, "quality.json", QualityResults)
    if doc is None:
        return _missing("quality.json")
    lines = ["| embedder · config | dur R@k / MRR | epi R@k / MRR | P@3 / P@5 | spray q/n | inj q/n |",
             "|---|---|---|---|---|---|"]
    for b in doc.boards:
        mode = " rerank" if b.get("mode") == "rerank" else ""  # the cross-encoder rows (quality.scoreboard)
        lines.append(f"| {b['embedder']}{mode} · {b['label']} | {b['dur_recall'] * 100:.0f}% / {b['dur_mrr']:.3f} | "
                     f"{b['epi_recall'] * 100:.0f}% / {b['epi_mrr']:.3f} | {b['p3']:.3f} / {b['p5']:.3f} | "
                     f"{b['spray_q']}/{b['spray_n']} | {b['inj_q']}/{b['inj_n']} |")
    return "\n".join(lines) + "\n"


def _ranks(ranks: dict) -> str:
    return "[" + ",".join("-" if r is None else str(r) for r in ranks.values()) + "]"


def vetobench_table(results_dir: Path) -> str:
    """Veto recall@1 / @5 of every system on each VetoBench suite, with the rank of each veto."""
    doc = get(results_dir, "vetobench.json", VetoResults)
    if doc is None:
        return _missing("vetobench.json")
    suites = [s["suite"] for s in doc.suites]
    lines = ["| system | " + " | ".join(f"{s} R@1 / R@5 (veto ranks)" for s in suites) + " |",
             "|---|" + "---|" * len(suites)]
    systems = list(dict.fromkeys(v["system"] for s in doc.suites for v in s["veto"]))
    for system in systems:
        cells = []
        for s in doc.suites:
            v = next((v for v in s["veto"] if v["system"] == system), None)
            cells.append("-" if v is None else f"{v['veto_recall@1']:.2f} / {v['veto_recall@5']:.2f} "
                         f"{_ranks(v['ranks'])}")
        lines.append(f"| {system} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def vetobench_scale(results_dir: Path) -> str:
    """Veto recall@5 of every system at each corpus size of the scale curve."""
    doc = get(results_dir, "vetobench-scale.json", VetoScaleResults)
    if doc is None:
        return _missing("vetobench-scale.json")
    sizes = [p["size"] for p in doc.points]
    systems = list(dict.fromkeys(s["system"] for p in doc.points for s in p["systems"]))
    lines = ["| system | " + " | ".join(map(str, sizes)) + " |", "|---|" + "--:|" * len(sizes)]
    for system in systems:
        cells = [next((f"{s['veto_recall@5']:.2f}" for s in p["systems"] if s["system"] == system), "-")
                 for p in doc.points]
        lines.append(f"| {system} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def _jsonl(path: Path) -> list[dict]:
    import orjson

    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


EXTRACTOR_FILES = (("LoCoMo (all categories)", *LOCOMO_RERANK), ("LME sample, shared haystack", *LME_RERANK))


def extractor_diff(results_dir: Path) -> str:
    """regex vs extended temporal extractor, per question (the two ``-rerank`` per-question files): questions
    anchored by each, anchors changed, and for how many the temporal0.40 rank of the gold moved up / down."""
    lines = ["| data set | anchored (regex) | anchored (extended) | anchor changed | gold up | gold down |",
             "|---|--:|--:|--:|--:|--:|"]
    for label, regex_stem, ext_stem in EXTRACTOR_FILES:
        regex_path, ext_path = results_dir / f"{regex_stem}.jsonl", results_dir / f"{ext_stem}.jsonl"
        if not (regex_path.exists() and ext_path.exists()):
            lines.append(f"| {label} | - | - | - | - | - |")
            continue
        regex = {r["id"]: r for r in _jsonl(regex_path)}
        ext = {r["id"]: r for r in _jsonl(ext_path)}
        changed = up = down = 0
        for qid, r in regex.items():
            e = ext.get(qid)
            if e is None or r["anchor"] == e["anchor"]:
                continue
            changed += 1
            before, after = r["ranks"]["temporal0.40"], e["ranks"]["temporal0.40-extended"]
            before, after = (10**9 if x < 0 else x for x in (before, after))
            up += after < before
            down += after > before
        lines.append(f"| {label} | {sum(r['anchor'] is not None for r in regex.values())} | "
                     f"{sum(e['anchor'] is not None for e in ext.values())} | {changed} | {up} | {down} |")
    return "\n".join(lines) + "\n"


# memini's published LoCoMo turn-level hybrid at pool depths 30 / 50 / 80 (R@5 / R@10 / MRR), from anchors.md.
PUBLISHED_POOL = {"pool=30": "60.0 / 70.1 / 42.1", "pool=50": "59.8 / 69.8 / 42.6", "pool=80": "59.3 / 69.6 / 42.7"}
SWEEPS = (("LoCoMo turn", "locomo-sweep-pool"), ("LoCoMo session", "locomo-sessions-sweep-pool"),
          ("LoCoMo turn", "locomo-sweep-fusion"), ("LoCoMo session", "locomo-sessions-sweep-fusion"))


def _summary(results_dir: Path, folder: str) -> dict | None:
    import orjson

    path = results_dir / folder / "summary.json"
    return orjson.loads(path.read_bytes()) if path.exists() else None


def _sweep_rows(phase: dict, published: dict | None = None) -> list[str]:
    sig = {(r["system_a"], r["metric"]): r for r in phase["significance"]}

    def trio(scores: list[dict]) -> str:
        by_k = {s.k: s for s in map(Score.from_row, scores)}
        return f"{fmt_points(by_k[5].recall_at_k)} / {fmt_points(by_k[10].recall_at_k)} / {fmt_points(by_k[10].mrr)}"

    def mark(row: dict, text: str) -> str:
        return f"**{text}**" if row["significant"] else text

    rows = [f"| baseline (defaults) | {trio(phase['baseline'])} | | | |" + (" |" if published is not None else "")]
    for cell in phase["cells"]:
        r5, mrr = sig[(cell["cell"], "R@5")], sig[(cell["cell"], "MRR")]
        d5, dmrr = f"{r5['delta'] * 100:+.1f}", f"{mrr['delta'] * 100:+.1f}"
        row = (f"| {cell['cell']} | {trio(cell['scores'])} | {mark(r5, d5)} "
               f"| {r5['p']:.3g} ({r5['p_adjusted']:.3g}) | {mark(mrr, dmrr)} "
               f"[{mrr['ci_low'] * 100:+.1f}, {mrr['ci_high'] * 100:+.1f}] |")
        if published is not None:
            row += f" {published.get(cell['cell'], '-')} |"
        rows.append(row)
    return rows


def sweeps(results_dir: Path) -> str:
    """memini's pool-depth and fusion sweeps, each cell against the defaults (McNemar on R@5 with its Holm p,
    bootstrap MRR interval; bold = significant after Holm)."""
    out = []
    for level, folder in SWEEPS:
        summary = _summary(results_dir, folder)
        if summary is None:
            out.append(_missing(f"{folder}/summary.json"))
            continue
        published = PUBLISHED_POOL if folder == "locomo-sweep-pool" else None
        head = "| cell | R@5 / R@10 / MRR | Δ R@5 (pp) | p McNemar (Holm) | Δ MRR (pp) [95% CI] |"
        out += [f"**{level}, `-sweep '{summary['config']['sweep']}'`** ({summary['tune']['split']} questions)", "",
                head + (" memini published |" if published else ""),
                "|---|--:|--:|--:|--:|" + ("--:|" if published else ""), *_sweep_rows(summary["tune"], published), ""]
    return "\n".join(out)


def selection(results_dir: Path) -> str:
    """One tune/held selection end to end: the cells on tune, the winner and the baseline on held."""
    summary = _summary(results_dir, "locomo-tune-sweep-fusion")
    if summary is None:
        return _missing("locomo-tune-sweep-fusion/summary.json")
    head = ["| cell | R@5 / R@10 / MRR | Δ R@5 (pp) | p McNemar (Holm) | Δ MRR (pp) [95% CI] |",
            "|---|--:|--:|--:|--:|"]
    out = [f"Tune split, {summary['config']['cells']} cells tried, selected by {summary['config']['select']}: "
           f"**{summary['selected']}**", "", *head, *_sweep_rows(summary["tune"]), ""]
    if summary.get("held"):
        out += ["Held split (the honest number):", "", *head, *_sweep_rows(summary["held"]), ""]
    return "\n".join(out)


def legs(results_dir: Path) -> str:
    """Is the hybrid ahead of each leg, significantly? (``-significance`` on the main LoCoMo runs.)"""
    lines = ["| level | hybrid vs | metric | hybrid | leg | Δ (pp) [95% CI] | test | p (Holm) | significant |",
             "|---|---|---|--:|--:|---|---|--:|:-:|"]
    for level, name in (("turn", "locomo.json"), ("session", "locomo-sessions.json")):
        doc = get(results_dir, name, CompareResults)
        for r in (doc.raw.get("significance", []) if doc else []):
            if r["metric"] not in ("R@5", "R@10", "MRR"):
                continue
            lines.append(f"| {level} | {r['system_b'].removeprefix('memini-')} | {r['metric']} | "
                         f"{fmt_points(r['mean_a'])} | {fmt_points(r['mean_b'])} | {r['delta'] * 100:+.1f} "
                         f"[{r['ci_low'] * 100:+.1f}, {r['ci_high'] * 100:+.1f}] | {r['test']} | "
                         f"{r['p_adjusted']:.3g} | {'yes' if r['significant'] else 'no'} |")
    return "\n".join(lines) + "\n"


PEER_SETS = (("LoCoMo turn level", "locomo"), ("LoCoMo session level", "locomo-sessions"),
             ("LongMemEval sample, shared haystack", "longmemeval-shared"))


PEER_COLUMNS = (Column("system", "system", "left"), Column("r5", "R@5"), Column("r10", "R@10"), Column("mrr", "MRR"),
                Column("ndcg10", "nDCG@10"), Column("p50", "p50 ms"), Column("p95", "p95 ms"),
                Column("ingest", "ingest ms"), Column("vs_hybrid", "vs hybrid: R@5 / MRR", "left"))


def peers(results_dir: Path) -> str:
    """Every system of the side-by-side runs (``<dataset>-peers.json`` and ``-peers-variants.json``), sorted by
    R@5, with latency and ingest time, and whether it differs significantly from memini-hybrid (McNemar on R@5,
    bootstrap on MRR, Holm; from ``-significance`` in the main file)."""
    out = []
    for title, base in PEER_SETS:
        docs = [d for d in (get(results_dir, f"{base}-{s}.json", CompareResults) for s in ("peers", "peers-variants"))
                if d is not None]
        if not docs:
            out.append(_missing(f"{base}-peers.json"))
            continue
        sig = {(r["system_b"], r["metric"]): r for r in docs[0].raw.get("significance", [])}
        rows = [(doc, s) for doc in docs for s in doc.systems if doc.score(s, 5) and doc.score(s, 10)]
        rows.sort(key=lambda pair: -pair[0].score(pair[1], 5).recall_at_k)
        questions = rows[0][0].score(rows[0][1], 10).questions if rows else 0
        body = []
        for doc, system in rows:
            r5, r10 = doc.score(system, 5), doc.score(system, 10)
            tests = []
            for metric in ("R@5", "MRR"):
                r = sig.get((system, metric))
                if r is not None:
                    verdict = ("hybrid ahead" if r["delta"] > 0 else "peer ahead") if r["significant"] else "n.s."
                    tests.append(f"{verdict} (p {r['p_adjusted']:.2g})")
            verdict = " / ".join(tests) if tests else ("reference" if system == "memini-hybrid" else "-")
            body.append((Cell(system, system), *(Cell(v, fmt_points(v)) for v in (r5.recall_at_k, r10.recall_at_k,
                                                                              r10.mrr, r10.ndcg_at_k)),
                         Cell(r10.p50_ms, fmt_num(r10.p50_ms)), Cell(r10.p95_ms, fmt_num(r10.p95_ms)),
                         Cell(r10.ingest_ms, fmt_num(r10.ingest_ms, 0)), Cell(verdict, verdict)))
        out += [f"**{title}** ({questions} questions, {docs[0].config.get('embed_model', '')})", "",
                render_table(Table(PEER_COLUMNS, tuple(body)), "md")]
    return "\n".join(out)
