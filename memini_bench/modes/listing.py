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


def run(opts: RunOptions) -> int:
    from memini_bench.core.registry import KINDS, listing

    kind = opts.mode(ListOptions).list
    if kind != "all" and kind not in KINDS:
        raise BenchError(f"-list {kind!r}: list one of {', '.join(KINDS)} (or -list alone for everything)")
    sys.stdout.write(listing(None if kind == "all" else kind))
    return 0
