"""The leaderboard as a table: ``report -format md|csv|latex|html|json``, built once (``leaderboard``: the one table
model of ``core.table``) and rendered by its renderers.

- ``md``: the README's results table (``| data set | questions | system | embedder | recall_any@5 | recall_any@10 |
  recall_all@10 | mrr | ndcg@10 | latency_p50 (ms) |``, the registered names): recall_any@K for every K of the inputs,
  then recall_all, mrr (at the run's largest K) and ndcg at the table's K (the
  largest K unless given), percentages to one decimal, p50 to two. Given the README's four main files it is the
  README's table, byte for byte (a test holds it to the committed README block).
- ``csv``: one line per (file, system, K) with every metric at full precision and the file's provenance.
- ``latex``: a booktabs ``tabular`` of data set, system, the identity columns its rows need to be told
  apart (embedder, questions, file: ``identity_columns``) and the metric columns; per data set the best
  value of each column is bold (highest recall/MRR/nDCG, lowest p50), a dagger marks a value whose
  difference to that best is significant by the file's own paired test (Holm-adjusted p < alpha), a degree
  sign one that no test compares with that best (another file, or a pair the file did not test); the table's
  own footnote (comment lines) states N per data set and what bold and each mark mean.
- ``html``: the same table with its marks and notes as an HTML ``<table>``.
- ``json``: the rows (every metric at every K) and the provenance of every file.
"""

from __future__ import annotations

import orjson

from memini_bench.core.metrics import at_k, paired_metrics
from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_points, tex_escape
from memini_bench.core.table import render as render_table
from memini_bench.errors import BenchError
from memini_bench.report import model
from memini_bench.report.collect import Inputs

__all__ = ["FORMATS", "MARKS", "columns", "csv_text", "export", "html", "json_text", "latex", "leaderboard",
           "markdown", "table_k", "tex_escape"]

FORMATS = ("md", "csv", "latex", "html", "json")


def columns(ks: list[int], k: int) -> list[tuple[str, str, int]]:
    """(header, metric column ``report.model`` keys it by, K) of the table: recall_any@K per K, then recall_all@k,
    mrr, ndcg@k and latency_p50 at ``k``, each headed by its registered name (latency in ms)."""
    return ([(f"recall_any@{x}", "recall_any@K", x) for x in ks]
            + [(f"recall_all@{k}", "recall_all@K", k), ("mrr", "mrr", k), (f"ndcg@{k}", "ndcg@K", k),
               ("latency_p50 (ms)", "latency_p50", k)])


def table_k(rows: list[model.Row], k: int | None) -> tuple[list[int], int]:
    ks = model.ks_of(rows)
    if not ks:
        raise BenchError("report: the inputs hold no scored rows")
    if k is None:
        return ks, ks[-1]
    if k not in ks:
        raise BenchError(f"-k {k}: the inputs were scored at K = {', '.join(map(str, ks))}; pick one of them")
    return ks, k


def _text(metric: str, value: float | None) -> str:
    return fmt_points(value) if model.column_of(metric).pct else fmt_num(value)


#: What the marks of the leaderboard table mean (its notes say it under every table).
MARKS = {"†": "differs from the best of its column and data set by its file's own paired test (McNemar for "
              "recall_any@K, paired bootstrap for mrr and ndcg@K; Holm-adjusted p < alpha)",
         "°": "no paired test of this value against that best (another file, or a pair its file did not test): "
              "no claim either way"}


def leaderboard(inputs: Inputs, k: int | None = None, *, grouped: bool = False, with_file: bool = False) -> Table:
    """The leaderboard as one table: per row (file, system) its data set, questions, system, embedder and the
    ``columns`` at K; per data set the best of each column (by printed value: ties all best), a ``†`` where the
    file's paired test separates a value from that best, a ``°`` where no test of the pair exists (a value without
    a mark was tested and not found different; p50 is never tested). The notes state N per data set and the marks.
    ``grouped``: each data set's rows together (in the order data sets first appear), a group per data set;
    ``with_file``: a ``file`` column after the embedder (the results file's name)."""
    rows = model.rows(inputs)
    ks, k = table_k(rows, k)
    cols = columns(ks, k)
    higher = {metric: model.column_of(metric).higher for _, metric, _ in cols}
    sig = {s.index: model.sig_lookup(s) for s in inputs.sources}
    cover = covered(sig, ks)
    head = [Column("dataset", "data set", "left"), Column("questions", "questions"), Column("system", "system", "left"),
            Column("embedder", "embedder", "left")] + ([Column("file", "file", "left")] if with_file else [])
    head += [Column(at_k(metric, kk), header, better="higher" if higher[metric] else "lower")
             for header, metric, kk in cols]
    datasets = list(dict.fromkeys(r.dataset for r in rows))
    bests = {(ds, metric, kk): model.best_row([r for r in rows if r.dataset == ds], metric, kk, higher[metric])
             for ds in datasets for _, metric, kk in cols}
    if grouped:
        rows = sorted(rows, key=lambda r: datasets.index(r.dataset))  # stable: each data set's rows together
    body, groups = [], []
    for r in rows:
        if body and r.dataset != body[-1][0].value:
            groups.append(len(body))
        cells = [Cell(r.dataset, r.dataset), Cell(r.questions, str(r.questions)), Cell(r.system, r.system),
                 Cell(r.embedder, r.embedder)] + ([Cell(r.file, r.file)] if with_file else [])
        for _, metric, kk in cols:
            value = r.value(metric, kk)
            text = _text(metric, value)
            best = bests[(r.dataset, metric, kk)]
            is_best = best is not None and text != "-" and text == _text(metric, best.value(metric, kk))
            cells.append(Cell(value, text, is_best, () if is_best or best is None or text == "-" else
                              _mark(sig, cover, best, r, metric, kk)))
        body.append(tuple(cells))
    sizes = "; ".join(f"{ds} {max(r.questions for r in rows if r.dataset == ds)}" for ds in datasets)
    notes = (f"N (questions per data set): {sizes}; K = {k}",
             "bold: the best of its column within its data set (ties all bold)",
             *(f"{mark}: {meaning}" for mark, meaning in MARKS.items()),
             "no mark: tested against that best and not significant, or a column no test covers ("
             + ", ".join(h for h, metric, kk in cols if at_k(metric, kk) not in cover) + ")")
    return Table(tuple(head), tuple(body), notes=notes, marks=MARKS, groups=tuple(groups))


def covered(sig: dict, ks: list[int]) -> set[str]:
    """The metric names paired tests cover: those a run tests by default (``core.metrics.paired_metrics``) and any
    other a file's significance rows name."""
    return {m.name for m in paired_metrics(ks)} | {m for lookup in sig.values() for (_, _, m) in lookup}


def _mark(sig: dict, cover: set[str], best: model.Row, row: model.Row, metric: str, k: int) -> tuple[str, ...]:
    name = at_k(metric, k)
    if name not in cover:
        return ()  # a column no test covers
    test = sig[row.source].get((best.system, row.system, name)) if best.source == row.source else None
    if test is None:
        return ("°",)
    return ("†",) if test.get("significant") else ()


def markdown(inputs: Inputs, k: int | None = None) -> str:
    """The README's table: the leaderboard without marks or notes (the README states them in its own text)."""
    return render_table(leaderboard(inputs, k).plain(), "md")


def csv_text(inputs: Inputs) -> str:
    """One line per (file, system, K): every leaderboard metric at full precision and the file's provenance."""
    rows = model.rows(inputs)
    metrics = [c.key for c in model.metric_columns(rows)]
    head = [Column(c, c) for c in ("dataset", "file", "system", "questions", "embedder", "k", *metrics, "git_commit",
                                   "data_sha256")]
    prov = {s.index: model.provenance(s) for s in inputs.sources}
    body = []
    for r in rows:
        for k in sorted(r.by_k):
            p = prov[r.source]
            values = [r.dataset, r.file, r.system, r.questions, r.embedder, k, *(r.by_k[k].get(m) for m in metrics),
                      p["git_commit"], p["data_sha256"]]
            body.append(tuple(Cell(v, "" if v is None else str(v)) for v in values))
    return render_table(Table(tuple(head), tuple(body)), "csv")


def json_text(inputs: Inputs) -> str:
    rows = [{"dataset": r.dataset, "file": r.file, "system": r.system, "questions": r.questions,
             "embedder": r.embedder, "by_k": {str(k): {at_k(m, k): x for m, x in v.items()}
                                              for k, v in sorted(r.by_k.items())}}
            for r in model.rows(inputs)]
    doc = {"rows": rows, "provenance": [{k: v for k, v in model.provenance(s).items() if k != "config"}
                                        for s in inputs.sources]}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


#: The identity columns a row may need beside data set and system, in the order they are added.
IDENTITY = ("embedder", "questions", "file")


def identity_columns(table: Table) -> tuple[str, ...]:
    """The fewest identity columns that tell every row of ``table`` apart: data set and system, then each of
    ``IDENTITY`` in turn that tells more rows apart, until no two rows share them all (two ``memini-hybrid`` rows,
    hash and MiniLM, need the embedder; two runs of one system with other settings, the file)."""
    index = {c.key: i for i, c in enumerate(table.columns)}

    def distinct(keys: list[str]) -> int:
        return len({tuple(r[index[key]].text for key in keys) for r in table.rows})

    keys = ["dataset", "system"]
    for extra in IDENTITY:
        if distinct(keys) == len(table.rows):
            break
        if extra in index and distinct([*keys, extra]) > distinct(keys):  # only a column that tells rows apart
            keys.append(extra)
    return tuple(keys)


def latex(inputs: Inputs, k: int | None = None) -> str:
    """The leaderboard as a booktabs tabular (data set, system, the identity columns its rows need to be told
    apart, ``identity_columns``, and the metric columns), bold best, marks as superscripts, and its notes (N, what
    bold and each mark mean) as comment lines under it."""
    table = leaderboard(inputs, k, grouped=True, with_file=True)
    metrics = tuple(c.key for c in table.columns if c.key not in ("dataset", "questions", "system", *IDENTITY))
    keys = identity_columns(table)
    order = [c.key for c in table.columns if c.key in keys]  # in the table's order: data set, questions, system...
    return render_table(table.only((*order, *metrics)), "latex", source="memini-bench report -format latex")


def html(inputs: Inputs, k: int | None = None) -> str:
    """The leaderboard as an HTML table with its marks and notes."""
    return render_table(leaderboard(inputs, k, grouped=True), "html")


def export(inputs: Inputs, fmt: str, k: int | None = None) -> str:
    if fmt == "md":
        return markdown(inputs, k)
    if fmt == "latex":
        return latex(inputs, k)
    if fmt == "html":
        return html(inputs, k)
    if fmt == "csv":
        return csv_text(inputs)
    if fmt == "json":
        return json_text(inputs)
    raise BenchError(f"-format {fmt}: choose one of {', '.join(FORMATS)}")
