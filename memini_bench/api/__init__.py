"""The Python API: ``evaluate(systems, suite=..., data=..., k=(5, 10), ...) -> Report``, the same code path as
``memini-bench run`` (``modes.run_systems.RunMode``: plan, run; the results file is written only by
``Report.save``).

``systems`` is one entry or a list of them; an entry is a registered name (``"memini-hybrid"``, ``"bm25s"``), a
factory spec as ``-systems`` takes it (``"./my_memory.py:make"``, ``"package.module:make"``), a factory (a callable
taking the run's ``SystemContext``, returning a System or a list of them) or a System object. None runs memini's
three (hybrid, vector, keyword), as the CLI does. Every other keyword is a flag of ``memini-bench run`` by its
python name (``fusion=0.3``, ``holdout="held"``, ``limit=100``); a keyword no flag of ``run`` takes is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memini_bench.api.report import Report
from memini_bench.errors import BenchError

__all__ = ["Report", "evaluate"]

SystemEntry = Any  # a name, a "module:attr" spec, a factory or a System object
#: The CLI's flags that write files beside the results file: not settings of ``evaluate`` (it writes nothing).
WRITERS = frozenset({"out", "per_question", "trec", "plot"})


def evaluate(systems: SystemEntry | Sequence[SystemEntry] | None = None, *, suite: str = "sample", data: str = "",
             k: int | Sequence[int] = (5,), embedder: str | None = None, significance: bool = False,
             quiet: bool = True, **flags: Any) -> Report:
    """Run ``systems`` on ``suite`` (``data``: its file; the sample needs none) and score them at every K of ``k``
    (see the module docstring); ``embedder`` as ``-embedder`` (default: the CLI's, MiniLM), ``significance`` as
    ``-significance`` (with ``reference``, ``resamples``, ``seed``), ``quiet`` silences the progress lines.
    Returns the ``Report``; writes no file (``Report.save`` does)."""
    from memini_bench import progress
    from memini_bench.modes import check_given
    from memini_bench.modes.run_systems import RunMode

    values, given = _values(suite, data, k, embedder, significance, quiet, flags)
    entries = _entries(systems)
    if entries is not None and all(isinstance(e, str) for e in entries):
        values["systems"], given = tuple(entries), given | {"systems"}
        entries = None
    opts = _options(values, given)
    mode = RunMode() if entries is None else RunMode(_maker(entries))
    check_given(mode.spec, opts)
    progress.set_quiet(opts.guard.quiet)
    outcome = mode.run(mode.plan(opts))
    return _report(outcome)


def _values(suite, data, k, embedder, significance, quiet, flags: dict) -> tuple[dict, frozenset[str]]:
    ks = (k,) if isinstance(k, int) else tuple(k)
    values: dict[str, Any] = {"suite": suite, "data": data, "k": ",".join(map(str, ks)), "quiet": quiet,
                              "significance": significance, "no_write": True, **flags}
    given = {"suite", "k", "significance", "quiet", *flags} | ({"data"} if data else set())
    if embedder is not None:
        values["embedder"], given = embedder, given | {"embedder"}
    return values, frozenset(given)


def _options(values: dict, given: frozenset[str]):
    """The run's options, as the CLI builds them; a keyword that is no flag of ``run`` is refused, with the
    closest one named."""
    import difflib

    from memini_bench.modes import used_fields
    from memini_bench.modes.options import RunOptions
    from memini_bench.modes.specs import spec_for

    known = used_fields(spec_for("run")) | {"no_write"}
    for name in sorted(set(values) & WRITERS):
        raise BenchError(f"evaluate(): {name} writes files, and evaluate writes none; use Report.save(path) for the "
                         f"results file, or memini-bench run -{name.replace('_', '-')}")
    for name in sorted(set(values) - known):
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else " (see memini-bench run --help)"
        raise BenchError(f"evaluate(): no setting {name}{hint}")
    return RunOptions.build(values, given)


def _entries(systems) -> list | None:
    if systems is None:
        return None
    if isinstance(systems, str) or not isinstance(systems, Sequence):
        return [systems]
    if not systems:
        raise BenchError("evaluate(): systems is empty; give a system, a factory, a name, or a list of them")
    return list(systems)


def _maker(entries: list) -> Callable:
    """A ``RunMode`` systems maker over ``entries`` (see the module docstring), in order."""
    from memini_bench.core.contract import System
    from memini_bench.core.registry import SYSTEMS
    from memini_bench.systems.lineup import distinct, made_by

    def make(opts, ctx) -> list:
        out: list = []
        for entry in entries:
            if isinstance(entry, str):
                out += made_by(SYSTEMS.get(entry, flag="evaluate(systems=...)"), ctx, entry, "evaluate(systems=...)")
            elif isinstance(entry, System) and not isinstance(entry, type):
                out.append(entry)
            else:
                name = getattr(entry, "__qualname__", type(entry).__name__)
                out += made_by(entry, ctx, name, "evaluate(systems=...)")
        return distinct(out)

    return make


def _report(outcome) -> Report:
    data, plan = outcome.data, outcome.plan
    return Report(dataset=plan.state["ds"].name, ks=tuple(plan.opts.k), scores=tuple(data["scores"]),
                  significance=tuple(data["extra"].get("significance", ())), config=data["config"],
                  extra=data["extra"], markdown=data["markdown"], file_name=plan.state["file_name"])
