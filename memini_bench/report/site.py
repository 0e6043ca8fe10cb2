"""The static site: Jinja2 templates (``memini_bench/report/templates``) rendered into DIR with the page script
and style copied beside them. Nothing is fetched at view time: data sit inline as JSON, figures as inline SVG,
receipts as script files under DIR (``receipts``).

Pages: ``index.html`` (the leaderboard), ``ds-<data set>.html`` (significance matrices, category bars, recall
against latency with its Pareto front, sweeps), ``receipts-<data set>.html`` (per-question receipts and the
failure browser; only where per-question files were given), ``vetobench.html`` and ``provenance.html``.

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

from memini_bench.errors import BenchError
from memini_bench.report import model, plots, receipts
from memini_bench.report.collect import Inputs, Source
from memini_bench.results.atomic_io import atomic_write

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
    import jinja2

    loader = jinja2.FileSystemLoader(str(resources.files("memini_bench.report") / "templates"))
    env = jinja2.Environment(loader=loader, autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson_script"] = script_json
    env.filters["pct"] = lambda v: "-" if v is None else f"{v * 100:.1f}"
    return env


def _write(path: Path, text: str) -> None:
    atomic_write(path, lambda w: w(text.encode()))


def leaderboard_data(inputs: Inputs) -> dict:
    rows = model.rows(inputs)
    return {"ks": model.ks_of(rows),
            "metrics": [{"key": k, "label": label, "perK": per_k, "higher": hi, "pct": pct}
                        for k, label, per_k, hi, pct in model.METRICS],
            "rows": [{"dataset": r.dataset, "slug": slug(r.dataset), "system": r.system, "file": r.file,
                      "source": r.source, "questions": r.questions, "embedder": r.embedder,
                      "byK": {str(k): v for k, v in r.by_k.items()}} for r in rows]}


def sig_matrix(source: Source, metric: str) -> dict:
    """Systems x systems for one metric: each tested cell's delta (row minus column), Holm p and significance."""
    lookup = model.sig_lookup(source)
    systems = source.results.systems
    cells = [[lookup.get((a, b, metric)) if a != b else None for b in systems] for a in systems]
    return {"metric": metric, "systems": systems, "cells": cells}


def dataset_page(inputs: Inputs, dataset: str) -> dict:
    sources = [s for s in inputs.sources if s.dataset == dataset]
    rows = [r for r in model.rows(inputs) if r.dataset == dataset]
    k = max(model.ks_of(rows))
    if len(rows) > MAX_CHARTED_SYSTEMS:
        return {"dataset": dataset, "slug": slug(dataset), "k": k, "pareto": "", "sweeps": [],
                "blocks": [{"source": s, "matrices": [], "bars": ""} for s in sources],
                "omitted": f"{len(rows):,} systems: no figures or significance matrices above "
                           f"{MAX_CHARTED_SYSTEMS}; the leaderboard lists every one."}
    blocks = []
    for s in sources:
        metrics = list(dict.fromkeys(r["metric"] for r in model.significance(s)))
        labels = s.results.config.get("category_labels") or {}
        has_cats = any(sc.per_category for sc in s.results.scores)
        blocks.append({"source": s, "matrices": [sig_matrix(s, m) for m in metrics],
                       "bars": plots.category_bars(list(s.results.scores), labels, k, s.name) if has_cats else ""})
    points = [(f"{r.system} ({r.file})" if len(sources) > 1 else r.system, r.value("p50_ms", k) or 0.0,
               r.value("recall_at_k", k) or 0.0) for r in rows]
    sweeps = [sweep_figure(d, k) for d in inputs.sweeps if _sweep_dataset(d) == dataset]
    return {"dataset": dataset, "slug": slug(dataset), "k": k, "blocks": blocks,
            "pareto": plots.pareto_plot(points, k, f"{dataset}: R@{k} against p50 latency"),
            "sweeps": [s for s in sweeps if s], "omitted": ""}


def _sweep_dataset(doc) -> str:
    base = doc.raw.get("tune", {}).get("baseline") or [{}]
    return str(base[0].get("dataset", ""))


def sweep_figure(doc, k: int) -> dict | None:
    tune = doc.raw.get("tune", {})
    metric = f"R@{k}"
    tests = {r["system_a"]: r for r in tune.get("significance", []) if r.get("system_b") == "baseline"
             and r.get("metric") == metric}
    cells = []
    for cell in tune.get("cells", []):
        score = next((s for s in cell.get("scores", []) if s.get("k") == k), None)
        test = tests.get(cell.get("cell"))
        if score is None or test is None:
            continue
        cells.append({"label": cell["cell"], "value": score["recall_at_k"], "delta": test["delta"],
                      "ci_low": test["ci_low"], "ci_high": test["ci_high"], "significant": test["significant"]})
    if not cells:
        return None
    selected = doc.raw.get("selected") or ""
    title = f"{doc.path.parent.name}: R@{k}, difference to the baseline with its paired 95% interval"
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
    datasets = list(dict.fromkeys(s.dataset for s in inputs.sources))
    receipt_pages = {}
    for ds in datasets:
        with_runs = [s for s in inputs.sources if s.dataset == ds and s.runs]
        if with_runs:
            k = max(max(s.results.config.get("ks") or [10]) for s in with_runs)
            receipt_pages[ds] = receipts.build(with_runs, out, slug(ds), k)
    nav = {"datasets": [(ds, slug(ds)) for ds in datasets], "receipts": [(ds, slug(ds)) for ds in receipt_pages],
           "veto": bool(inputs.veto)}
    pages = []

    def page(name: str, template: str, **ctx) -> None:
        _write(out / name, env.get_template(template).render(nav=nav, **ctx))
        pages.append(out / name)

    page("index.html", "index.html.j2", title="Leaderboard", data=leaderboard_data(inputs),
         skipped=inputs.skipped)
    for ds in datasets:
        page(f"ds-{slug(ds)}.html", "dataset.html.j2", title=ds, d=dataset_page(inputs, ds),
             receipts=receipt_pages.get(ds))
    for ds, summary in receipt_pages.items():
        page(f"receipts-{slug(ds)}.html", "receipts.html.j2", title=f"{ds}: receipts", dataset=ds,
             slug=slug(ds), summary=summary)
    if inputs.veto:
        page("vetobench.html", "vetobench.html.j2", title="VetoBench", veto=veto_page(inputs))
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
            out.append({"file": doc.path.name, "svgs": [], "table": doc.raw.get("suites")})
    return out
