"""Reading results files back: ``load(path)`` returns the typed object of its kind (``results.schema``).

A results file is JSON, or gzip-compressed JSON (``summary.json.gz``: the committed summary of a sweep of hundreds
of cells is kept compressed; ``sweep_summary`` finds either form in a sweep's folder). A file that cannot be read,
is not JSON, or is not a results document of a known kind and schema version is a one-line BenchError naming it
and the fix.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import orjson

from memini_bench.core.inputs import read_regular
from memini_bench.errors import BenchError
from memini_bench.results.schema import ResultsFile

GZIP_MAGIC = b"\x1f\x8b"
#: A sweep folder's summary, in the order looked for: as the sweep writes it, and as committed when large.
SUMMARY_NAMES = ("summary.json", "summary.json.gz")


def load(path: str | Path) -> ResultsFile:
    """The results file at ``path`` as its typed kind."""
    path = Path(path)
    raw = read_regular(path)  # a FIFO, a device or an endless file is refused before reading
    if raw.startswith(GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            raise BenchError(f"{path}: a damaged gzip file; restore it (git checkout) or rerun the run that "
                             "wrote it") from None
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise BenchError(f"{path}: not valid JSON; is this a memini-bench results file?") from None
    return ResultsFile.from_dict(doc, path)


def sweep_summary(folder: str | Path) -> Path | None:
    """The summary file of the sweep folder ``folder`` (``SUMMARY_NAMES``), None when it has none."""
    return next((Path(folder) / n for n in SUMMARY_NAMES if (Path(folder) / n).is_file()), None)
