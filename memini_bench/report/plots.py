"""The report's figures: matplotlib (Agg) rendered to inline SVG, glyphs as paths (no font to fetch).

- ``category_heatmap``: systems x categories, each cell coloured on one scale (lowest to highest value shown)
  with its value printed (the system's overall value in a first ``all`` column), the category's question count
  under its name.
- ``pareto_plot``: recall_any@K against p50 latency (log scale), one point per (file, system); the front
  (``model.pareto``) is joined by a line and its points are filled; labels are placed where they overlap no
  other label (measured by the renderer), and a point with no free place is numbered and named under the figure.
- ``sweep_heatmap``: one cell per sweep cell at K, coloured by its difference to the baseline on a diverging
  scale symmetric around 0 that spans the widest paired 95% interval, so two cells whose intervals overlap are
  never at opposite ends; a cell whose Holm-adjusted test against the baseline is not significant is grey.
  Each cell prints its value, the difference and the interval; the selected cell is outlined only when the
  summary names one.
- ``veto_curve``: VetoBench's veto_recall@K against corpus size, one line per system.
"""

from __future__ import annotations

import io
import math
import re
import textwrap

from memini_bench.core.registry import require_extra
from memini_bench.core.table import fmt_interval, fmt_pct, fmt_points
from memini_bench.report import model


def _plt():
    require_extra("memini-bench report", "report", "matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "path", "svg.hashsalt": "memini-bench", "font.size": 9})
    return plt


def _svg(plt, fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.S)


def category_heatmap(rows: list[tuple[str, float | None, dict[str, float], dict[str, int]]], labels: dict,
                     metric: str, title: str) -> str:
    """Systems x categories (``category_figure``) as SVG; ``""`` when no row has a category."""
    fig = category_figure(rows, labels, metric, title)
    return "" if fig is None else _svg(_plt(), fig)


def category_figure(rows: list[tuple[str, float | None, dict[str, float], dict[str, int]]], labels: dict,
                    metric: str, title: str):
    """``rows``: (system, its overall value, {category: value}, {category: questions}), values fractions, in the
    order shown (top down). One cell per system and category (plus ``all`` first), coloured on one sequential scale
    from the lowest to the highest value shown (so differences show) and printed to one decimal; a category the
    system has no value for is blank. The column
    headers carry each category's question count (the most any row has)."""
    plt = _plt()
    title = short_label(title)
    cats = sorted({c for _, _, values, _ in rows for c in values}, key=_category_order)
    if not rows or not cats:
        return None
    grid = [[overall, *(values.get(c) for c in cats)] for _, overall, values, _ in rows]
    counts = [max((n.get(c, 0) for _, _, _, n in rows), default=0) for c in cats]
    names = [textwrap.fill(_category_name(c, labels).replace("_", " ").replace("-", "- "), 12).replace("- ", "-")
             for c in cats]
    heads = ["all", *(f"{name}\n(n={n})" if n else name for name, n in zip(names, counts, strict=True))]
    width = max(5.0, 2.2 + 1.05 * len(heads) + 0.06 * max(len(short_label(name)) for name, *_ in rows))
    fig, ax = plt.subplots(figsize=(width, 0.9 + 0.26 * len(rows)))
    cmap = plt.get_cmap("YlGnBu")
    import numpy as np

    data = np.array([[np.nan if v is None else v * 100 for v in line] for line in grid], dtype=float)
    finite = data[~np.isnan(data)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 100.0)
    high = max(high, low + 1.0)
    ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=low, vmax=high, aspect="auto")
    for i, line in enumerate(grid):
        for j, v in enumerate(line):
            if v is None:
                continue
            ax.text(j, i, f"{v * 100:.1f}", ha="center", va="center", fontsize=7,
                    color="white" if (v * 100 - low) / (high - low) > 0.6 else "black")
    ax.set_xticks(range(len(heads)), heads, fontsize=7)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(rows)), [short_label(name) for name, *_ in rows], fontsize=7)
    ax.axvline(0.5, color="white", lw=2)
    ax.set_title(f"{title}: {metric} per category (%)", fontsize=9, pad=26)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    return fig


def _category_order(category: str) -> tuple[int, int | str]:
    """Numeric category ids in numeric order (``2`` before ``10``), then the others by name."""
    return (0, int(category)) if category.isdigit() else (1, category)


def _category_name(category: str, labels: dict) -> str:
    """``1 multi-hop``; the label alone where it only spells the id out (``knowledge_update``)."""
    label = str(labels.get(category) or "")
    if not label:
        return category
    same = label.lower().replace(" ", "_").replace("-", "_") == category.lower().replace("-", "_")
    return short_label(label if same else f"{category} {label}")


#: Where a point's label may go, in points from the point: beside it first, then further out (with a leader line).
_OFFSETS = [(dx * r, dy * r) for r in (1, 2.2, 3.6, 5.2) for dx, dy in
            ((4, 2), (4, -9), (-4, 2), (-4, -9), (0, 8), (0, -14), (10, 8), (-10, -14))]


def pareto_plot(points: list[tuple[str, float, float]], k: int, title: str, metric: str = "") -> str:
    """``points``: (label, p50 ms, recall fraction). Labels never overlap (``pareto_figure``); those that find no
    free place are numbered in the figure and named in the key under it."""
    return _svg(_plt(), pareto_figure(points, k, title, metric)[0])


#: A figure's label (a system name) is cut to this many characters with an ellipsis: the renderer lays text out in
#: time that grows faster than its length (a 200,000-character name took 90 s to draw), and no figure shows more.
MAX_LABEL_CHARS = 80


def short_label(label: str) -> str:
    """``label`` cut to ``MAX_LABEL_CHARS`` (an ellipsis marks the cut; the page's tables keep the full name)."""
    return label if len(label) <= MAX_LABEL_CHARS else label[:MAX_LABEL_CHARS - 1] + "…"


def pareto_figure(points: list[tuple[str, float, float]], k: int, title: str, metric: str = ""):
    """The figure and its label Text artists. Each label is placed at the first offset of ``_OFFSETS`` where its
    box, measured by the renderer, meets no label placed before it and stays inside the axes; a point left without
    a place gets a number (placed the same way) and its name goes to the key under the axes. Labels and the title
    are cut to ``MAX_LABEL_CHARS``."""
    points = [(short_label(label), lat, rec) for label, lat, rec in points]
    title = short_label(title)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8.0, 5.0))
    front = model.pareto([(lat, rec) for _, lat, rec in points])
    for (_, lat, rec), on in zip(points, front, strict=True):
        ax.scatter([max(lat, 1e-3)], [rec * 100], s=22, facecolors="C3" if on else "none",
                   edgecolors="C3" if on else "C0", zorder=3)
    line = sorted((max(lat, 1e-3), rec * 100) for (_, lat, rec), on in zip(points, front, strict=True) if on)
    if line:
        ax.plot([x for x, _ in line], [y for _, y in line], color="C3", lw=1, label="Pareto front")
        ax.legend(fontsize=7, loc="lower right")
    ax.set_xscale("log")
    ax.set_xlabel("p50 latency per question (ms, log scale)")
    ax.set_ylabel(f"{metric or f'recall_any@{k}'} (%)")
    ax.set_title(title)
    if points:
        ys = [rec * 100 for _, _, rec in points]
        xs = [max(lat, 1e-3) for _, lat, _ in points]
        ax.set_ylim(max(0.0, min(ys) - 8), min(100.0, max(ys) + 6) + 2)
        ax.set_xlim(min(xs) / 3, max(xs) * 6)
    renderer = fig.canvas.get_renderer()
    area = ax.get_window_extent(renderer)
    placed, texts, key = [], [], []
    order = sorted(range(len(points)), key=lambda i: (-points[i][2], points[i][1], points[i][0]))
    for i in order:
        label, lat, rec = points[i]
        xy = (max(lat, 1e-3), rec * 100)
        text = _place(ax, renderer, area, placed, label, xy)
        if text is None:
            key.append(label)
            text = _place(ax, renderer, area, placed, str(len(key)), xy)
            if text is None:
                key[-1] = f"{label} (at {lat:.2f} ms, {fmt_pct(rec)})"
                continue
            key[-1] = f"{len(key)}: {key[-1]}"
        texts.append(text)
    if key:
        fig.text(0.01, -0.02, "Numbered points: " + "; ".join(key), fontsize=6, wrap=True, va="top")
    return fig, texts


def _place(ax, renderer, area, placed: list, label: str, xy: tuple[float, float]):
    for dx, dy in _OFFSETS:
        far = abs(dx) > 10 or abs(dy) > 15
        text = ax.annotate(label, xy, fontsize=6, xytext=(dx, dy), textcoords="offset points",
                           ha="right" if dx < 0 else "left" if dx > 0 else "center",
                           arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "0.5"} if far else None)
        box = text.get_window_extent(renderer).expanded(1.04, 1.1)
        inside = area.x0 <= box.x0 and box.x1 <= area.x1 and area.y0 <= box.y0 and box.y1 <= area.y1
        if inside and not any(box.overlaps(other) for other in placed):
            placed.append(box)
            return text
        text.remove()
    return None


def sweep_heatmap(cells: list[dict], title: str, selected: str) -> str:
    """``cells``: label, value, delta, ci_low, ci_high, significant (fractions); one row of cells."""
    plt = _plt()
    from matplotlib.colors import TwoSlopeNorm

    span = max([abs(c["ci_low"]) for c in cells] + [abs(c["ci_high"]) for c in cells] + [1e-6])
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-span, vmax=span)
    cmap = plt.get_cmap("RdBu")
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(cells)), 2.0))
    for i, c in enumerate(cells):
        colour = cmap(norm(c["delta"])) if c["significant"] else (0.85, 0.85, 0.85, 1.0)
        ax.add_patch(plt.Rectangle((i, 0), 1, 1, facecolor=colour,
                                   edgecolor="black" if c["label"] == selected else "white",
                                   lw=2.5 if c["label"] == selected else 1))
        ax.text(i + 0.5, 0.5, f"{c['label']}\n{fmt_points(c['value'])}\n"
                f"{fmt_points(c['delta'], signed=True)} {fmt_interval(c['ci_low'], c['ci_high'])}",
                ha="center", va="center", fontsize=7)
    ax.set_xlim(0, len(cells))
    ax.set_ylim(0, 1)
    ax.axis("off")
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=ax, fraction=0.05, pad=0.02, label="difference to baseline (pp/100)")
    note = "grey: not significant (Holm)" + (f"; outlined: selected {selected}" if selected else "; none selected")
    ax.set_title(f"{title}\n{note}", fontsize=8)
    return _svg(plt, fig)


def veto_curve(points: list[dict], metric: str) -> str:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    systems = list(dict.fromkeys(s["system"] for p in points for s in p.get("systems", [])))
    for system in systems:
        xy = [(p["size"], s[metric]) for p in points for s in p.get("systems", []) if s["system"] == system
              and isinstance(s.get(metric), int | float) and not math.isnan(s[metric])]
        ax.plot([x for x, _ in xy], [y * 100 for _, y in xy], marker="o", ms=3, label=system)
    ax.set_xscale("log")
    ax.set_xlabel("corpus size (items, log scale)")
    ax.set_ylabel(f"{metric} (%)")
    ax.set_ylim(-2, 102)
    ax.legend(fontsize=7)
    ax.set_title(f"VetoBench: {metric} as the corpus grows")
    return _svg(plt, fig)
