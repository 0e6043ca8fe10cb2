"""The compiled kernels of ``_kernels.c`` (built at install by setup.py), or None where they were not built or
``MEMINI_BENCH_KERNELS=0`` is set. Each one gives the same ids and floats as the numpy or Python path its caller
runs without it (keyword.py's BM25 top-k, vector.py's scores and top-k, fusion.py's min-max fusion of two lists);
tests compare them."""

from __future__ import annotations

import os
from types import ModuleType


def load() -> ModuleType | None:
    if os.environ.get("MEMINI_BENCH_KERNELS", "1") == "0":
        return None
    try:
        from memini_bench.retrieval import _kernels
    except ImportError:  # no C compiler at install time
        return None
    return _kernels


KERNELS = load()
