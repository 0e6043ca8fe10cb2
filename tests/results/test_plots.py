"""The PNG figures: per-category bars of an ordinary run and the sweep's line / heat-map layouts are written as
valid PNGs; a missing matplotlib is one BenchError line naming the extra; malformed sweep figures are refused."""

from __future__ import annotations

import dataclasses
import struct
import sys

import pytest

from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.errors import BenchError
from memini_bench.evaluation.metrics import score_all
from memini_bench.results.plots import SweepCell, SweepFigure, category_bars, plot_needs, sweep_plot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_size(path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature and the closing IEND chunk."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR" and data[-8:-4] == b"IEND"
    return struct.unpack(">II", data[16:24])


def _result(system: str, hits: list[bool]) -> RunResult:
    runs = tuple(QuestionRun(Question(id=f"q{i}", query="", gold=(f"g{i}",), category=str(i % 3)),
                             ((f"g{i}",) if hit else ("x",),), (1.0,), (2,), 1.0) for i, hit in enumerate(hits))
    return RunResult(system, "toy", 5, 1.0, 10, runs)


def _cells(**axes: list) -> tuple[SweepCell, ...]:
    import itertools

    names = list(axes)
    cells = []
    for n, combo in enumerate(itertools.product(*axes.values())):
        value = 0.4 + 0.02 * n
        cells.append(SweepCell(tuple(zip(names, combo, strict=True)), value, value - 0.03, value + 0.025))
    return tuple(cells)


def test_category_bars_png(tmp_path):
    pytest.importorskip("matplotlib")
    scores = score_all([_result("memini-hybrid", [True, False] * 6), _result("memini-keyword", [True] * 12)], [1, 5])
    path = tmp_path / "cats.png"
    category_bars(scores, path, labels={"0": "multi-hop"})
    width, height = _png_size(path)
    assert width > 600 and height > 400
    uncategorised = [dataclasses.replace(s, categories={}, per_category_questions={}) for s in scores]
    category_bars(uncategorised, tmp_path / "all.png", k=1)
    assert _png_size(tmp_path / "all.png")[0] > 0
    with pytest.raises(ValueError, match="no Score at K=3"):
        category_bars(scores, tmp_path / "none.png", k=3)


@pytest.mark.parametrize("axes", [
    {"pool": [30, 50, 80]},
    {"pool": [30, 50, 80], "fusion": [0.3, 0.5, "RRF"]},
    {"pool": [30, 50], "fusion": [0.3, "RRF"], "session-doc": ["full", "dated"]},
])
def test_sweep_plot_layouts(tmp_path, axes):
    pytest.importorskip("matplotlib")
    cells = _cells(**axes)
    figure = SweepFigure(metric="R@5", axes=tuple(axes), cells=cells, selected=cells[-2].settings,
                         baseline=cells[0], title="locomo")
    path = tmp_path / "sweep.png"
    sweep_plot(figure, path)
    width, height = _png_size(path)
    assert width > 300 and height > 200
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically, nothing left behind


def test_sweep_heat_map_with_a_missing_cell_and_no_selection(tmp_path):
    pytest.importorskip("matplotlib")
    cells = _cells(pool=[30, 50], fusion=[0.3, 0.5])[:-1]
    sweep_plot(SweepFigure(metric="MRR", axes=("pool", "fusion"), cells=cells), tmp_path / "heat.png")
    assert _png_size(tmp_path / "heat.png")[0] > 0


@pytest.mark.parametrize(("figure", "fragment"), [
    (SweepFigure("R@5", ("pool",), ()), "at least one axis and one cell"),
    (SweepFigure("R@5", ("pool", "fusion"), _cells(pool=[30])), "does not set exactly the axes"),
    (SweepFigure("R@5", ("pool",), _cells(pool=[30]), selected=(("pool", 99),)), "is not one of the cells"),
])
def test_malformed_sweep_figures(tmp_path, figure, fragment):
    with pytest.raises(ValueError, match=fragment):
        sweep_plot(figure, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_missing_matplotlib_is_one_line_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    with pytest.raises(BenchError) as exc:
        sweep_plot(SweepFigure("R@5", ("pool",), _cells(pool=[30, 50])), tmp_path / "s.png")
    assert str(exc.value) == plot_needs("-sweep") and "memini-bench[plot]" in str(exc.value)
    assert "\n" not in str(exc.value)
    with pytest.raises(BenchError, match=r"^-plot needs the plot extra \(matplotlib"):
        category_bars(score_all([_result("memini-hybrid", [True])], [1]), tmp_path / "c.png")
    assert not list(tmp_path.iterdir())
