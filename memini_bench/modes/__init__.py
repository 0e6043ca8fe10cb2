"""Run modes, one verb each: the normal run (``run``, ``run_systems``) and the other comparisons, one module each,
named after what it does.

A mode module holds its mode class (``modes.base.Mode``: plan, run, render, write); what the CLI needs of it
without importing it (its flags, name, summary, what else it reads) is its ``modes.specs.ModeSpec``. ``VERBS`` and
``STUDIES`` name each mode class by its verb (``memini-bench run``, ``memini-bench study rerank``), imported only
when that verb runs; ``dispatch`` runs one by name. The flat, Go-style form (no verb) picks its verb with
``routes.FLAT_ROUTES``, one table read top to bottom. Before a mode runs, every flag the user gave is checked against
the mode's spec (``ModeSpec.uses``, and the suite's ``Suite.uses`` for loader flags): a flag the mode would ignore is
an error naming the mode, never silently dropped.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from memini_bench.errors import BenchError

if TYPE_CHECKING:  # the package stays light: ``VERBS`` is read before any option class is needed
    from memini_bench.modes.specs import ModeSpec

#: The verbs that run a mode: each ``module:Class`` (a ``modes.base.Mode``), imported when named.
VERBS: dict[str, str] = {
    "run": "memini_bench.modes.run_systems:RunMode",
    "sweep": "memini_bench.modes.sweep:SweepMode",
    "compare": "memini_bench.modes.compare_files:CompareMode",
    "qa": "memini_bench.modes.qa:QAMode",
    "vetobench": "memini_bench.modes.vetobench:VetoMode",
    "list": "memini_bench.modes.listing:ListMode",
    "score": "memini_bench.modes.score:ScoreMode",
}
#: ``memini-bench study NAME``: memini's studies that are modes (the CLI adds the stand-alone study scripts).
STUDIES: dict[str, str] = {
    "rerank": "memini_bench.modes.rerank:RerankMode",
    "rerank-tier": "memini_bench.modes.rerank_tier:RerankTierMode",
    "gates": "memini_bench.modes.gates:GatesMode",
    "multihop": "memini_bench.modes.multihop:MultihopMode",
    "entity-bridge": "memini_bench.modes.entity_bridge:EntityBridgeMode",
}
#: Honoured by every mode: -quiet silences ``progress`` process-wide, -traceback is read by ``dispatch``.
ALWAYS_USED = frozenset({"suite", "data", "quiet", "traceback"})


def mode_option_classes() -> list[type]:
    from memini_bench.modes.specs import SPECS

    return [s.options for s in SPECS if s.options is not None]


def mode_for(verb: str):
    """The mode class instance of ``verb`` (``run``, ``qa``, ``study rerank``...)."""
    name = verb.removeprefix("study ")
    table = STUDIES if verb.startswith("study ") else VERBS
    if name not in table:
        raise BenchError(f"{verb}: no such verb; use one of {', '.join(all_verbs())}")
    module, _, cls = table[name].partition(":")
    return getattr(importlib.import_module(module), cls)()


def all_verbs() -> list[str]:
    return [*VERBS, *(f"study {name}" for name in STUDIES)]


def used_fields(spec: ModeSpec) -> set[str]:
    """The field names (= flag python names) the mode honours: ``ALWAYS_USED``, its own options and its ``uses``."""
    return spec.used_fields(ALWAYS_USED)


def check_given(spec: ModeSpec, opts) -> None:
    """Refuse a given flag the selected mode, or the selected suite, does not use."""
    import dataclasses

    from memini_bench.core.settings import flag_fields
    from memini_bench.loaders import LoadOptions, suite

    owners = {f.name: "-" + f.metadata["flag"] for cls in opts.concern_classes() + mode_option_classes()
              for f in flag_fields(cls)}
    used = used_fields(spec)
    for name in sorted(opts.given):
        if name in owners and name not in used:
            raise BenchError(f"{owners[name]}: not used by {spec.name}; drop it (see --help)")
    loader_flags = {f.name for f in dataclasses.fields(LoadOptions)} & set(opts.given) & used
    if loader_flags:
        s = suite(opts.suite)
        for name in sorted(loader_flags - s.uses):
            raise BenchError(f"{owners[name]}: not used by -suite {opts.suite}; drop it")


def selected_mode(opts) -> ModeSpec:
    """The spec of the mode the flat form runs for ``opts`` (``routes.route``)."""
    from memini_bench.modes.routes import route
    from memini_bench.modes.specs import spec_for

    return spec_for(route(opts))


def absolute_outputs(opts):
    """``opts`` with ``-out``, ``-per-question`` and ``-trec`` made absolute against the folder the run started in
    (an empty one stays empty)."""
    import dataclasses
    import os

    out = opts.output
    fixed = {name: os.path.abspath(value) for name in ("out", "per_question", "trec")
             if (value := getattr(out, name))}
    return dataclasses.replace(opts, output=dataclasses.replace(out, **fixed))


def _check_suite(spec, opts) -> None:
    """A mistyped ``-suite`` is refused as such before anything is built: the default embedder's missing extra
    (a core install has no MiniLM) would otherwise be the first error, naming the wrong fix."""
    from memini_bench.core.registry import SUITES

    name = opts.suite
    if "suite" in used_fields(spec) and ":" not in name and SUITES.canonical(name) is None:
        raise SUITES.unknown_error(name)


def _check_metric_depth(opts) -> None:
    """Every ``-metrics`` cut-off within the run's largest K (``core.metrics.check_cutoff``), before any work."""
    if opts.output.metrics:
        from memini_bench.core.metrics import check_cutoff, parse_list

        for measure in parse_list(opts.output.metrics, flag="-metrics"):
            check_cutoff(measure, opts.k, flag="-metrics")


def check_options(mode, opts) -> None:
    """Every check of a run's options before any work, the CLI's (``dispatch``) and the API's alike: the mode's own
    (``Mode.check``), every flag given is one it uses (``check_given``), a mistyped suite named as such, and every
    ``-metrics`` cut-off within the run's largest K (where the mode recalls to its largest K: ``recalls_to_k``)."""
    mode.check(opts)
    check_given(mode.spec, opts)
    _check_suite(mode.spec, opts)
    if mode.recalls_to_k:
        _check_metric_depth(opts)


@contextmanager
def run_contract(opts) -> Iterator[None]:
    """The contract every run runs under, the CLI's (``dispatch``) and the Python API's (``memini_bench.evaluate``,
    ``memini_bench.score``) alike: its output files as one unit (``results.atomic_io.RunOutputs``: staged while it
    runs, placed together when it ends, none left after a failure or an interrupt), the plugin guard
    (``core.hooks.run_guard``: a plugin's ``os._exit`` from any of its threads is refused), and, before the outputs
    are placed, the stray-thread check (``core.hooks.check_threads``: a plugin's thread still running fails the run,
    nothing written); ``-quiet`` silences the progress lines. A plugin's failure (``core.hooks.PluginError``) prints
    its whole trace first under ``-traceback``; a failed run that leaves a plugin's non-daemon thread running is
    marked ``hard_exit`` (the CLI ends the process after its line: the thread would keep it from exiting)."""
    import sys

    from memini_bench import progress
    from memini_bench.core.hooks import PluginError, check_threads, run_guard, threads_left
    from memini_bench.results.atomic_io import RunOutputs

    progress.set_quiet(opts.guard.quiet)
    try:
        with RunOutputs(), run_guard():
            yield
            check_threads()  # before the outputs are placed: a stray thread fails the run, nothing written
    except BenchError as exc:
        if opts.guard.traceback and isinstance(exc, PluginError) and exc.trace:
            sys.stderr.write(exc.trace)
        if threads_left():  # a plugin's thread would keep the process from exiting after the line
            exc.hard_exit = True  # type: ignore[attr-defined]
        raise


def dispatch(opts, verb: str = "", *, plan_only: bool = False, mode=None) -> int:
    """Run ``verb``'s mode (the flat form's ``routes.route`` when ""; ``mode``: an instance to run instead) under
    ``run_contract``, after the mode's own checks of the options (``Mode.check``) and the check that every flag
    given is one it uses (``check_given``); ``plan_only`` prints the plan and runs nothing. The output paths are
    made absolute before any plugin code runs (a plugin's ``os.chdir`` cannot move them)."""
    from memini_bench.modes.routes import route

    opts = absolute_outputs(opts)
    mode = mode or mode_for(verb or route(opts))
    check_options(mode, opts)
    with run_contract(opts):
        return mode.execute(opts, plan_only=plan_only)
