"""Reading results files back: ``load(path)`` returns the typed object of its kind (``results.schema``).

A file that cannot be read, is not JSON, or is not a results document of a known kind and schema version is a
one-line BenchError naming it and the fix.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from memini_bench.errors import BenchError
from memini_bench.results.schema import ResultsFile


def load(path: str | Path) -> ResultsFile:
    """The results file at ``path`` as its typed kind."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BenchError(f"{path}: cannot read ({exc.strerror}); check the path") from None
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise BenchError(f"{path}: not valid JSON; is this a memini-bench results file?") from None
    return ResultsFile.from_dict(doc, path)
