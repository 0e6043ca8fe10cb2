"""The report's figures: matplotlib (Agg) rendered to inline SVG, glyphs as paths (no font to fetch).

- ``category_bars``: recall_any@K per category, one bar per system, with 95% Wilson intervals (``model.wilson``
  over the category's question count).
- ``pareto_plot``: recall_any@K against p50 latency (log scale), one point per (file, system); the front
  (``model.pareto``) is joined by a line and its points are filled.
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

from memini_bench.core.registry import require_extra
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
    plt = _plt()
    systems = list(dict.fromkeys(s.system for s in scores if s.k == k))
    cats = sorted({c for s in scores if s.k == k for c in s.per_category})
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(cats) * max(1, len(systems)) / 2), 3.2))
    width = 0.8 / max(1, len(systems))
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
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=system)
    ax.set_xticks(range(len(cats)), [f"{c}\n{labels.get(c, '')}".strip() for c in cats])
    ax.set_ylabel(f"R@{k} (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title + " (bars: 95% Wilson interval)")
    ax.legend(fontsize=7, ncol=min(4, len(systems)), loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return _svg(plt, fig)


def pareto_plot(points: list[tuple[str, float, float]], k: int, title: str) -> str:
    """``points``: (label, p50 ms, recall fraction)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    front = model.pareto([(lat, rec) for _, lat, rec in points])
    for (label, lat, rec), on in zip(points, front, strict=True):
        ax.scatter([max(lat, 1e-3)], [rec * 100], s=22, facecolors="C3" if on else "none",
                   edgecolors="C3" if on else "C0")
        ax.annotate(label, (max(lat, 1e-3), rec * 100), fontsize=6, xytext=(3, 2), textcoords="offset points")
    line = sorted((max(lat, 1e-3), rec * 100) for (_, lat, rec), on in zip(points, front, strict=True) if on)
    if line:
        ax.plot([x for x, _ in line], [y for _, y in line], color="C3", lw=1, label="Pareto front")
        ax.legend(fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("p50 latency per question (ms, log scale)")
    ax.set_ylabel(f"R@{k} (%)")
    ax.set_title(title)
    return _svg(plt, fig)


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
        ax.text(i + 0.5, 0.5, f"{c['label']}\n{c['value'] * 100:.1f}\n"
                f"{c['delta'] * 100:+.1f} [{c['ci_low'] * 100:+.1f}, {c['ci_high'] * 100:+.1f}]",
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
