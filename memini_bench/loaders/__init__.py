"""The suites: each reads one data set format into a Dataset, found by name in ``registry.SUITES``.

A suite is a ``Suite`` (name, loader, whether it needs ``-data``, which ``LoadOptions`` it reads) or, for a plugin, a
plain callable ``load(path: str, options: LoadOptions) -> Dataset``. ``load(suite, path, options)`` resolves the
name (built-ins, the ``memini_bench.suites`` entry points, or ``module:attr``) and loads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import click

from memini_bench.core.dataset import Dataset
from memini_bench.core.settings import setting
from memini_bench.errors import BenchError
from memini_bench.loaders.known_bad import EXCLUDES
from memini_bench.loaders.locomo_units import UNITS
from memini_bench.loaders.longmemeval import ABSTENTION_MODES, SESSION_DOCS
from memini_bench.loaders.longmemeval_turns import GRANULARITIES


@dataclass(frozen=True)
class LoadOptions:
    """Loader settings (a suite says which it reads in ``Suite.uses``). The fields in ``RECORDED_IF_SET`` enter a
    results identity only when not at their default (``identity_of``), so the runs made before they existed keep
    their identity."""

    GROUP = "data"

    session_doc: str = setting("session-doc", "full", "LongMemEval session text.", type=click.Choice(SESSION_DOCS))
    abstention: str = setting("abstention", "exclude", "LongMemEval _abs questions: exclude from scoring "
                              "(LongMemEval's protocol) or include (memini's).", type=click.Choice(ABSTENTION_MODES),
                              token="abs-")
    shared_haystack: bool = setting("shared-haystack", False, "LongMemEval: pool every record's sessions "
                                    "(deduplicated by id) into one group.")
    granularity: str = setting("granularity", "session", "LongMemEval retrieval unit: session, or turn (the user "
                               "turns, gold the has_answer turns, as LongMemEval's own retrieval code; session "
                               "scores from the turn ranking are reported too).", type=click.Choice(GRANULARITIES))
    unit: str = setting("unit", "turn", "LoCoMo retrieval unit: turn (dialogue turns), observation or summary (the "
                        "observations and session summaries in locomo10.json, gold through their evidence ids).",
                        type=click.Choice(UNITS))
    exclude: str = setting("exclude", "", "known-bad: leave out the questions on the data set's list of known bad "
                           "gold (memini_bench/data/known_bad; see docs/scoring.md). Either way a note says how many "
                           "questions the list touches.", type=click.Choice(EXCLUDES), token="no-")


#: LoadOptions fields a results identity records only when set (they came after results were committed).
RECORDED_IF_SET = ("granularity", "unit", "exclude")


def identity_of(options: LoadOptions) -> dict[str, object]:
    """The loader settings a results identity records: every field, less those of ``RECORDED_IF_SET`` at their
    default."""
    defaults = LoadOptions()
    return {name: value for name, value in dataclasses.asdict(options).items()
            if name not in RECORDED_IF_SET or value != getattr(defaults, name)}


@dataclass(frozen=True)
class Suite:
    """A registered suite: ``load(path, options)``; ``needs_data`` = ``-data`` is required; ``uses`` = the
    LoadOptions fields it reads (a given flag outside them is refused for this suite)."""

    name: str
    load: Callable[[str, LoadOptions], Dataset]
    needs_data: bool = True
    uses: frozenset[str] = frozenset()


def as_suite(name: str, target: object) -> Suite:
    """A registry target as a Suite: a Suite as is, a callable ``(path, options)`` wrapped."""
    if isinstance(target, Suite):
        return target
    if callable(target):
        return Suite(name, target)  # type: ignore[arg-type]
    raise BenchError(f"-suite {name}: the registered target is neither a Suite nor a loader function")


def suite(name: str) -> Suite:
    from memini_bench.core.registry import SUITES

    canonical = SUITES.canonical(name) or name
    return as_suite(canonical, SUITES.get(name))


def load(name: str, path: str = "", options: LoadOptions | None = None) -> Dataset:
    """Load suite ``name`` from ``path`` (or a registered data set's name, ``memini_bench.data.registry``); an
    unknown suite or a missing path is a BenchError."""
    from memini_bench.data.registry import check_sources, missing_file_hint, resolve_data

    s = suite(name)
    if s.needs_data and not path:
        raise BenchError(f"-suite {name} needs -data PATH (the data set file, or a name from memini-bench data list)")
    resolved, registered = resolve_data(s.name, path)  # -data NAME: a fetched registered set
    if registered is None and (hint := missing_file_hint(path)):
        raise BenchError(hint)
    ds = s.load(resolved, options or LoadOptions())
    if not isinstance(ds, Dataset):
        raise BenchError(f"-suite {name}: its loader returned {type(ds).__name__}, not a Dataset")
    if registered is not None:
        check_sources(registered, ds.sources)
    from memini_bench.loaders.known_bad import annotate

    return annotate(ds, s.name, (options or LoadOptions()).exclude)
