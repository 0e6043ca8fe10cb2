"""The static site: Jinja2 templates (``memini_bench/report/templates``) rendered into DIR with the page script and
style copied beside them. Nothing is fetched at view time: data sit inline as JSON, figures as inline SVG, receipts
as script files under DIR (``receipts``).

Pages: ``index.html`` (the boards: ``boards``, with published claims: ``claims``), ``runs.html`` (every run of every
file, sortable), ``ds-<data set>.html`` (significance matrices, category bars, recall against latency with its
Pareto front, sweeps), ``receipts-<data set>.html`` (per-question receipts and the failure browser; only where
per-question files were given), ``vetobench.html``, ``corrections.html`` (every ``-suite corrections`` run, per
question kind: ``report.corrections``), ``qa.html`` (each QA results file's loss-attribution table, through the
table model's HTML renderer: every name escaped) and ``provenance.html``.

Bounds: a data set with more than ``MAX_CHARTED_SYSTEMS`` rows gets no figures (recall against latency, category
bars) and no significance matrices, only the leaderboard's rows and a line saying why (matplotlib's time grows
with every bar and label: about 9 minutes for 1,000 systems on a busy 2-core machine). Inline JSON escapes
``<``, ``>``, ``&`` and the two JavaScript line separators as ``\\uXXXX``, so no name can close the script element or
open an HTML comment (``</script``, ``<!--``).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import orjson

from memini_bench.core.metrics import normalize
from memini_bench.core.registry import require_extra
from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_points, html_text
from memini_bench.errors import BenchError
from memini_bench.evaluation.stats import ALPHA
from memini_bench.report import boards, claims, corrections, model, plots, receipts, tables
from memini_bench.report.collect import Inputs, Source
from memini_bench.results.atomic_io import atomic_write
from memini_bench.results.loss_table import loss_table
from memini_bench.results.schema import Score

#: A data set with more rows (system, file) than this gets no figures or matrices (module docstring).
MAX_CHARTED_SYSTEMS = 50
_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028",
                 0x2029: "\\u2029"}


def script_json(value: object) -> str:
    """``value`` as JSON safe inside ``<script>`` (module docstring): the same JSON to a parser."""
    return orjson.dumps(value).decode().translate(_JSON_ESCAPES)


def slug(name: str) -> str:
    return re.sub(r"[^\w.+-]+", "_", name) or "_"


def _env():
    require_extra("memini-bench report", "report", "jinja2")
    import jinja2

    loader = jinja2.FileSystemLoader(str(resources.files("memini_bench.report") / "templates"))
    env = jinja2.Environment(loader=loader, autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson_script"] = script_json
    return env


def _write(path: Path, text: str) -> None:
    atomic_write(path, lambda w: w(text.encode()))


def leaderboard_data(inputs: Inputs) -> dict:
    rows = model.rows(inputs)
    return {"ks": model.ks_of(rows),
            "metrics": [{"key": c.key, "label": c.label, "perK": c.per_k, "higher": c.higher, "pct": c.pct}
                        for c in model.metric_columns(rows)],
            "rows": [{"dataset": r.dataset, "slug": slug(r.dataset), "system": r.system, "file": r.file,
                      "source": r.source, "questions": r.questions, "embedder": r.embedder,
                      "byK": {str(k): v for k, v in r.by_k.items()}} for r in rows]}


SPLITS = {"held": "held split", "full": "full set", "tune": "tune split"}
MARKS = {"best": "best", "tied": "not significantly different from best", "behind": "significantly behind",
         "ahead": "significantly ahead on the questions both answered", "untested": "untested"}
#: Embedders as the boards name them, in words (others as they are).
EMBEDDERS = {"minilm": "MiniLM", "mpnet": "mpnet", "e5-small": "e5-small", "": "none"}


def embedder_label(name: str) -> str:
    return EMBEDDERS.get(name, name)


def board_columns(b) -> list[str]:
    """A board's metric columns, by registered name: recall_any@5, recall_any@K, mrr, ndcg@K, latency_p50 (the
    primary metric among them)."""
    return list(dict.fromkeys(["recall_any@5", f"recall_any@{b.k}", b.primary, "mrr", f"ndcg@{b.k}",
                               "latency_p50"]))


def _cells(row, columns: list[str]) -> dict[str, str]:
    return {c: fmt_num(row.score(c)) if c.startswith("latency") else fmt_points(row.score(c)) for c in columns}


def _board_row(r, b, columns: list[str]) -> dict:
    test = r.test
    title = ""
    if test:
        how = "McNemar" if test.get("test") == "mcnemar" else "paired bootstrap"
        title = (f"{b.primary}: {fmt_points(test['delta'], signed=True)} pp against {b.leader.name} on "
                 f"{test['questions']} questions (leader higher on {test['only_leader']}, this row higher on "
                 f"{test['only_row']}); {how} p {test['p']:.2g}, Holm-adjusted {test['p_adjusted']:.2g}")
    return {"name": r.name, "mark": r.mark, "mark_label": MARKS.get(r.mark, r.mark), "test": test,
            "test_title": title or r.untested, "untested": r.untested, "cells": _cells(r, columns),
            "questions": r.questions, "split": SPLITS[boards.split_of(r.source)], "file": r.source.name,
            "source": r.source.index, "note": r.note}


def boards_data(inputs: Inputs, receipt_slugs: dict[str, str], all_boards: list | None = None) -> dict:
    """The index: every board (``boards``) with its rows, marks, claims (``claims``) and receipts link, and each
    of its tables rendered through the table model (``tables``); the overview's groups (a data set, protocol and
    split, its embedders' boards, MiniLM first) and the best row per embedder; the claims page's lines."""
    all_boards = boards.build_boards(inputs) if all_boards is None else all_boards
    lines = claims.verdicts(claims.load(), all_boards)
    by_board = claims.for_boards(lines)
    out = []
    for b in all_boards:
        columns = board_columns(b)
        tuned = ", ".join(b.tuned)
        split_note = (f"Held split: the tune split's questions, on which the settings of {tuned} were chosen, are "
                      "left out; every row here ran on the same held questions.") if b.split == "held" else ""
        datasets = {r.source.dataset for r in b.rows + b.apart}
        slug_ = next((receipt_slugs[d] for d in sorted(datasets) if d in receipt_slugs), "")
        leader = b.leader
        out.append({"key": b.key, "group": b.group, "slug": b.slug, "title": b.title, "questions": b.questions,
                    "embedder": b.embedder, "embedder_label": embedder_label(b.embedder),
                    "split_label": SPLITS[b.split], "split_note": split_note, "smoke": b.smoke,
                    "primary": b.primary, "metric_note": b.metric_note, "columns": columns,
                    "leader": leader.name if leader else "",
                    "leader_value": _cells(leader, columns)[b.primary] if leader else "",
                    "tied": [r.name for r in b.tied], "tested": len(b.tested),
                    "behind": len([r for r in b.rows if r.mark == "behind"]),
                    "untested": [r.name for r in b.untested_rows],
                    "rows": [_board_row(r, b, columns) for r in b.rows],
                    "apart": [_board_row(r, b, columns) for r in b.apart], "claims": by_board.get(b.key, []),
                    "receipts": slug_, "pages": [(d, slug(d)) for d in sorted(datasets)]})
    tuned_all = sorted({t for b in all_boards for t in b.tuned})
    return tables.attach({
        "boards": out, "min": boards.MIN_QUESTIONS, "tuned": ", ".join(tuned_all), "claims": lines,
        "embedders": [embedder_label(e) for e in sorted({b.embedder for b in all_boards}, key=boards.embedder_order)],
        "footnote": "exact McNemar test (recall_any@K) or paired bootstrap (mrr) on the primary metric over the "
                    "questions both runs answered, from the per-question records, Holm-adjusted across the board "
                    f"(alpha {ALPHA}): best, not significantly different from best, or significantly behind. A row "
                    "without records for it or the leader is untested: counted apart, never as behind."})


def sig_matrix(source: Source, metric: str) -> dict:
    """Systems x systems for one metric: each tested cell's delta (row minus column), Holm p and significance;
    only the systems some test of ``metric`` involves."""
    lookup = model.sig_lookup(source)
    tested = {s for (a, b, m) in lookup if m == metric for s in (a, b)}
    systems = [s for s in source.results.systems if s in tested]
    cells = [[lookup.get((a, b, metric)) if a != b else None for b in systems] for a in systems]
    out = {"metric": metric, "systems": systems, "cells": cells}
    return {**out, "html": html_text(tables.sig_grid(out))}


def sig_list(source: Source, metric: str) -> dict:
    """A metric's tests when they all share one system (the run's reference against each other): one line per
    test, the shared system first, instead of a grid with a single filled row."""
    tests = [r for r in model.significance(source) if r["metric"] == metric]
    centre = _centre(tests) or tests[0]["system_a"]
    rows = []
    for r in tests:
        flip = r["system_a"] != centre
        rows.append({**r, "system_a": centre, "system_b": r["system_a"] if flip else r["system_b"],
                     "delta": -r["delta"] if flip else r["delta"],
                     "ci_low": -r["ci_high"] if flip else r["ci_low"],
                     "ci_high": -r["ci_low"] if flip else r["ci_high"]})
    out = {"metric": metric, "centre": centre, "rows": rows}
    return {**out, "html": html_text(tables.sig_list(out))}


def _centre(tests: list[dict]) -> str | None:
    """The system every test involves, when there is one and there are several tests (a star, not a grid)."""
    if not tests:
        return None
    common = set.intersection(*({r["system_a"], r["system_b"]} for r in tests))
    return sorted(common)[0] if len(common) == 1 or len(tests) == 1 else None


def _sig_blocks(source: Source) -> tuple[list[dict], list[dict]]:
    """(grids, lists): a grid for a metric whose tests form more than one pair and no star, else a list."""
    grids, lists = [], []
    for metric in dict.fromkeys(r["metric"] for r in model.significance(source)):
        tests = [r for r in model.significance(source) if r["metric"] == metric]
        if len(tests) > 1 and _centre(tests) is None:
            grids.append(sig_matrix(source, metric))
        else:
            lists.append(sig_list(source, metric))
    return grids, lists


def pareto_points(rows: list[model.Row], k: int) -> list[tuple[str, float, float]]:
    """(label, p50 ms, R@k) of each row that has R@k: the system's name, with its file where the name repeats."""
    shown = [r for r in rows if r.value("recall_any@K", k) is not None]
    names = [r.system for r in shown]
    return [(r.system if names.count(r.system) == 1 else f"{r.system} ({r.file.removesuffix('.json')})",
             r.value("latency_p50", k) or 0.0, r.value("recall_any@K", k)) for r in shown]


#: Recall against latency on a board shows its top ``PARETO_TOP`` rows by the primary metric, plus these when on
#: the board (memini's and the reference); the other rows are listed in a table under the figure.
PARETO_TOP = 12
ALWAYS_PLOTTED = ("reference", "memini-hybrid", "memini-keyword", "memini-vector")
#: The category heatmap shows at most this many rows (the board's order: ranked by the primary metric, then apart).
HEATMAP_ROWS = 60


def plotted_rows(board) -> tuple[list, list]:
    """(shown, rest) of a board's rows with the primary metric and a latency: the top ``PARETO_TOP`` by the
    primary metric plus ``ALWAYS_PLOTTED``, and the others (both in the primary metric's order)."""
    rows = sorted((r for r in board.rows + board.apart if r.score(board.primary) is not None),
                  key=lambda r: (-(r.score(board.primary) or 0.0), r.name))
    shown = [r for i, r in enumerate(rows) if i < PARETO_TOP or r.name in ALWAYS_PLOTTED]
    return shown, [r for r in rows if r not in shown]


def _category_metric(board) -> str:
    return board.primary if board.primary.startswith("recall_any@") else f"recall_any@{board.k}"


def heatmap_rows(board) -> tuple[str, list[tuple[str, float | None, dict[str, float], dict[str, int]]]]:
    """(metric, rows) of a board's category heatmap: each row's categories at the metric (the primary metric
    when it is recall_any@K, else recall_any@K at the board's K), from its results file."""
    metric = _category_metric(board)
    k = int(metric.split("@")[1])
    out = []
    for r in (board.rows + board.apart)[:HEATMAP_ROWS]:
        score = next((sc for sc in r.source.results.scores if sc.system == r.system and sc.k == k), None)
        if score is None:
            continue
        values = score.category(metric)
        if values:
            out.append((r.name, r.score(metric), values, dict(score.per_category_questions)))
    return metric, out


def board_figures(board) -> dict:
    """A board's figures on its data set page: the category heatmap and recall against latency (``plotted_rows``),
    with the rows left out of the plot in a table."""
    title = f"{board.title} ({SPLITS[board.split]}, {embedder_label(board.embedder)})"
    metric, rows = heatmap_rows(board)
    labels = next((r.source.results.config.get("category_labels") for r in board.rows + board.apart
                   if r.source.results.config.get("category_labels")), {}) or {}
    shown, rest = plotted_rows(board)
    points = [(r.name, r.score("latency_p50") or 0.0, r.score(board.primary)) for r in shown]
    more = len(board.rows) + len(board.apart) - len(rows)
    return {"key": board.key, "slug": board.slug, "title": title, "primary": board.primary,
            "heatmap": plots.category_heatmap(rows, labels, metric, title) if rows else "",
            "heatmap_note": f"{more} more rows on the board are not drawn" if more > 0 and len(rows) == HEATMAP_ROWS
            else "",
            "pareto": plots.pareto_plot(points, board.k, f"{title}: {board.primary} against p50 latency",
                                        board.primary) if points else "",
            "shown": len(shown), "rest": html_text(tables.pareto_rest([
                {"name": r.name, "value": r.score(board.primary), "p50": r.score("latency_p50"),
                 "questions": r.questions} for r in rest], board.primary)) if rest else ""}


def dataset_page(inputs: Inputs, dataset: str, all_boards: list | None = None) -> dict:
    sources = [s for s in inputs.sources if s.dataset == dataset]
    rows = [r for r in model.rows(inputs) if r.dataset == dataset]
    k = max(model.ks_of(rows))
    all_boards = boards.build_boards(inputs) if all_boards is None else all_boards
    figures = [board_figures(b) for b in all_boards
               if not b.smoke and any(r.source.dataset == dataset for r in b.rows + b.apart)]
    sweeps = [sweep_figure(d, k) for d in inputs.sweeps if _sweep_dataset(d) == dataset]
    page = {"dataset": dataset, "slug": slug(dataset), "k": k, "boards": figures,
            "sweeps": [s for s in sweeps if s], "omitted": ""}
    if len(rows) > MAX_CHARTED_SYSTEMS:
        return {**page, "blocks": [{"source": s, "matrices": [], "lists": []} for s in sources],
                "omitted": f"{len(rows):,} systems: no significance matrices above {MAX_CHARTED_SYSTEMS}; the "
                           "boards test every row against their leader."}
    blocks = []
    for s in sources:
        grids, lists = _sig_blocks(s)
        blocks.append({"source": s, "matrices": grids, "lists": lists})
    return {**page, "blocks": blocks}


def _sweep_dataset(doc) -> str:
    base = doc.raw.get("tune", {}).get("baseline") or [{}]
    return str(base[0].get("dataset", ""))


def sweep_figure(doc, k: int) -> dict | None:
    tune = doc.raw.get("tune", {})
    metric = f"recall_any@{k}"
    tests = {r["system_a"]: r for r in tune.get("significance", []) if r.get("system_b") == "baseline"
             and normalize(str(r.get("metric"))) == metric}
    cells = []
    for cell in tune.get("cells", []):
        score = next((s for s in cell.get("scores", []) if s.get("k") == k), None)
        test = tests.get(cell.get("cell"))
        if score is None or test is None:
            continue
        cells.append({"label": cell["cell"], "value": Score.from_row(score)["recall_any@{k}"], "delta": test["delta"],
                      "ci_low": test["ci_low"], "ci_high": test["ci_high"], "significant": test["significant"]})
    if not cells:
        return None
    selected = doc.raw.get("selected") or ""
    title = f"{doc.path.parent.name}: recall_any@{k}, difference to the baseline with its paired 95% interval"
    return {"name": doc.path.parent.name, "svg": plots.sweep_heatmap(cells, title, selected),
            "selected": selected}


def build(inputs: Inputs, out: Path) -> list[Path]:
    """Render every page into ``out``; returns the pages written."""
    if out.exists() and not out.is_dir():
        raise BenchError(f"-o {out}: exists and is not a folder; choose a folder")
    env = _env()
    pkg = resources.files("memini_bench.report") / "templates"
    for asset in ("report.js", "report.css"):
        _write(out / asset, (pkg / asset).read_text())
    scored = {r.dataset for r in model.rows(inputs)}  # a run over time (-suite corrections) has no scored rows
    datasets = [ds for ds in dict.fromkeys(s.dataset for s in inputs.sources) if ds in scored]
    receipt_pages = {}
    for ds in datasets:
        with_runs = [s for s in inputs.sources if s.dataset == ds and s.runs]
        if with_runs:
            k = max(max(s.results.config.get("ks") or [10]) for s in with_runs)
            receipt_pages[ds] = receipts.build(with_runs, out, slug(ds), k, keep=boards.newest_runs(with_runs))
    corrections_runs = corrections.page(inputs.sources)
    nav = {"datasets": [(ds, slug(ds)) for ds in datasets], "receipts": [(ds, slug(ds)) for ds in receipt_pages],
           "veto": bool(inputs.veto), "qa": bool(inputs.qa), "corrections": bool(corrections_runs)}
    pages = []

    def page(name: str, template: str, **ctx) -> None:
        _write(out / name, env.get_template(template).render(nav=nav, **ctx))
        pages.append(out / name)

    all_boards = boards.build_boards(inputs)
    board_data = boards_data(inputs, {ds: slug(ds) for ds in receipt_pages}, all_boards)
    page("index.html", "index.html.j2", title="Leaderboards", boards=board_data, skipped=inputs.skipped)
    counts = [(v, sum(1 for line in board_data["claims"] if line["verdict"] == v)) for v in claims.VERDICTS]
    page("claims.html", "claims.html.j2", title="Published claims and their verdicts",
         table=board_data["claims_html"], counts=counts)
    runs = leaderboard_data(inputs)
    page("runs.html", "runs.html.j2", title="All runs", data=runs, table=html_text(tables.runs(runs["metrics"])),
         skipped=inputs.skipped)
    for ds in datasets:
        page(f"ds-{slug(ds)}.html", "dataset.html.j2", title=ds, d=dataset_page(inputs, ds, all_boards),
             receipts=receipt_pages.get(ds))
    for ds, summary in receipt_pages.items():
        page(f"receipts-{slug(ds)}.html", "receipts.html.j2", title=f"{ds}: receipts", dataset=ds,
             slug=slug(ds), summary=summary)
    if corrections_runs:
        page("corrections.html", "corrections.html.j2", title="Corrections: memory written over time",
             runs=corrections_runs, floors=", ".join(corrections.FLOORS))
    if inputs.veto:
        page("vetobench.html", "vetobench.html.j2", title="VetoBench", veto=veto_page(inputs))
    if inputs.qa:
        page("qa.html", "qa.html.j2", title="QA: accuracy, and where the wrong answers were lost",
             qa=qa_page(inputs))
    page("provenance.html", "provenance.html.j2", title="Provenance",
         sources=[{**model.provenance(s), "config_json": orjson.dumps(s.results.config,
                                                                     option=orjson.OPT_INDENT_2).decode()}
                  for s in inputs.sources])
    return pages


def veto_page(inputs: Inputs) -> list[dict]:
    out = []
    for doc in inputs.veto:
        points = doc.raw.get("points")
        if points:
            metrics = [m for m in ("veto_recall@1", "veto_recall@5") if any(
                m in s for p in points for s in p.get("systems", []))]
            out.append({"file": doc.path.name, "svgs": [plots.veto_curve(points, m) for m in metrics],
                        "table": None})
        else:
            out.append({"file": doc.path.name, "svgs": [], "table": html_text(veto_table(doc.raw.get("suites") or []))})
    return out


def veto_table(suites: list[dict]) -> Table:
    """``vetobench.json``'s veto recall per suite and system, through the table model."""
    cols = (Column("suite", "suite", "left"), Column("system", "system", "left"),
            Column("veto_recall@1", "veto_recall@1", better="higher"),
            Column("veto_recall@5", "veto_recall@5", better="higher"))
    body = tuple((Cell(suite.get("suite"), str(suite.get("suite", ""))),
                  Cell(r.get("system"), str(r.get("system", ""))),
                  *(Cell(r.get(m), fmt_points(r.get(m))) for m in ("veto_recall@1", "veto_recall@5")))
                 for suite in suites for r in suite.get("veto", []))
    return Table(cols, body, notes=("Veto recall in percent: the share of the suite's trap scenarios whose veto "
                                    "decision is in the system's top 1 (top 5). N: each suite's scenarios. No marks.",))


def qa_page(inputs: Inputs) -> list[dict]:
    """Per QA results file: its data set, the accuracy per run and judge with its interval
    (``tables.qa_accuracy``), and the loss-attribution table as HTML (``core.table.html_text`` escapes
    every arm and category name), or why there is none (blocks checked by ``collect.check_losses``)."""
    out = []
    for doc in inputs.qa:
        block = doc.raw.get("losses")
        results = doc.raw.get("results") if isinstance(doc.raw.get("results"), list) else []
        accuracy = tables.qa_accuracy(doc.config, results)
        out.append({"file": doc.path.name, "dataset": str(doc.config.get("dataset") or ""),
                    "accuracy": html_text(accuracy) if accuracy.rows else "",
                    "table": html_text(loss_table(block)) if block else "",
                    "why": "" if block else "no loss attribution in this file (written before -qa recorded it, or "
                                            "no wrong answer)"})
    return out
