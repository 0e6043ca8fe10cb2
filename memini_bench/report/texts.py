"""Question and item texts for the receipts, from the data set a results file names.

The file's ``config.data`` is read with its suite (``loaders.load``, the run's load options) only when the file
exists and its sha256 equals ``config.data_sha256``; otherwise the receipts show ids without texts and say why
(``Texts.note``). Loaded data sets are cached by (suite, path, options) for the report's lifetime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from memini_bench.errors import BenchError
from memini_bench.results.provenance import file_sha256


@dataclass
class Texts:
    queries: dict[str, str] = field(default_factory=dict)
    items: dict[str, str] = field(default_factory=dict)
    note: str = ""


@lru_cache(maxsize=8)
def _load(suite: str, path: str, session_doc: str, abstention: str, shared: bool) -> Texts:
    from memini_bench.loaders import LoadOptions, load

    options = LoadOptions(**{k: v for k, v in (("session_doc", session_doc), ("abstention", abstention))
                             if v}, shared_haystack=shared)
    try:
        ds = load(suite, path, options)
    except BenchError as exc:
        return Texts(note=f"texts omitted: {exc}")
    return Texts({q.id: q.query for q in ds.questions}, {i.id: i.content for i in ds.items})


def texts_for(config: dict) -> Texts:
    data, sha = str(config.get("data", "")), config.get("data_sha256")
    if not data or not isinstance(sha, str):
        return Texts(note="texts omitted: the results file names no single data file")
    if not Path(data).is_file():
        return Texts(note=f"texts omitted: {data} is not here (run the report from the folder the run ran in)")
    if file_sha256(data) != sha:
        return Texts(note=f"texts omitted: {data} has changed since the run (sha256 differs)")
    return _load(str(config.get("suite", "")), data, str(config.get("session_doc", "")),
                 str(config.get("abstention", "")), bool(config.get("shared_haystack", False)))
