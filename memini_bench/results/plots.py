"""PNG figures (matplotlib, the ``plot`` extra): per-category recall of an ordinary run, and a sweep's grid.

- :func:`category_bars`: recall_any@K per category (``Score.category("recall_any@{k}")``), one bar per system in each
  category group (a data set without categories gets one group, ``all``).
- :func:`sweep_plot` over a :class:`SweepFigure`: two axes -> a heat map of the metric (rows: the first axis,
  columns: the second; each cell annotated with its value and bootstrap interval, the selected cell outlined, the
  baseline's value in the title);
  one axis, or three and more -> one panel per axis, the metric against that axis's values with bootstrap error
  bars, every other axis held at the selected cell's value (a slice through the selection), the selected cell
  starred, the baseline (if given) a dashed line in its own interval band.

Axis values keep the order in which the cells first show them (the sweep's declared order, so ``fusion=0.3,0.5,
-1`` stays in that order with ``-1`` labelled as the caller names it). Metrics are fractions in 0..1, drawn in %.
Files are written atomically. Without matplotlib every function raises a one-line BenchError naming the extra.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.table import fmt_points
from memini_bench.errors import BenchError
from memini_bench.results.schema import Score
from memini_bench.results.write import atomic_write

AxisValue = str | int | float


def plot_needs(what: str = "-plot") -> str:
    """The one-line error for a missing matplotlib, ``what`` naming the flag or feature that wanted it."""
    return f"{what} needs the plot extra (matplotlib is not installed): pip install 'memini-bench[plot]'"


@dataclass(frozen=True, slots=True)
class SweepCell:
    """One grid cell: its setting per axis (``((axis, value), ...)`` in the figure's axis order), the metric's
    value (a fraction) and its bootstrap interval [ci_low, ci_high]."""

    settings: tuple[tuple[str, AxisValue], ...]
    value: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, slots=True)
class SweepFigure:
    """What one sweep PNG shows: ``metric`` (e.g. ``"R@5"``) over the ``cells`` of a grid on ``axes``; the
    ``selected`` cell's settings (marked; None = nothing selected, slices go through the first cell) and the
    all-defaults ``baseline`` (a reference line; None = not drawn)."""

    metric: str
    axes: tuple[str, ...]
    cells: tuple[SweepCell, ...]
    selected: tuple[tuple[str, AxisValue], ...] | None = None
    baseline: SweepCell | None = None
    title: str = ""


def category_bars(scores: Sequence[Score], path: Path, *, k: int | None = None, title: str = "",
                  labels: dict[str, str] | None = None, what: str = "-plot") -> None:
    """A PNG of recall_any@K per category, one bar per system (``k``: default the largest K in ``scores``)."""
    if not scores:
        raise ValueError("category_bars needs at least one Score")
    k = max(s.k for s in scores) if k is None else k
    rows = [s for s in scores if s.k == k]
    if not rows:
        raise ValueError(f"no Score at K={k}")
    plt = _pyplot(what)
    categories = list(dict.fromkeys(c for s in rows for c in s.category("recall_any@{k}")))
    labels = labels or {}
    counts = rows[0].per_category_questions
    names = {c: f"{c} ({labels[c]})" if c in labels else c for c in categories}  # report.markdown's naming
    ticks = [f"{names[c]}\nn={counts.get(c, 0)}" for c in categories]
    ticks = ticks or [f"all\nn={rows[0].questions}"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(ticks) * len(rows) + 3), 4.8), dpi=120)
    width = 0.8 / len(rows)
    for i, s in enumerate(rows):
        per_category = s.category("recall_any@{k}")
        values = [per_category.get(c, float("nan")) for c in categories] if categories else [s["recall_any@{k}"]]
        xs = [g + (i - (len(rows) - 1) / 2) * width for g in range(len(ticks))]
        bars = ax.bar(xs, [v * 100 for v in values], width, label=s.system)
        ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
    ax.set_xticks(range(len(ticks)), ticks, fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_ylabel(f"recall_any@{k} (%)")
    ax.set_title(title or f"{rows[0].dataset}: recall_any@{k} by category")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    _save(plt, fig, path)


def sweep_plot(figure: SweepFigure, path: Path, *, what: str = "-sweep") -> None:
    """The sweep PNG (layout in the module docstring)."""
    _check(figure)
    plt = _pyplot(what)
    if len(figure.axes) == 2:
        fig = _heat_map(plt, figure)
    else:
        fig = _slices(plt, figure)
    _save(plt, fig, path)


def _check(figure: SweepFigure) -> None:
    if not figure.cells or not figure.axes:
        raise ValueError("a sweep figure needs at least one axis and one cell")
    for cell in figure.cells:
        if tuple(name for name, _ in cell.settings) != figure.axes:
            raise ValueError(f"cell {cell.settings} does not set exactly the axes {figure.axes}, in order")
    if figure.selected is not None and figure.selected not in {c.settings for c in figure.cells}:
        raise ValueError(f"selected {figure.selected} is not one of the cells")


def _axis_values(figure: SweepFigure, index: int) -> list[AxisValue]:
    return list(dict.fromkeys(c.settings[index][1] for c in figure.cells))


def _heat_map(plt, figure: SweepFigure):
    import numpy as np

    rows, cols = _axis_values(figure, 0), _axis_values(figure, 1)
    grid = np.full((len(rows), len(cols)), np.nan)
    by_settings = {c.settings: c for c in figure.cells}
    fig, ax = plt.subplots(figsize=(1.6 * len(cols) + 3, 1.0 * len(rows) + 2.2), dpi=120)
    for (i, r), (j, c) in ((ri, cj) for ri in enumerate(rows) for cj in enumerate(cols)):
        cell = by_settings.get(((figure.axes[0], r), (figure.axes[1], c)))
        if cell is not None:
            grid[i, j] = cell.value * 100
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    mid = np.nanmean(grid)
    for (i, r), (j, c) in ((ri, cj) for ri in enumerate(rows) for cj in enumerate(cols)):
        cell = by_settings.get(((figure.axes[0], r), (figure.axes[1], c)))
        if cell is not None:
            ax.text(j, i, f"{fmt_points(cell.value)}\n[{fmt_points(cell.ci_low)}, {fmt_points(cell.ci_high)}]",
                    ha="center", va="center", fontsize=8, color="black" if grid[i, j] > mid else "white")
            if cell.settings == figure.selected:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=3))
    ax.set_xticks(range(len(cols)), [str(c) for c in cols])
    ax.set_yticks(range(len(rows)), [str(r) for r in rows])
    ax.set_xlabel(figure.axes[1])
    ax.set_ylabel(figure.axes[0])
    fig.colorbar(image, ax=ax, label=f"{figure.metric} (%)")
    note = "selected cell outlined in red; [95% bootstrap interval]"
    if figure.baseline is not None:
        b = figure.baseline
        note += f"\nbaseline {fmt_points(b.value)} [{fmt_points(b.ci_low)}, {fmt_points(b.ci_high)}]"
    ax.set_title(_title(figure, note), fontsize=9)
    fig.tight_layout()
    return fig


def _slices(plt, figure: SweepFigure):
    through = figure.selected or figure.cells[0].settings
    fig, panels = plt.subplots(1, len(figure.axes), figsize=(4.5 * len(figure.axes) + 1, 4.2), dpi=120,
                               squeeze=False)
    for index, (axis, ax) in enumerate(zip(figure.axes, panels[0], strict=True)):
        others = [(n, v) for n, v in through if n != axis]
        line = [c for c in figure.cells if [(n, v) for n, v in c.settings if n != axis] == others]
        by_value = {c.settings[index][1]: c for c in line}
        values = [v for v in _axis_values(figure, index) if v in by_value]
        cells = [by_value[v] for v in values]
        ys = [c.value * 100 for c in cells]
        err = [[(c.value - c.ci_low) * 100 for c in cells], [(c.ci_high - c.value) * 100 for c in cells]]
        ax.errorbar(range(len(cells)), ys, yerr=err, marker="o", capsize=4, label=figure.metric)
        for x, c in enumerate(cells):
            if c.settings == figure.selected:
                ax.plot([x], [c.value * 100], marker="*", markersize=16, color="red", linestyle="none",
                        label="selected")
        if figure.baseline is not None:
            b = figure.baseline
            ax.axhline(b.value * 100, color="grey", linestyle="--", label="baseline")
            ax.axhspan(b.ci_low * 100, b.ci_high * 100, color="grey", alpha=0.15)
        ax.set_xticks(range(len(cells)), [str(v) for v in values])
        ax.set_xlabel(axis + (f"  ({', '.join(f'{n}={v}' for n, v in others)})" if others else ""), fontsize=8)
        ax.set_ylabel(f"{figure.metric} (%)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(_title(figure, "error bars: 95% bootstrap interval"), fontsize=9)
    fig.tight_layout()
    return fig


def _title(figure: SweepFigure, note: str) -> str:
    return f"{figure.title or 'sweep over ' + ', '.join(figure.axes)}: {figure.metric} — {note}"


def _pyplot(what: str):
    try:
        import matplotlib
    except ImportError:
        raise BenchError(plot_needs(what)) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt, fig, path: Path) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(Path(path), lambda w: w(buf.getvalue()))
