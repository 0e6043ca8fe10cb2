"""Turning the run's options into systems: the one place names become System objects.

The names come from ``-systems`` (default: memini's hybrid, vector, keyword) followed by every ``-system``; each is
a registered name or alias (``registry.SYSTEMS``), or ``module:attr``. Each factory gets the same
``SystemContext`` (the options, the lazily built shared encoder, a per-run store), so memini's three share one
backend and every system reuses one set of cached vectors (embedded where ``-executor`` says:
``executors.run_encoder``). A factory may return several systems.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memini_bench.core.contract import System, SystemContext
from memini_bench.core.registry import SYSTEMS
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.executors import run_encoder
from memini_bench.modes.options import RunOptions

DEFAULT_SYSTEMS = ("memini-hybrid", "memini-vector", "memini-keyword")
REWRITE = {"memini-hybrid": "memini-hybrid-rewrite", "hybrid": "memini-hybrid-rewrite"}


def wanted_names(opts: RunOptions, default: Sequence[str] = DEFAULT_SYSTEMS) -> list[str]:
    """``-systems`` (or ``default``) then ``-system``, each once, in order; with ``-rewrite`` memini-hybrid becomes
    memini-hybrid-rewrite (memini renames its hybrid the same way)."""
    names = [*(opts.core.systems or default), *opts.core.system]
    if opts.core.rewrite:
        if not any(n in REWRITE for n in names):
            raise BenchError("-rewrite: memini-hybrid is not among the systems run; add it to -systems or use "
                             "-system memini-hybrid-rewrite")
        names = [REWRITE.get(n, n) for n in names]
    return list(dict.fromkeys(names))


def context_for(opts: RunOptions, make_encoder: Callable[[], TextEncoder | None] | None = None,
                label: str = "") -> SystemContext:
    return SystemContext(opts, make_encoder or (lambda: run_encoder(opts)), label)


def build_systems(names: Sequence[str], ctx: SystemContext) -> list[System]:
    """The systems ``names`` stand for, in order (a factory returning several keeps their order)."""
    from memini_bench.core import builtins  # noqa: F401  (fills the registries)

    systems: list[System] = []
    for name in names:
        factory = SYSTEMS.get(name)
        if not callable(factory):
            raise BenchError(f"-systems {name}: not a factory (a callable taking a SystemContext)")
        made = factory(ctx)
        for system in made if isinstance(made, list | tuple) else [made]:
            if not isinstance(system, System):
                raise BenchError(f"-systems {name}: its factory returned {type(system).__name__}, which lacks the "
                                 "System contract (name, ingest, recall); see memini_bench.core.contract")
            systems.append(system)
    seen: set[str] = set()
    for s in systems:
        if s.name in seen:
            raise BenchError(f"-systems: two systems are named {s.name!r}; give each a distinct name")
        seen.add(s.name)
    return systems


def systems_for(opts: RunOptions, ctx: SystemContext | None = None,
                default: Sequence[str] = DEFAULT_SYSTEMS) -> list[System]:
    """The run's systems from its options (``wanted_names``), on one context."""
    return build_systems(wanted_names(opts, default), ctx or context_for(opts))


def fixed_encoder_context(opts: RunOptions, encoder: TextEncoder | None) -> SystemContext:
    """A context whose encoder is ``encoder`` (already built by a mode that embeds itself)."""
    ctx = context_for(opts, lambda: encoder)
    _ = ctx.encoder
    return ctx
