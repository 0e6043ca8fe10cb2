"""``-list``: every registered system, suite and embedder (built-ins and installed plugins), one line each."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from memini_bench.core.settings import setting
from memini_bench.modes.options import RunOptions

NAME = "-list"
SUMMARY = "every registered system, suite, embedder and executor"


@dataclass(frozen=True)
class ListOptions:
    list: bool = setting("list", False, "Print every registered system, suite and embedder (plugins included), "
                         "one line each, and exit.")


OPTIONS = ListOptions
USES: tuple = ()


def selected(opts: RunOptions) -> bool:
    return opts.mode(ListOptions).list


def run(opts: RunOptions) -> int:
    from memini_bench.core.registry import listing

    sys.stdout.write(listing())
    return 0
