"""The generated number tables of the README and docs pages, each rendered from committed results files
(``memini_bench.results.read``).

Every function takes the results folder and returns markdown. ``docgen.table.blocks()`` maps each block
name (``<!-- NAME:begin -->`` ... ``<!-- NAME:end -->``) to its function. A file a block needs that is missing
renders as a one-line note saying which command makes it, so the README and docs never show a number nobody produced.
Published figures (memini's, RoBrain's) are quotations from ``../shared/docs/anchors.md``, marked as such.
"""

from __future__ import annotations

import json
from pathlib import Path

from memini_bench.core.metrics import normalize
from memini_bench.core.table import Cell, Column, Table, fmt_interval, fmt_num, fmt_pct, fmt_points, markdown, table_of
from memini_bench.core.table import render as render_table
from memini_bench.evaluation.corrections import COLUMNS
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
    return f"{fmt_points(r5['recall_any@{k}'])} / {fmt_points(r10['recall_any@{k}'])} / {fmt_points(r10['mrr'])}"


#: The main table's columns (the report's Markdown export has the same: a test holds the two to one table).
MAIN_COLUMNS = (Column("dataset", "data set", "left"), Column("questions", "questions"),
                Column("system", "system", "left"), Column("embedder", "embedder", "left"),
                Column("r5", "recall_any@5"), Column("r10", "recall_any@10"), Column("ra10", "recall_all@10"),
                Column("mrr", "mrr"), Column("ndcg10", "ndcg@10"), Column("p50", "latency_p50 (ms)"))
#: The reference system's held-split runs (``make reference-held``), one per main data set: its settings were
#: chosen on the tune split, so its headline number is the held one.
REFERENCE_FILES = ("reference/locomo-held-peers.json", "reference/locomo-sessions-held-peers.json",
                   "reference/longmemeval-shared-held-peers.json", "reference/beam-100k-held-peers.json")


def _rows(doc: CompareResults, systems: list[str]) -> list[tuple[Cell, ...]]:
    """One table row per system: recall_any@5 / recall_any@10 / recall_all@10 / mrr / ndcg@10 and latency_p50 at
    K 10; a run of fewer than the report's minimum of questions (a smoke test, ``report.boards.MIN_QUESTIONS``) has
    none. A held-split run names its split in the data set column."""
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
                    *(Cell(v, fmt_points(v)) for v in (r5["recall_any@{k}"], r10["recall_any@{k}"],
                                                       r10["recall_all@{k}"], r10["mrr"], r10["ndcg@{k}"])),
                    Cell(r10["latency_p50"], fmt_num(r10["latency_p50"]))))
    return out


def _main_rows(results_dir: Path, files: tuple[str, ...], systems: list[str] | None = None) -> tuple:
    rows: list[tuple[Cell, ...]] = []
    for name in files:
        doc = get(results_dir, name, CompareResults)
        if doc is not None:
            rows += _rows(doc, doc.systems if systems is None else systems)
    return tuple(rows)


def main_table(results_dir: Path) -> str:
    """One row per system of each main results file: recall_any@5 / recall_any@10 / recall_all@10 / mrr / ndcg@10,
    latency_p50."""
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
    rows = []
    for level, doc in (("turn", turn), ("session", session)):
        for system in ("memini-keyword", "memini-vector", "memini-hybrid"):
            rows.append([f"{level}, {system.removeprefix('memini-')}", PUBLISHED[(level, system)],
                         _triple(doc, system)])
        if level == "turn":
            rows.append(["turn, hybrid with `-reinforce` (memini's access-count side effect)", "-",
                         _triple(reinforce, "memini-hybrid")])
    return markdown(table_of("LoCoMo:l|published (memini):l|this harness:l", rows))


TEMPORAL_ROWS = (("`-temporal-boost 0` (memini's bench)", ""), ("`-temporal-boost 0.4` (regex)", "-tboost0.4"),
                 ("`-temporal-boost 0.4 -temporal-extractor extended`", "-tboost0.4-tx-extended"))


def temporal_boost(results_dir: Path) -> str:
    """The hybrid with and without the temporal boost, LoCoMo turn level and the shared LongMemEval sample."""
    rows = [[label, *(_triple(get(results_dir, f"{base}.json" if not token else f"{base}{token}-sys-hybrid.json",
                                  CompareResults), "memini-hybrid") for base in ("locomo", "longmemeval-shared"))]
            for label, token in TEMPORAL_ROWS]
    return markdown(table_of("hybrid:l|LoCoMo turn:l|LME sample, shared haystack:l", rows))


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
    rows = []
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
                cells.append("-" if row is None else f"{fmt_points(row.recall_any_at_1)} / "
                             f"{fmt_points(row.recall_any_at_k)} / {fmt_points(row.mrr)}")
            rows.append([label, *cells])
    return markdown(table_of("|".join(["recall_any@1 / recall_any@5 / mrr:l", *(f"{h}:l" for h in header)]), rows))


def vec_gate(results_dir: Path) -> str:
    """The vector-gate sweep on LoCoMo: the score distributions and every threshold row."""
    doc = get(results_dir, "locomo-vec-gate.json", GateResults)
    if doc is None:
        return _missing("locomo-vec-gate.json")
    dist = doc.distribution
    percentiles = [[f"{side} ({'own group' if side == 'positive' else 'foreign'})",
                    *((dist.get(side, {}).get(f"p{p}", 0.0), fmt_num(dist.get(side, {}).get(f"p{p}", 0.0), 3))
                      for p in (10, 25, 50, 75, 90))] for side in ("positive", "negative")]
    rows = [[(r["threshold"], f"{r['threshold']:.2f}"), (r["pos_recall_any"], fmt_pct(r["pos_recall_any"])),
             (r["neg_injection_rate"], fmt_pct(r["neg_injection_rate"]))] for r in doc.rows]
    return (markdown(table_of("top 1/(1+L2):l|p10:r|p25:r|p50:r|p75:r|p90:r", percentiles)) + "\n"
            + markdown(table_of(f"threshold:r|pos R@{doc.config.get('gate_k', 5)}:r|neg injection:r", rows)))


def board_cells(r: dict) -> list[str]:
    """A quality scoreboard row's cells after its label: durable and episodic recall / MRR, P@3 / P@5, spray and
    injections (``quality.scoreboard``)."""
    return [f"{fmt_pct(r['dur_recall'], 0)} / {r['dur_mrr']:.3f}",
            f"{fmt_pct(r['epi_recall'], 0)} / {r['epi_mrr']:.3f}", f"{r['p3']:.3f} / {r['p5']:.3f}",
            f"{r['spray_q']}/{r['spray_n']}", f"{r['inj_q']}/{r['inj_n']}"]


def quality_table(results_dir: Path) -> str:
    """The recall-quality scoreboard, one row per embedder and config."""
    doc = get(results_dir, "quality.json", QualityResults)
    if doc is None:
        return _missing("quality.json")
    rows = [[f"{b['embedder']}{' rerank' if b.get('mode') == 'rerank' else ''} · {b['label']}",  # cross-encoder rows
             *board_cells(b)] for b in doc.boards]
    return markdown(table_of("embedder · config:l|dur R@k / MRR:l|epi R@k / MRR:l|P@3 / P@5:l|spray q/n:l|inj q/n:l",
                             rows))


def _ranks(ranks: dict) -> str:
    return "[" + ",".join("-" if r is None else str(r) for r in ranks.values()) + "]"


def vetobench_table(results_dir: Path) -> str:
    """Veto recall@1 / @5 of every system on each VetoBench suite, with the rank of each veto."""
    doc = get(results_dir, "vetobench.json", VetoResults)
    if doc is None:
        return _missing("vetobench.json")
    suites = [s["suite"] for s in doc.suites]
    rows = []
    for system in dict.fromkeys(v["system"] for s in doc.suites for v in s["veto"]):
        cells = []
        for s in doc.suites:
            v = next((v for v in s["veto"] if v["system"] == system), None)
            cells.append("-" if v is None else f"{v['veto_recall@1']:.2f} / {v['veto_recall@5']:.2f} "
                         f"{_ranks(v['ranks'])}")
        rows.append([system, *cells])
    return markdown(table_of("|".join(["system:l", *(f"{s} R@1 / R@5 (veto ranks):l" for s in suites)]), rows))


def vetobench_scale(results_dir: Path) -> str:
    """Veto recall@5 of every system at each corpus size of the scale curve."""
    doc = get(results_dir, "vetobench-scale.json", VetoScaleResults)
    if doc is None:
        return _missing("vetobench-scale.json")
    sizes = [p["size"] for p in doc.points]
    systems = list(dict.fromkeys(s["system"] for p in doc.points for s in p["systems"]))
    rows = [[system, *(next((f"{s['veto_recall@5']:.2f}" for s in p["systems"] if s["system"] == system), "-")
                       for p in doc.points)] for system in systems]
    return markdown(table_of("|".join(["system:l", *(f"{size}:r" for size in sizes)]), rows))


def _jsonl(path: Path) -> list[dict]:
    import orjson

    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


EXTRACTOR_FILES = (("LoCoMo (all categories)", *LOCOMO_RERANK), ("LME sample, shared haystack", *LME_RERANK))


def extractor_diff(results_dir: Path) -> str:
    """regex vs extended temporal extractor, per question (the two ``-rerank`` per-question files): questions
    anchored by each, anchors changed, and for how many the temporal0.40 rank of the gold moved up / down."""
    rows = []
    for label, regex_stem, ext_stem in EXTRACTOR_FILES:
        regex_path, ext_path = results_dir / f"{regex_stem}.jsonl", results_dir / f"{ext_stem}.jsonl"
        if not (regex_path.exists() and ext_path.exists()):
            rows.append([label, "-", "-", "-", "-", "-"])
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
        rows.append([label, *(str(n) for n in (sum(r["anchor"] is not None for r in regex.values()),
                                               sum(e["anchor"] is not None for e in ext.values()), changed, up, down))])
    return markdown(table_of("data set:l|anchored (regex):r|anchored (extended):r|anchor changed:r|gold up:r|"
                             "gold down:r", rows))


# memini's published LoCoMo turn-level hybrid at pool depths 30 / 50 / 80 (R@5 / R@10 / MRR), from anchors.md.
PUBLISHED_POOL = {"pool=30": "60.0 / 70.1 / 42.1", "pool=50": "59.8 / 69.8 / 42.6", "pool=80": "59.3 / 69.6 / 42.7"}
SWEEPS = (("LoCoMo turn", "locomo-sweep-pool"), ("LoCoMo session", "locomo-sessions-sweep-pool"),
          ("LoCoMo turn", "locomo-sweep-fusion"), ("LoCoMo session", "locomo-sessions-sweep-fusion"))


def _summary(results_dir: Path, folder: str) -> dict | None:
    import orjson

    path = results_dir / folder / "summary.json"
    return orjson.loads(path.read_bytes()) if path.exists() else None


SWEEP_HEADER = ("cell:l|recall_any@5 / recall_any@10 / mrr:r|Δ recall_any@5 (pp):r|p McNemar (Holm):r|"
                "Δ mrr (pp) [95% CI]:r")


def _sweep_table(phase: dict, published: dict | None = None) -> str:
    """The cells of a sweep phase against its baseline (bold: significant after Holm), in Markdown."""
    sig = {(r["system_a"], normalize(r["metric"])): r for r in phase["significance"]}

    def trio(scores: list[dict]) -> str:
        by_k = {s.k: s for s in map(Score.from_row, scores)}
        r5, r10 = by_k[5], by_k[10]
        return f"{fmt_points(r5['recall_any@{k}'])} / {fmt_points(r10['recall_any@{k}'])} / {fmt_points(r10['mrr'])}"

    extra = [""] if published is not None else []
    rows = [["baseline (defaults)", trio(phase["baseline"]), "", "", "", *extra]]
    for cell in phase["cells"]:
        r5, mrr = sig[(cell["cell"], "recall_any@5")], sig[(cell["cell"], "mrr")]
        rows.append([cell["cell"], trio(cell["scores"]),
                     Cell(r5["delta"], fmt_points(r5["delta"], signed=True), strong=r5["significant"]),
                     f"{r5['p']:.3g} ({r5['p_adjusted']:.3g})",
                     f"{_bold(fmt_points(mrr['delta'], signed=True), mrr['significant'])} "
                     f"{fmt_interval(mrr['ci_low'], mrr['ci_high'])}",
                     *([published.get(cell["cell"], "-")] if published is not None else [])])
    return markdown(table_of(SWEEP_HEADER + ("|memini published:r" if published is not None else ""), rows))


def _bold(text: str, on: bool) -> str:
    """Markdown bold on part of a cell (the rest of a cell in bold comes from its ``strong``)."""
    return f"**{text}**" if on else text


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
        out += [f"**{level}, `-sweep '{summary['config']['sweep']}'`** ({summary['tune']['split']} questions)", "",
                _sweep_table(summary["tune"], published)]
    return "\n".join(out)


def selection(results_dir: Path) -> str:
    """One tune/held selection end to end: the cells on tune, the winner and the baseline on held."""
    summary = _summary(results_dir, "locomo-tune-sweep-fusion")
    if summary is None:
        return _missing("locomo-tune-sweep-fusion/summary.json")
    out = [f"Tune split, {summary['config']['cells']} cells tried, selected by {summary['config']['select']}: "
           f"**{summary['selected']}**", "", _sweep_table(summary["tune"])]
    if summary.get("held"):
        out += ["Held split (the honest number):", "", _sweep_table(summary["held"])]
    return "\n".join(out)


def legs(results_dir: Path) -> str:
    """Is the hybrid ahead of each leg, significantly? (``-significance`` on the main LoCoMo runs.)"""
    rows = []
    for level, name in (("turn", "locomo.json"), ("session", "locomo-sessions.json")):
        doc = get(results_dir, name, CompareResults)
        for r in (doc.raw.get("significance", []) if doc else []):
            if normalize(r["metric"]) not in ("recall_any@5", "recall_any@10", "mrr"):
                continue
            delta = f"{fmt_points(r['delta'], signed=True)} {fmt_interval(r['ci_low'], r['ci_high'])}"
            rows.append([level, r["system_b"].removeprefix("memini-"), r["metric"],
                         (r["mean_a"], fmt_points(r["mean_a"])), (r["mean_b"], fmt_points(r["mean_b"])),
                         (r["delta"], delta), r["test"], (r["p_adjusted"], f"{r['p_adjusted']:.3g}"),
                         "yes" if r["significant"] else "no"])
    return markdown(table_of("level:l|hybrid vs:l|metric:l|hybrid:r|leg:r|Δ (pp) [95% CI]:l|test:l|p (Holm):r|"
                             "significant:c", rows))


PEER_SETS = (("LoCoMo turn level", "locomo"), ("LoCoMo session level", "locomo-sessions"),
             ("LongMemEval sample, shared haystack", "longmemeval-shared"))


PEER_COLUMNS = (Column("system", "system", "left"), Column("r5", "recall_any@5"), Column("r10", "recall_any@10"),
                Column("mrr", "mrr"), Column("ndcg10", "ndcg@10"), Column("p50", "latency_p50 (ms)"),
                Column("p95", "latency_p95 (ms)"), Column("ingest", "ingest ms"),
                Column("vs_hybrid", "vs hybrid: recall_any@5 / mrr", "left"))


def peers(results_dir: Path) -> str:
    """Every system of the side-by-side runs (``<dataset>-peers.json`` and ``-peers-variants.json``), sorted by
    R@5, with latency and ingest time, and whether it differs significantly from memini-hybrid (McNemar on R@5,
    bootstrap on MRR, Holm; from ``-significance`` in the main file)."""
    return side_by_side(results_dir, ("peers", "peers-variants"), "memini-hybrid", "hybrid", PEER_COLUMNS)


PROTOCOL_COLUMNS = (*PEER_COLUMNS[:7], Column("startup", "start-up ms"), PEER_COLUMNS[7],
                    Column("vs_reference", "vs reference: recall_any@5 / mrr", "left"))


def protocol(results_dir: Path) -> str:
    """The memory servers over MCP (``<dataset>-protocol.json``) beside the in-process systems, as ``peers``, with
    the server start-up (the load column) apart from the ingest's writes, each against the reference."""
    return side_by_side(results_dir, ("protocol",), "reference", "reference", PROTOCOL_COLUMNS, startup=True)


def side_by_side(results_dir: Path, suffixes: tuple[str, ...], reference: str, short: str,
                 columns: tuple[Column, ...], *, startup: bool = False) -> str:
    """One table per data set of ``PEER_SETS`` from ``<base>-<suffix>.json`` (see ``peers``)."""
    out = []
    for title, base in PEER_SETS:
        docs = [d for d in (get(results_dir, f"{base}-{s}.json", CompareResults) for s in suffixes)
                if d is not None]
        if not docs:
            out.append(_missing(f"{base}-{suffixes[0]}.json"))
            continue
        sig = {(r["system_b"], normalize(r["metric"])): r for r in docs[0].raw.get("significance", [])}
        rows = [(doc, s) for doc in docs for s in doc.systems if doc.score(s, 5) and doc.score(s, 10)]
        rows.sort(key=lambda pair: -pair[0].score(pair[1], 5)["recall_any@{k}"])
        questions = rows[0][0].score(rows[0][1], 10).questions if rows else 0
        body = []
        for doc, system in rows:
            r5, r10 = doc.score(system, 5), doc.score(system, 10)
            tests = []
            for metric in ("recall_any@5", "mrr"):
                r = sig.get((system, metric))
                if r is not None:
                    verdict = (f"{short} ahead" if r["delta"] > 0 else "peer ahead") if r["significant"] else "n.s."
                    tests.append(f"{verdict} (p {r['p_adjusted']:.2g})")
            verdict = " / ".join(tests) if tests else ("reference" if system == reference else "-")
            p50, p95 = r10["latency_p50"], r10["latency_p95"]
            figures = (r5["recall_any@{k}"], r10["recall_any@{k}"], r10["mrr"], r10["ndcg@{k}"])
            load = [Cell(r10.model_load_ms, fmt_num(r10.model_load_ms, 0))] if startup else []
            ingest = r10.store_ingest_ms if startup else r10.ingest_ms
            body.append((Cell(system, system), *(Cell(v, fmt_points(v)) for v in figures),
                         Cell(p50, fmt_num(p50)), Cell(p95, fmt_num(p95)), *load,
                         Cell(ingest, fmt_num(ingest, 0)), Cell(verdict, verdict)))
        out += [f"**{title}** ({questions} questions, {docs[0].config.get('embed_model', '')})", "",
                render_table(Table(columns, tuple(body)), "md")]
    return "\n".join(out)


#: The corrections suite's run (``-suite corrections``, docs/temporal.md): its per-system table at the smallest K.
CORRECTIONS_FILE = "corrections-peers.json"
#: (kind, metric family, header): the scores of ``evaluation.corrections.COLUMNS``, in its order.
CORRECTIONS_SCORES = tuple((kind, family, header) for kind, family, header, _ in COLUMNS)


def _with_interval(score: dict | None) -> Cell:
    """A score's mean as a percent with its 95% bootstrap interval (left out when it is one point); ``-``."""
    if score is None:
        return Cell(None, "-")
    low, high = score["ci_low"], score["ci_high"]
    text = fmt_pct(score["mean"]) + ("" if low == high else f" [{low * 100:.1f}, {high * 100:.1f}]")
    return Cell(score["mean"], text)


def _of(done: int, undone: int) -> Cell:
    total = done + undone
    return Cell(done, f"{done}/{total}" if total else "-")


def corrections(results_dir: Path) -> str:
    """The corrections suite (``corrections-peers.json``): ``corrections_table``."""
    return corrections_table(results_dir, CORRECTIONS_FILE)


#: LongMemEval's knowledge-update questions through ``-suite corrections`` (docs/temporal.md).
CORRECTIONS_LONGMEMEVAL_FILE = "longmemeval-corrections-shared-turns-knowledge-update.json"


def corrections_longmemeval(results_dir: Path) -> str:
    """LongMemEval's knowledge-update questions as fact histories: ``corrections_table``, then the loader's notes
    (what it built, what it left out and why)."""
    table = corrections_table(results_dir, CORRECTIONS_LONGMEMEVAL_FILE)
    doc = get(results_dir, CORRECTIONS_LONGMEMEVAL_FILE, CompareResults)
    notes = doc.config.get("notes") if doc is not None else None
    lines = json.loads(notes) if isinstance(notes, str) else list(notes or [])
    if not lines:
        return table
    return table.rstrip("\n") + "\n\nThe loader's notes:\n\n" + "".join(f"- {line}\n" for line in lines)


def corrections_table(results_dir: Path, name: str) -> str:
    """A ``-suite corrections`` results file: per system, current R@K, stale above@K, resurrected, as-of R@K and
    other value above@K (smallest K) with their 95% bootstrap intervals, and the forgets honoured and updates made
    natively (the write costs are left out: they depend on the machine); a column no row fills (a kind the file
    does not ask) is left out."""
    doc = get(results_dir, name, CompareResults)
    section = doc.raw.get("corrections") if doc is not None else None
    if not section or not section.get("scores"):
        return _missing(name)
    k = min(section["scores"], key=int)
    columns = (Column("system", "system", "left"),
               *(Column(f"{kind} {family}", header.format(k=k)) for kind, family, header in CORRECTIONS_SCORES),
               Column("forgets", "forgets honoured"), Column("updates", "updates native"))
    rows = []
    for system, scores in section["scores"][k].items():
        found = {(s["kind"], s["metric"].split("@")[0]): s for s in scores}
        writes = section["writes"].get(system, {})
        rows.append((Cell(system, system),
                     *(_with_interval(found.get((kind, family))) for kind, family, _ in CORRECTIONS_SCORES),
                     _of(writes.get("forgets_honoured", 0), writes.get("forgets_unhonoured", 0)),
                     _of(writes.get("updates_native", 0), writes.get("updates_fallback", 0))))
    counts = {}
    for scores in section["scores"][k].values():
        for s in scores:
            counts.setdefault(f"{s['kind']} {s['metric'].split('@')[0]}", s["questions"])
    head = (f"K={k}, {doc.config.get('embed_model', '')}; N: " + ", ".join(f"{key} {n}" for key, n in counts.items()))
    shown = [j for j, _ in enumerate(columns) if any(row[j].text != "-" for row in rows)]  # no kind asked: no column
    table = Table(tuple(columns[j] for j in shown), tuple(tuple(row[j] for j in shown) for row in rows))
    return f"{head}\n\n" + render_table(table, "md")


#: The time-ordered protocol's run on LoCoMo (``-protocol time-ordered``, docs/temporal.md).
TIME_ORDERED_FILE = "locomo-time-ordered.json"
TIME_ORDERED_COLUMNS = (Column("system", "system", "left"), Column("k", "K"),
                        Column("usual", "usual recall_any@K"), Column("time_ordered", "time-ordered recall_any@K"),
                        Column("delta", "delta (points)"), Column("usual_mrr", "usual mrr"),
                        Column("time_ordered_mrr", "time-ordered mrr"))


def time_ordered(results_dir: Path) -> str:
    """The usual protocol and time-ordered on the same LoCoMo questions (``locomo-time-ordered.json``): per system
    and K, recall_any@K and MRR under both with the paired difference (95% bootstrap interval); then the drift
    curve, recall_any@K (the smallest K) by the number of items the question's group held when it was asked."""
    doc = get(results_dir, TIME_ORDERED_FILE, CompareResults)
    section = doc.raw.get("time_ordered") if doc is not None else None
    if not section or not section.get("protocols"):
        return _missing(TIME_ORDERED_FILE)
    records = section["protocols"]
    rows = tuple((Cell(r["system"], r["system"]), Cell(r["k"], str(r["k"])), Cell(r["usual"], fmt_pct(r["usual"])),
                  Cell(r["time_ordered"], fmt_pct(r["time_ordered"])),
                  Cell(r["delta"], f"{fmt_points(r['delta'], signed=True)} {fmt_interval(r['ci_low'], r['ci_high'])}"),
                  Cell(r["usual_mrr"], fmt_pct(r["usual_mrr"])),
                  Cell(r["time_ordered_mrr"], fmt_pct(r["time_ordered_mrr"]))) for r in records)
    systems = list(dict.fromkeys(r["system"] for r in records))
    k = min(r["k"] for r in records)
    columns = [Column("history", "history (items)", "left"), Column("n", "N")]
    for system in systems:
        short = system.removeprefix("memini-")
        columns += [Column(f"{system}:usual", f"{short} usual"), Column(f"{system}:ordered", f"{short} time-ordered")]
    curve = []
    for b in section.get("drift", []):
        row = [Cell(f"{b['history_min']}-{b['history_max']}", f"{b['history_min']}-{b['history_max']}"),
               Cell(b["questions"], str(b["questions"]))]
        for system in systems:
            pair = b.get(system) or {}
            row += [Cell(pair.get("usual"), fmt_pct(pair.get("usual"))),
                    Cell(pair.get("time_ordered"), fmt_pct(pair.get("time_ordered")))]
        curve.append(tuple(row))
    return (f"**{doc.dataset}** ({records[0]['questions']} questions, {doc.config.get('embed_model', '')})\n\n"
            + render_table(Table(TIME_ORDERED_COLUMNS, rows), "md") + "\n"
            + f"Drift: recall_any@{k} by history length\n\n" + render_table(Table(tuple(columns), tuple(curve)), "md"))
