"""The suites: each loader reads one data set format into a Dataset. ``load(suite, path, **options)``."""

from __future__ import annotations

from collections.abc import Callable

from memini_bench.dataset import Dataset
from memini_bench.errors import BenchError
from memini_bench.loaders.file import load_file, load_sample
from memini_bench.loaders.locomo import load_locomo, load_locomo_sessions
from memini_bench.loaders.longmemeval import load_longmemeval
from memini_bench.loaders.vetobench import load_vetobench

LOADERS: dict[str, Callable[..., Dataset]] = {
    "sample": load_sample,
    "file": load_file,
    "longmemeval": load_longmemeval,
    "locomo": load_locomo,
    "locomo-sessions": load_locomo_sessions,
    "vetobench": load_vetobench,
}


def register(suite: str, loader: Callable[..., Dataset]) -> None:
    """Add a suite (used by the extra suites' modules and by plugins)."""
    LOADERS[suite] = loader


def load(suite: str, path: str = "", **options: object) -> Dataset:
    """Load ``suite`` from ``path``; an unknown suite or a missing path is a BenchError."""
    if suite not in LOADERS:
        raise BenchError(f"-suite {suite!r}: unknown suite; use one of {', '.join(sorted(LOADERS))}")
    if suite != "sample" and not path:
        raise BenchError(f"-suite {suite} needs -data PATH (the data set file)")
    return LOADERS[suite](path, **options)
