"""Run modes: the normal run (``run_systems``) and the other comparisons, one module each, named after what it does.

A mode module exposes ``NAME`` (as the errors call it), ``OPTIONS`` (its frozen options dataclass, whose fields are
its flags, or None), ``USES`` (what else it reads: option classes, all of whose flags it honours, and field names of
single flags), ``selected(opts) -> bool`` and ``run(opts) -> int``. The CLI runs the first selected mode in
``MODE_MODULES`` order (the order is the precedence); ``run_systems`` (last) is the default. Before it runs,
every flag the user gave is checked
against the mode's ``USES`` (and the suite's ``Suite.uses`` for loader flags): a flag the mode would ignore is an
error naming the mode, never silently dropped. Keep module-level imports light: every module is imported to build
--help.
"""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType

from memini_bench.errors import BenchError

MODE_MODULES = [
    "memini_bench.modes.listing",
    "memini_bench.modes.compare_files",
    "memini_bench.modes.rerank",
    "memini_bench.modes.gates",
    "memini_bench.modes.rerank_tier",
    "memini_bench.modes.vetobench",
    "memini_bench.modes.qa",
    "memini_bench.modes.sweep",
    "memini_bench.modes.multihop",
    "memini_bench.modes.entity_bridge",
    "memini_bench.modes.run_systems",
]
#: Honoured by every mode: -quiet silences ``progress`` process-wide, -traceback is read by ``dispatch``.
ALWAYS_USED = frozenset({"suite", "data", "quiet", "traceback"})


def modes() -> list[ModuleType]:
    return [importlib.import_module(name) for name in MODE_MODULES]


def mode_option_classes() -> list[type]:
    return [m.OPTIONS for m in modes() if m.OPTIONS is not None]


def used_fields(mod: ModuleType) -> set[str]:
    """The field names (= flag python names) the mode honours: its own options and everything in ``USES``."""
    used = set(ALWAYS_USED)
    for entry in ((mod.OPTIONS,) if mod.OPTIONS is not None else ()) + tuple(mod.USES):
        if isinstance(entry, str):
            used.add(entry)
        else:
            used.update(f.name for f in dataclasses.fields(entry))
    return used


def check_given(mod: ModuleType, opts) -> None:
    """Refuse a given flag the selected mode, or the selected suite, does not use."""
    from memini_bench.core.settings import flag_fields
    from memini_bench.loaders import LoadOptions, suite

    owners = {f.name: "-" + f.metadata["flag"] for cls in opts.concern_classes() + mode_option_classes()
              for f in flag_fields(cls)}
    used = used_fields(mod)
    for name in sorted(opts.given):
        if name in owners and name not in used:
            raise BenchError(f"{owners[name]}: not used by {mod.NAME}; drop it (see --help)")
    loader_flags = {f.name for f in dataclasses.fields(LoadOptions)} & set(opts.given) & used
    if loader_flags:
        s = suite(opts.suite)
        for name in sorted(loader_flags - s.uses):
            raise BenchError(f"{owners[name]}: not used by -suite {opts.suite}; drop it")


def selected_mode(opts) -> ModuleType:
    """The first mode of ``MODE_MODULES`` whose ``selected(opts)`` is true (the order is the precedence; the last,
    ``run_systems``, is always selected)."""
    for mod in modes():
        if mod.selected(opts):
            return mod
    raise AssertionError("run_systems is always selected")


def absolute_outputs(opts):
    """``opts`` with ``-out``, ``-per-question`` and ``-trec`` made absolute against the folder the run started in
    (an empty one stays empty)."""
    import dataclasses
    import os

    out = opts.output
    fixed = {name: os.path.abspath(value) for name in ("out", "per_question", "trec")
             if (value := getattr(out, name))}
    return dataclasses.replace(opts, output=dataclasses.replace(out, **fixed))


def dispatch(opts) -> int:
    """Run the selected mode with its output files as one unit (``results.atomic_io.RunOutputs``: staged while it
    runs, placed together when it ends, none left after a failure or an interrupt); a plugin's failure
    (``core.hooks.PluginError``) prints its whole trace first under ``-traceback``, then ends as the usual one
    line."""
    import sys

    from memini_bench import progress
    from memini_bench.core.hooks import PluginError, check_threads, run_guard
    from memini_bench.results.atomic_io import RunOutputs

    opts = absolute_outputs(opts)  # before any plugin code runs: a plugin's os.chdir cannot move them
    mod = selected_mode(opts)
    check_given(mod, opts)
    progress.set_quiet(opts.guard.quiet)
    try:
        with RunOutputs(), run_guard():
            code = mod.run(opts)
            check_threads()  # before the outputs are placed: a stray thread fails the run, nothing written
            return code
    except PluginError as exc:
        if opts.guard.traceback and exc.trace:
            sys.stderr.write(exc.trace)
        raise
