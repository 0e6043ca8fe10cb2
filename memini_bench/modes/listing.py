"""``-list``: every registered system, suite, embedder, executor and metric (built-ins and installed plugins), one
line each; ``-list metrics`` (or ``systems``, ``suites``, ``embedders``, ``executors``) one kind alone.
``core.registry.listing_rows`` gives the same as rows, for other front ends."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from memini_bench.core.settings import setting
from memini_bench.errors import BenchError
from memini_bench.modes.options import RunOptions

NAME = "-list"
SUMMARY = "every registered system, suite, embedder, executor and metric"


@dataclass(frozen=True)
class ListOptions:
    list: str = setting("list", "", "Print every registered system, suite, embedder, executor and metric (plugins "
                        "included), one line each, and exit; -list metrics (or systems, suites, ...) one kind, "
                        "each metric with its formula.", is_flag=False, flag_value="all")


OPTIONS = ListOptions
USES: tuple = ()


def selected(opts: RunOptions) -> bool:
    return bool(opts.mode(ListOptions).list)


def rows(kind: str) -> list[dict[str, str]]:
    """One kind's entries as rows, for any front end (``memini-bench list KIND``): a metric's row holds its
    spelling, parameters, formula, direction, ir_measures twin and citation (``core.metrics.listing``); another
    kind's its name, help, origin, extra and aliases (``core.registry.listing_rows``)."""
    from memini_bench.core import metrics, registry

    if kind not in registry.KINDS:
        raise BenchError(f"-list {kind!r}: list one of {', '.join(registry.KINDS)} (or -list alone for everything)")
    return metrics.listing() if kind == "metrics" else registry.listing_rows(kind)


def text(kind: str) -> str:
    """``-list KIND`` as printed (``all``: every kind, the metrics last with their formulas)."""
    from memini_bench.core import metrics, registry

    if kind == "all":
        return registry.listing() + metrics.listing_text()
    rows(kind)  # an unknown kind: one line
    return metrics.listing_text() if kind == "metrics" else registry.listing(kind)


def run(opts: RunOptions) -> int:
    sys.stdout.write(text(opts.mode(ListOptions).list))
    return 0
