"""Sweep grids: ``-sweep 'pool=30,50,80 fusion=0.3,0.5,-1'`` parsed into typed axes and cells.

An axis is ``FLAG=V1,V2,...`` (axes separated by spaces or ``;``) over a sweepable flag of the swept system's
settings class (``sweep_targets``: memini-hybrid's ``HybridConfig`` by default, the reference system's
``ReferenceSettings`` with ``-systems reference``, every ``-ref-*`` flag), e.g. for the hybrid: every hybrid setting
(``HybridConfig``: ``fusion`` (negative = RRF), ``pool`` (each leg's depth itself, as memini's sweep states it),
``pool-factor``, ``pool-floor``, ``temporal-boost``, ``temporal-extractor``, ``semantic-reserve``,
``keyword-backend``, ``reinforce``, ``rrf-k``), LongMemEval's ``session-doc``, and ``embedder``. Each value is
parsed and checked by the flag's own type, as on the command line. The grid is the cartesian product in axis order;
a cell is ``((field, value), ...)``, applied over the run's own options; the *baseline* is the run's options with
no axis applied (all defaults unless the command line set a flag outside the grid).

Selection metrics (``-select``): any registered per-question metric (``core.metrics``: ``recall_any@K``,
``recall_frac@K``, ``mrr``, ``ndcg@K`` ...; the old ``R@K``, ``RA@K``, ``MRR``, ``nDCG@K`` still read), each read
from the ``Score`` row at a K of the run's ``-k``.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass

import click

from memini_bench.core import metrics
from memini_bench.core.settings import flag_fields
from memini_bench.embed.settings import EmbedSettings
from memini_bench.errors import BenchError
from memini_bench.loaders import LoadOptions
from memini_bench.results.schema import Score
from memini_bench.systems.config import HybridConfig

EXTRA_AXES = {"session-doc": (LoadOptions, "session_doc"), "embedder": (EmbedSettings, "embedder")}
Cell = tuple[tuple[str, object], ...]


@dataclass(frozen=True, slots=True)
class Axis:
    flag: str           # as typed, e.g. "pool"
    field: str          # the options field, e.g. "pool"
    owner: type         # the options class holding the field
    values: tuple


def sweepable(settings: type = HybridConfig) -> dict[str, tuple[type, dataclasses.Field]]:
    """Every axis of a sweep of the system whose settings class is ``settings``, and the shared extra axes."""
    out = {f.metadata["flag"]: (settings, f) for f in flag_fields(settings)}
    for name, (cls, field_name) in EXTRA_AXES.items():
        out[name] = (cls, next(f for f in flag_fields(cls) if f.name == field_name))
    return out


def _convert(flag: str, field: dataclasses.Field, text: str) -> object:
    kind = field.metadata["click"].get("type")
    if isinstance(field.default, bool):
        low = text.strip().lower()
        if low not in ("true", "false", "1", "0", "on", "off"):
            raise BenchError(f"-sweep {flag}={text}: use true or false")
        return low in ("true", "1", "on")
    if kind is None:
        return text.strip()
    try:
        return kind.convert(text.strip(), None, None)
    except click.BadParameter as exc:
        raise BenchError(f"-sweep {flag}={text}: {exc.message}") from None


def parse_grid(text: str, settings: type = HybridConfig) -> list[Axis]:
    """The axes of a ``-sweep`` value over ``settings``' flags (see the module docstring); a bad axis or value is
    a BenchError."""
    known = sweepable(settings)
    axes: list[Axis] = []
    for part in [p for p in re.split(r"[\s;]+", text.strip()) if p]:
        name, sep, raw = part.partition("=")
        if not sep or not raw:
            raise BenchError(f"-sweep {part!r}: write each axis as FLAG=V1,V2 (e.g. 'pool=30,50,80 fusion=0.3,-1')")
        name = name.lstrip("-")
        if name not in known:
            raise BenchError(f"-sweep {name}: not a sweepable setting; use one of {', '.join(sorted(known))}")
        if any(a.flag == name for a in axes):
            raise BenchError(f"-sweep {name}: named twice; give each axis once")
        cls, field = known[name]
        parts = raw.split(",")
        if any(not v.strip() for v in parts):
            raise BenchError(f"-sweep {part!r}: has an empty value; give comma-separated values (as -k 5,10)")
        values = tuple(dict.fromkeys(_convert(name, field, v) for v in parts))
        if name == "embedder":
            for value in values:
                check_embedder(str(value))
        axes.append(Axis(name, field.name, cls, values))
    if not axes:
        raise BenchError("-sweep: no axis given; e.g. -sweep 'pool=30,50,80'")
    return axes


def check_embedder(name: str) -> None:
    """An ``embedder=`` value names a registered embedder (or ``module:attr``): refused before the baseline runs."""
    from memini_bench.core.registry import EMBEDDERS
    from memini_bench.embed.settings import resolve_name

    base = resolve_name(name).partition(":")[0]
    if EMBEDDERS.entry(base) is None and not (EMBEDDERS.allow_module and ":" in name):
        raise BenchError(str(EMBEDDERS.unknown_error(name, "-sweep embedder=")).replace("-sweep embedder= ",
                                                                                       "-sweep embedder=", 1))


def check_suite_uses(axes: list[Axis], suite: str, uses: frozenset[str] | set[str]) -> None:
    """A loader axis (``session-doc``) the suite ignores would run cells equal to the baseline: refused."""
    for a in axes:
        if a.owner is LoadOptions and a.field not in uses:
            raise BenchError(f"-sweep {a.flag}: not used by -suite {suite} (every cell would equal the baseline); "
                             "drop the axis")


def check_size(grid_cells: int, bound: int) -> None:
    """Refuse a grid of more than ``bound`` cells (``-sweep-max-cells``) before any work."""
    if grid_cells > bound:
        raise BenchError(f"-sweep: {grid_cells} cells is more than -sweep-max-cells {bound}; narrow "
                         f"the grid or confirm with -sweep-max-cells {grid_cells}")


def cells(axes: list[Axis]) -> list[Cell]:
    """The cartesian product of the axes' values, first axis slowest."""
    return [tuple((a.field, v) for a, v in zip(axes, combo, strict=True))
            for combo in itertools.product(*(a.values for a in axes))]


def label(axes: list[Axis], cell: Cell) -> str:
    """``pool=30 fusion=-1``: how a cell is named in tables."""
    return " ".join(f"{a.flag}={v:g}" if isinstance(v, float) else f"{a.flag}={v}"
                    for a, (_, v) in zip(axes, cell, strict=True))


def file_stem(axes: list[Axis], cell: Cell) -> str:
    """A file-name-safe ``pool30-fusion-1``."""
    raw = "-".join(f"{a.flag}{v:g}" if isinstance(v, float) else f"{a.flag}{v}"
                   for a, (_, v) in zip(axes, cell, strict=True))
    return re.sub(r"[^A-Za-z0-9_.+=-]+", "_", raw)


#: The labels the selection had before metrics were registered objects: a sweep's identity records the label, so
#: the same command keeps naming the same folder (``-select RA@5`` and ``-select recall_all@5`` are one selection).


@dataclass(frozen=True, slots=True)
class Metric:
    name: str                 # as printed and recorded: its registered name (recall_any@5, mrr, ndcg@10)
    measure: metrics.Metric   # the registered metric (``core.metrics``)
    k: int                    # the Score row's K it is read from (MRR without a cut-off: the smallest K)

    def of(self, scores: list[Score]) -> float:
        return next(s.value(self.measure.name) for s in scores if s.k == self.k)


def parse_metric(text: str, ks: tuple[int, ...]) -> Metric:
    """``-select``: any registered per-question metric in one of its spellings (``core.metrics.parse``), at a K of
    ``-k``; an unknown name gets the closest valid one."""
    measure = metrics.parse(text, flag="-select")
    if measure.unit != "fraction":
        raise BenchError(f"-select {text!r}: {measure.name} is not a per-question score; select by a recall, "
                         "precision, MRR or nDCG metric (memini-bench -list metrics)")
    metrics.check_cutoff(measure, ks, flag="-select")
    if measure.k is not None and measure.k not in ks:
        raise BenchError(f"-select {text}: K {measure.k} is not in -k {','.join(map(str, ks))}; add it to -k")
    k = measure.k if measure.k is not None else ks[0]
    whole_depth = type(measure) is metrics.MRR and measure.k is None
    name = measure.name if whole_depth else dataclasses.replace(measure, k=k).name   # the registered name only
    return Metric(name, measure, k)
