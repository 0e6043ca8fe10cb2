"""Reading results files back: ``load(path)`` returns the typed object of its kind (``results.schema``).

A file that cannot be read, is not JSON, or is not a results document of a known kind and schema version is a
one-line BenchError naming it and the fix.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from memini_bench.core.inputs import read_regular
from memini_bench.errors import BenchError
from memini_bench.results.schema import ResultsFile


def load(path: str | Path) -> ResultsFile:
    """The results file at ``path`` as its typed kind."""
    path = Path(path)
    raw = read_regular(path)  # a FIFO, a device or an endless file is refused before reading
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise BenchError(f"{path}: not valid JSON; is this a memini-bench results file?") from None
    return ResultsFile.from_dict(doc, path)
