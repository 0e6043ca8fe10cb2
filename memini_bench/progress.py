"""Progress bars: tqdm on stderr when stderr is a terminal and not in CI; nothing otherwise."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable


def enabled() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


def progress(iterable: Iterable, total: int, desc: str, unit: str = "it") -> Iterable:
    """``iterable`` wrapped in a tqdm bar when enabled; the plain iterable otherwise."""
    if not enabled():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)
