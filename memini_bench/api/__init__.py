"""The Python API: ``evaluate(systems, suite=..., data=..., k=(5, 10), ...) -> Report``, the same code path as
``memini-bench run`` (``modes.run_systems.RunMode``), and ``score(runs, qrels=... | suite=..., k=..., ...) ->
Report``, the same code path as ``memini-bench score`` (``modes.score.ScoreMode``): each plans and runs its verb's
mode under the CLI's contract (``modes.run_contract``: a plugin's ``os._exit``, a stray thread it leaves running,
a stream it closes are refused as the CLI refuses them), and writes no file (``Report.save`` writes the results
file the CLI writes). ``quiet=True`` (the default) writes nothing at all to stdout or stderr while the call runs,
a plugin's own output included.

``systems`` is one entry or a list of them; an entry is a registered name (``"memini-hybrid"``, ``"bm25s"``), a
factory spec as ``-systems`` takes it (``"./my_memory.py:make"``, ``"package.module:make"``), a factory (a callable
taking the run's ``SystemContext``, returning a System or a list of them) or a System object. None runs memini's
three (hybrid, vector, keyword), as the CLI does. Every other keyword is a flag of the verb by its python name
(``fusion=0.3``, ``holdout="held"``, ``limit=100``; ``exclude="known-bad"``); a keyword no flag of the verb takes,
or a value the flag refuses, is one ``BenchError`` naming the argument (``api.arguments``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import Any

from memini_bench.api.arguments import ks, options, text
from memini_bench.api.report import Report
from memini_bench.errors import BenchError

__all__ = ["Report", "evaluate", "score"]

SystemEntry = Any  # a name, a "module:attr" spec, a factory or a System object


def evaluate(systems: SystemEntry | Sequence[SystemEntry] | None = None, *, suite: str = "sample", data: str = "",
             k: int | Sequence[int] = (5,), embedder: str | None = None, significance: bool = False,
             quiet: bool = True, **flags: Any) -> Report:
    """Run ``systems`` on ``suite`` (``data``: its file; the sample needs none) and score them at every K of ``k``
    (see the module docstring); ``embedder`` as ``-embedder`` (default: the CLI's, MiniLM), ``significance`` as
    ``-significance`` (with ``reference``, ``resamples``, ``seed``), ``quiet`` as described above.
    Returns the ``Report``; writes no file (``Report.save`` does)."""
    from memini_bench.modes.run_systems import RunMode

    fn = "evaluate"
    values: dict[str, Any] = {"suite": text(fn, "suite", suite), "data": text(fn, "data", data, path=True),
                              "k": ks(fn, k), "quiet": _flag(fn, "quiet", quiet),
                              "significance": _flag(fn, "significance", significance), "no_write": True, **flags}
    given = {"suite", "k", "significance", "quiet", *flags} | ({"data"} if data else set())
    if embedder is not None:
        values["embedder"], given = text(fn, "embedder", embedder), given | {"embedder"}
    entries = _entries(systems)
    if entries is not None and all(isinstance(e, str) for e in entries):
        values["systems"], given = tuple(entries), given | {"systems"}
        entries = None
    opts = options(fn, "run", values, frozenset(given), {"k": k})
    mode = RunMode() if entries is None else RunMode(_maker(entries))
    outcome = _run(mode, opts, quiet)
    scored, plan = outcome.result, outcome.plan
    return Report(dataset=plan.state.ds.name, ks=tuple(plan.opts.k), scores=tuple(scored.scores),
                  significance=tuple(scored.extra.get("significance", ())), config=scored.config,
                  extra=scored.extra, markdown=outcome.markdown, file_name=plan.state.file_name)


def score(runs: str | os.PathLike | Sequence[str | os.PathLike], *, qrels: str | os.PathLike = "", suite: str = "",
          data: str | os.PathLike = "", k: int | Sequence[int] = (5,), metrics: str | Sequence[str] = (),
          significance: bool = False, quiet: bool = True, **flags: Any) -> Report:
    """Score rankings made elsewhere, as ``memini-bench score`` does: ``runs`` (one run file or several: TREC
    runs or JSONL ``{question_id, ranked_ids}`` rankings) against ``qrels`` (TREC qrels) or against ``suite`` and
    its ``data`` file; ``metrics`` as ``-metrics`` (registered names, a list or comma-separated), ``significance``
    as ``-significance`` (every pair of runs; ``resamples``, ``seed``, ``alpha``), any other flag of ``score`` by
    its python name (``exclude="known-bad"``, ``leaks="count"``). Returns the same ``Report`` as ``evaluate``;
    writes no file (``Report.save`` does)."""
    from memini_bench.modes.score import ScoreMode

    fn = "score"
    files = [runs] if isinstance(runs, str | os.PathLike) else runs
    if isinstance(files, bytes) or not isinstance(files, Sequence) or not files:
        raise BenchError(f"score(): runs={runs!r}: give a run file or a list of them")
    values: dict[str, Any] = {"run": tuple(text(fn, "runs", f, path=True) for f in files), "k": ks(fn, k),
                              "qrels": text(fn, "qrels", qrels, path=True), "suite": text(fn, "suite", suite),
                              "data": text(fn, "data", data, path=True), "quiet": _flag(fn, "quiet", quiet),
                              "significance": _flag(fn, "significance", significance), **flags}
    if metrics:
        values["metrics"] = metrics if isinstance(metrics, str) else ",".join(
            text(fn, "metrics", m) for m in (metrics if isinstance(metrics, Sequence) else [metrics]))
    if not values["suite"]:
        values.pop("suite")  # the qrels form: no suite
    given = frozenset(name for name, value in values.items() if value not in ("", ()))
    mode = ScoreMode()
    outcome = _run(mode, options(fn, "score", values, given, {"k": k, "metrics": metrics, "run": runs}), quiet)
    scored, plan = outcome.result, outcome.plan
    from memini_bench.results.identity import safe_name

    gold = plan.state.gold
    return Report(dataset=gold.dataset, ks=tuple(plan.opts.k), scores=tuple(scored.scores),
                  significance=tuple(scored.extra.get("significance", ())), config=scored.config,
                  extra=scored.extra, markdown=outcome.markdown, file_name=f"score-{safe_name(gold.dataset)}.json")


def _flag(fn: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise BenchError(f"{fn}(): {name}={value!r}: give True or False")
    return value


def _run(mode, opts, quiet: bool):
    """Plan and run ``mode`` as ``modes.dispatch`` does (its checks, ``run_contract``), writing nothing; under
    ``quiet`` nothing reaches stdout or stderr (``silenced``)."""
    from memini_bench.modes import check_options, run_contract

    check_options(mode, opts)
    with silenced(quiet), run_contract(opts):
        return mode.run(mode.plan(opts))


@contextmanager
def silenced(quiet: bool) -> Iterator[None]:
    """While the body runs, stdout and stderr go nowhere when ``quiet``: Python's streams and descriptors 1 and 2
    (a plugin's ``print``, a library's C-level write, a warning); both are put back after, whatever happens."""
    if not quiet:
        yield
        return
    saved: list[int] = []
    with open(os.devnull, "w") as sink:
        try:
            for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
                copy = -1
                try:
                    if stream is not None:
                        stream.flush()
                    copy = os.dup(fd)
                    os.dup2(sink.fileno(), fd)
                except (OSError, ValueError):
                    if copy >= 0:
                        os.close(copy)
                    copy = -1
                saved.append(copy)
            with redirect_stdout(sink), redirect_stderr(sink):
                yield
        finally:
            for fd, copy in zip((1, 2), saved, strict=False):
                if copy >= 0:
                    os.dup2(copy, fd)
                    os.close(copy)


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
