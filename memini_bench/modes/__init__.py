"""Run modes: the normal system comparison (``compare``) and the extra comparisons, one module each.

A mode module exposes ``FLAGS`` (click options from ``memini_bench.flags.flag``; their values reach the mode in
``RunOptions.extra`` under the flag's python name), ``selected(opts) -> bool`` and ``run(opts) -> int``. The CLI
runs the first selected mode in ``MODE_MODULES`` order; ``compare`` (last) is the default. Keep module-level
imports light: every module is imported to build --help.
"""

from __future__ import annotations

import importlib
from types import ModuleType

MODE_MODULES = [
    "memini_bench.modes.rerank",
    "memini_bench.modes.rerank_tier",
    "memini_bench.modes.gates",
    "memini_bench.modes.vetobench",
    "memini_bench.modes.compare",
]


def modes() -> list[ModuleType]:
    return [importlib.import_module(name) for name in MODE_MODULES]


def dispatch(opts) -> int:
    mods = modes()
    default = [m for m in mods if m.__name__.endswith(".compare")]
    for mod in [m for m in mods if m not in default] + default:
        if mod.selected(opts):
            return mod.run(opts)
    raise AssertionError("compare is always selected")
