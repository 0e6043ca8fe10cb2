"""The report's figures: matplotlib (Agg) rendered to inline SVG, glyphs as paths (no font to fetch).

- ``category_bars``: recall_any@K per category, one bar per system, with 95% Wilson intervals (``model.wilson``
  over the category's question count).
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
import itertools
import math
import re

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


def category_bars(scores: list, labels: dict, k: int, title: str) -> str:
    """One bar per system and category at ``k`` (``""`` when no score of ``scores`` is at ``k``); the category
    names under the axis stand upright when, side by side, two neighbours' boxes would overlap."""
    fig = category_figure(scores, labels, k, title)
    return "" if fig is None else _svg(_plt(), fig)


def category_figure(scores: list, labels: dict, k: int, title: str):
    plt = _plt()
    title = short_label(title)
    systems = list(dict.fromkeys(s.system for s in scores if s.k == k))
    cats = sorted({c for s in scores if s.k == k for c in s.per_category})
    if not systems or not cats:
        return None
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(cats) * max(1, len(systems)) / 2), 3.4))
    width = 0.8 / len(systems)
    for n, system in enumerate(systems):
        s = next(x for x in scores if x.system == system and x.k == k)
        xs, ys, lo, hi = [], [], [], []
        for i, c in enumerate(cats):
            if c not in s.per_category:
                continue
            p, q = s.per_category[c], s.per_category_questions.get(c, 0)
            a, b = model.wilson(p, q)
            xs.append(i + (n - (len(systems) - 1) / 2) * width)
            ys.append(p * 100)
            lo.append(max(0.0, p - a) * 100)   # >= 0: at p = 0 or 1 rounding can put p a hair outside [a, b]
            hi.append(max(0.0, b - p) * 100)
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=short_label(system))
    ax.set_xticks(range(len(cats)), [_category_name(c, labels) for c in cats])
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
    if any(a.overlaps(b) for a, b in itertools.pairwise(boxes)):  # too wide side by side: stand them upright
        ax.tick_params(axis="x", labelrotation=90)
    ax.set_ylabel(f"R@{k} (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title + " (bars: 95% Wilson interval)")
    ax.legend(fontsize=7, ncol=min(4, len(systems)), loc="upper center", bbox_to_anchor=(0.5, -0.32))
    if ax.xaxis.get_ticklabels() and ax.xaxis.get_ticklabels()[0].get_rotation():
        ax.get_legend().set_bbox_to_anchor((1.01, 1.0))
        ax.get_legend().set_loc("upper left")
    return fig


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


def pareto_plot(points: list[tuple[str, float, float]], k: int, title: str) -> str:
    """``points``: (label, p50 ms, recall fraction). Labels never overlap (``pareto_figure``); those that find no
    free place are numbered in the figure and named in the key under it."""
    return _svg(_plt(), pareto_figure(points, k, title)[0])


#: A figure's label (a system name) is cut to this many characters with an ellipsis: the renderer lays text out in
#: time that grows faster than its length (a 200,000-character name took 90 s to draw), and no figure shows more.
MAX_LABEL_CHARS = 80


def short_label(label: str) -> str:
    """``label`` cut to ``MAX_LABEL_CHARS`` (an ellipsis marks the cut; the page's tables keep the full name)."""
    return label if len(label) <= MAX_LABEL_CHARS else label[:MAX_LABEL_CHARS - 1] + "…"


def pareto_figure(points: list[tuple[str, float, float]], k: int, title: str):
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
    ax.set_ylabel(f"R@{k} (%)")
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
