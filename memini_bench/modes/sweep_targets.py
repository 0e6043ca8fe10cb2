"""What a ``-sweep`` can sweep: one system per sweep, each with its own settings class (its sweep axes).

A ``SweepTarget`` names the system (``-systems NAME`` picks it; memini-hybrid when ``-systems`` is not given), the
frozen settings class whose every flag is an axis, the ``RunOptions`` attribute that holds it, and how a cell's
system is built: ``store`` makes what every cell of one (embedder, loader settings, split) shares, once (memini's
backend with its keyword index and vectors; the reference system's store with one keyword index per keyword
setting), ``key`` says which settings a store depends on beyond those, and ``system`` makes the cell's system on
it. Adding a sweepable system is one entry in ``TARGETS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memini_bench.core.contract import System
from memini_bench.core.dataset import Dataset
from memini_bench.core.registry import import_extra
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.modes.options import RunOptions
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import HybridSystem, MeminiBackend
from memini_bench.systems.reference_settings import ReferenceSettings


@dataclass(frozen=True)
class SweepTarget:
    system: str
    settings: type
    attr: str
    key: Callable[[RunOptions], tuple]
    store: Callable[[TextEncoder, RunOptions, Dataset], object]
    make: Callable[[object, RunOptions], System]


def _hybrid_store(encoder: TextEncoder, opts: RunOptions, ds: Dataset) -> MeminiBackend:
    backend = MeminiBackend(encoder, opts.hybrid.keyword_backend)
    backend.ingest(ds.items)
    backend.prepare([q.query for q in ds.questions])
    return backend


def _hybrid(backend: object, opts: RunOptions) -> System:
    assert isinstance(backend, MeminiBackend)
    backend.access[:] = 0  # every cell starts from the same store (reinforcement does not leak between cells)
    return HybridSystem(backend, opts.hybrid)


def _reference_module():
    """``systems.reference`` (scipy and PyStemmer: the reference extra), imported when a reference sweep runs."""
    return import_extra("memini_bench.systems.reference", "reference", "reference")


def _reference_store(encoder: TextEncoder, opts: RunOptions, ds: Dataset) -> object:
    store = _reference_module().ReferenceStore(encoder)
    store.ingest(ds.items)
    return store


def _reference(store: object, opts: RunOptions) -> System:
    reference = _reference_module()
    assert isinstance(store, reference.ReferenceStore)
    return reference.ReferenceSystem(store, opts.reference)


TARGETS = {
    "memini-hybrid": SweepTarget("memini-hybrid", HybridConfig, "hybrid", lambda o: (o.hybrid.keyword_backend,),
                                 _hybrid_store, _hybrid),
    "reference": SweepTarget("reference", ReferenceSettings, "reference", lambda o: (), _reference_store,
                             _reference),
}
ALIASES = {"hybrid": "memini-hybrid"}


def target_for(opts: RunOptions) -> SweepTarget:
    """The system a sweep runs: the one name of ``-systems``/``-system``, else memini-hybrid."""
    names = [ALIASES.get(n, n) for n in (*opts.lineup.systems, *opts.lineup.system)]
    if not names:
        return TARGETS["memini-hybrid"]
    if len(set(names)) != 1 or names[0] not in TARGETS:
        raise BenchError(f"-sweep: sweeps one system; give -systems one of {', '.join(TARGETS)} "
                         f"(got {','.join(names)})")
    return TARGETS[names[0]]
