"""The suites: each reads one data set format into a Dataset, found by name in ``registry.SUITES``.

A suite is a ``Suite`` (name, loader, whether it needs ``-data``, which ``LoadOptions`` it reads) or, for a plugin, a
plain callable ``load(path: str, options: LoadOptions) -> Dataset``. ``load(suite, path, options)`` resolves the
name (built-ins, the ``memini_bench.suites`` entry points, or ``module:attr``) and loads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import click

from memini_bench.core.dataset import Dataset
from memini_bench.core.settings import setting
from memini_bench.errors import BenchError
from memini_bench.loaders.longmemeval import ABSTENTION_MODES, SESSION_DOCS


@dataclass(frozen=True)
class LoadOptions:
    """Loader settings (LongMemEval's today; a suite says which it reads in ``Suite.uses``)."""

    GROUP = "data"

    session_doc: str = setting("session-doc", "full", "LongMemEval session text.", type=click.Choice(SESSION_DOCS))
    abstention: str = setting("abstention", "exclude", "LongMemEval _abs questions: exclude from scoring "
                              "(LongMemEval's protocol) or include (memini's).", type=click.Choice(ABSTENTION_MODES),
                              token="abs-")
    shared_haystack: bool = setting("shared-haystack", False, "LongMemEval: pool every record's sessions "
                                    "(deduplicated by id) into one group.")


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
    """Load suite ``name`` from ``path``; an unknown suite or a missing path is a BenchError."""
    s = suite(name)
    if s.needs_data and not path:
        raise BenchError(f"-suite {name} needs -data PATH (the data set file)")
    ds = s.load(path, options or LoadOptions())
    if not isinstance(ds, Dataset):
        raise BenchError(f"-suite {name}: its loader returned {type(ds).__name__}, not a Dataset")
    return ds
