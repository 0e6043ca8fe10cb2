"""The leaderboard as a table: ``report -format md|csv|latex|json``.

- ``md``: the README's results table (``| data set | questions | system | embedder | R@5 | R@10 | RecallAll@10 |
  MRR | nDCG@10 | p50 ms |``): R@K for every K of the inputs, then recall_all, MRR and nDCG at the table's K (the
  largest K unless given), percentages to one decimal, p50 to two. Given the README's four main files it is the
  README's table, byte for byte (a test holds it to the committed README block).
- ``csv``: one line per (file, system, K) with every metric at full precision and the file's provenance.
- ``latex``: a booktabs ``tabular`` of the Markdown columns; per data set the best value of each column is bold
  (highest recall/MRR/nDCG, lowest p50) and a dagger marks a value whose difference to that best is significant
  by the file's own paired test (Holm-adjusted p < alpha); no dagger where the file holds no test of that pair.
- ``json``: the rows (every metric at every K) and the provenance of every file.
"""

from __future__ import annotations

import csv
import io

import orjson

from memini_bench.errors import BenchError
from memini_bench.report import model
from memini_bench.report.collect import Inputs

FORMATS = ("md", "csv", "latex", "json")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f}"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def columns(ks: list[int], k: int) -> list[tuple[str, str, int]]:
    """(header, metric, K) of the table: R@K per K, then RecallAll@k, MRR, nDCG@k and p50 at ``k``."""
    return ([(f"R@{x}", "recall_at_k", x) for x in ks]
            + [(f"RecallAll@{k}", "recall_all_at_k", k), ("MRR", "mrr", k), (f"nDCG@{k}", "ndcg_at_k", k),
               ("p50 ms", "p50_ms", k)])


def table_k(rows: list[model.Row], k: int | None) -> tuple[list[int], int]:
    ks = model.ks_of(rows)
    if not ks:
        raise BenchError("report: the inputs hold no scored rows")
    if k is None:
        return ks, ks[-1]
    if k not in ks:
        raise BenchError(f"-k {k}: the inputs were scored at K = {', '.join(map(str, ks))}; pick one of them")
    return ks, k


def _cell(row: model.Row, metric: str, k: int) -> str:
    value = row.value(metric, k)
    return _ms(value) if metric.endswith("_ms") else _pct(value)


def markdown(inputs: Inputs, k: int | None = None) -> str:
    rows = model.rows(inputs)
    ks, k = table_k(rows, k)
    cols = columns(ks, k)
    lines = ["| data set | questions | system | embedder | " + " | ".join(c[0] for c in cols) + " |",
             "|---|--:|---|---|" + "--:|" * len(cols)]
    for r in rows:
        cells = [_cell(r, metric, kk) for _, metric, kk in cols]
        lines.append(f"| {r.dataset} | {r.questions} | {r.system} | {r.embedder} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def csv_text(inputs: Inputs) -> str:
    buf = io.StringIO()
    metrics = [m[0] for m in model.METRICS]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["dataset", "file", "system", "questions", "embedder", "k", *metrics, "git_commit", "data_sha256"])
    prov = {s.index: model.provenance(s) for s in inputs.sources}
    for r in model.rows(inputs):
        for k in sorted(r.by_k):
            p = prov[r.source]
            w.writerow([r.dataset, r.file, r.system, r.questions, r.embedder, k,
                        *(repr(r.by_k[k][m]) for m in metrics), p["git_commit"], p["data_sha256"]])
    return buf.getvalue()


def json_text(inputs: Inputs) -> str:
    rows = [{"dataset": r.dataset, "file": r.file, "system": r.system, "questions": r.questions,
             "embedder": r.embedder, "by_k": {str(k): v for k, v in sorted(r.by_k.items())}}
            for r in model.rows(inputs)]
    doc = {"rows": rows, "provenance": [{k: v for k, v in model.provenance(s).items() if k != "config"}
                                        for s in inputs.sources]}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def tex_escape(text: str) -> str:
    return "".join(_TEX.get(c, c) for c in text)


def latex(inputs: Inputs, k: int | None = None) -> str:
    rows = model.rows(inputs)
    ks, k = table_k(rows, k)
    cols = columns(ks, k)
    higher = {m[0]: m[3] for m in model.METRICS}
    sig = {s.index: model.sig_lookup(s) for s in inputs.sources}
    out = [r"% memini-bench report -format latex; needs \usepackage{booktabs}",
           r"\begin{tabular}{ll" + "r" * len(cols) + "}", r"\toprule",
           "data set & system & " + " & ".join(tex_escape(c[0]) for c in cols) + r" \\", r"\midrule"]
    datasets = list(dict.fromkeys(r.dataset for r in rows))
    for n, ds in enumerate(datasets):
        group = [r for r in rows if r.dataset == ds]
        bests = {(metric, kk): model.best_row(group, metric, kk, higher[metric]) for _, metric, kk in cols}
        for r in group:
            cells = []
            for _, metric, kk in cols:
                text = _cell(r, metric, kk)
                best = bests[(metric, kk)]
                if best is not None and text != "-" and text == _cell(best, metric, kk):
                    text = rf"\textbf{{{text}}}"
                elif best is not None and best.source == r.source and _significant(sig[r.source], best, r,
                                                                                   metric, kk):
                    text += r"$^\dagger$"
                cells.append(text)
            out.append(f"{tex_escape(ds)} & {tex_escape(r.system)} & " + " & ".join(cells) + r" \\")
        if n < len(datasets) - 1:
            out.append(r"\midrule")
    out += [r"\bottomrule", r"\end{tabular}",
            rf"% bold: best per data set; $^\dagger$: differs from that best by the file's paired test "
            rf"(Holm-adjusted), K = {k}"]
    return "\n".join(out) + "\n"


def _significant(lookup: dict, best: model.Row, row: model.Row, metric: str, k: int) -> bool:
    name = model.SIG_METRIC.get(metric)
    test = lookup.get((best.system, row.system, name.format(k=k))) if name else None
    return bool(test and test.get("significant"))


def export(inputs: Inputs, fmt: str, k: int | None = None) -> str:
    if fmt == "md":
        return markdown(inputs, k)
    if fmt == "latex":
        return latex(inputs, k)
    if fmt == "csv":
        return csv_text(inputs)
    if fmt == "json":
        return json_text(inputs)
    raise BenchError(f"-format {fmt}: choose one of {', '.join(FORMATS)}")
