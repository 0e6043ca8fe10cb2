"""The compiled kernels of ``_kernels.c`` (built at install by setup.py), or None where they were not built or
``MEMINI_BENCH_KERNELS=0`` is set. Each one gives the same ids and floats as the numpy or Python path its caller
runs without it (keyword.py's BM25 top-k, vector.py's scores and top-k, fusion.py's min-max fusion of two lists);
tests compare them."""

from __future__ import annotations

import os
import sys
from types import ModuleType

from memini_bench import progress

SLOW_PATH_NOTE = ("memini-bench: note: the compiled kernels are not built here, so retrieval runs its slower numpy "
                  "path (the same results); build them with `pip install -e .` or `python setup.py build_ext "
                  "--inplace` (-quiet hides this line)")
_noted = [False]


def load() -> ModuleType | None:
    if os.environ.get("MEMINI_BENCH_KERNELS", "1") == "0":
        return None
    try:
        from memini_bench.retrieval import _kernels
    except ImportError:  # no C compiler at install time
        return None
    return _kernels


KERNELS = load()


def note_slow_path() -> None:
    """Once per process: one line on stderr when the kernels are missing (not switched off, not ``-quiet``)."""
    if KERNELS is not None or _noted[0] or os.environ.get("MEMINI_BENCH_KERNELS", "1") == "0" or progress.is_quiet():
        return
    _noted[0] = True
    print(SLOW_PATH_NOTE, file=sys.stderr, flush=True)
