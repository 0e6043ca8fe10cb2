"""Reading results files back: ``load(path)`` returns a typed object for every kind the harness writes.

Kinds, told apart by their keys and ``config.mode``:

- ``CompareResults``: a normal run (``{"config", "results": [Score rows]}``); ``scores`` are ``metrics.Score``.
- ``RankingResults``: ``-rerank`` and the rerank tier (``results`` are per-category ``RankRow``s).
- ``GateResults``: ``-vec-gate`` / ``-rerank-gate`` (threshold rows plus the score distribution).
- ``VetoResults`` (``suites``), ``VetoScaleResults`` (``points``) and ``QualityResults`` (the scoreboard).
- ``GenericResults``: any other ``{"config", ...}`` document (a study's file), keeping the raw document.

A file that is not JSON, or not one of these shapes, is a one-line BenchError naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

import orjson

from memini_bench.errors import BenchError
from memini_bench.results.schema import RankRow, Score

RANKING_MODES = ("rerank", "rerank-tier")
GATE_MODES = ("vec-gate", "rerank-gate")


@dataclass(frozen=True)
class ResultsFile:
    path: Path
    config: dict
    raw: dict = field(repr=False, default_factory=dict)

    @property
    def dataset(self) -> str:
        return str(self.config.get("dataset", ""))


@dataclass(frozen=True)
class CompareResults(ResultsFile):
    scores: tuple[Score, ...] = ()

    def score(self, system: str, k: int) -> Score | None:
        return next((s for s in self.scores if s.system == system and s.k == k), None)

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(s.system for s in self.scores))


@dataclass(frozen=True)
class RankingResults(ResultsFile):
    rows: tuple[RankRow, ...] = ()

    def row(self, system: str, category: str) -> RankRow | None:
        return next((r for r in self.rows if r.system == system and r.category == category), None)


@dataclass(frozen=True)
class GateResults(ResultsFile):
    rows: tuple[dict, ...] = ()
    distribution: dict = field(default_factory=dict)


@dataclass(frozen=True)
class VetoResults(ResultsFile):
    suites: tuple[dict, ...] = ()


@dataclass(frozen=True)
class VetoScaleResults(ResultsFile):
    points: tuple[dict, ...] = ()


@dataclass(frozen=True)
class QualityResults(ResultsFile):
    boards: tuple[dict, ...] = ()


@dataclass(frozen=True)
class GenericResults(ResultsFile):
    pass


def _score(row: dict, path: Path) -> Score:
    names = {f.name for f in fields(Score)}
    missing = {"system", "k", "recall_at_k", "mrr"} - set(row)
    if missing:
        raise BenchError(f"{path}: a results row lacks {', '.join(sorted(missing))}; is this a memini-bench file?")
    return Score(**{k: v for k, v in row.items() if k in names})


def _rank_row(row: dict, path: Path) -> RankRow:
    try:
        return RankRow(**{f.name: row[f.name] for f in fields(RankRow)})
    except KeyError as exc:
        raise BenchError(f"{path}: a ranking row lacks {exc.args[0]!r}") from None


def load(path: str | Path) -> ResultsFile:
    """The results file at ``path`` as its typed kind (see the module docstring)."""
    path = Path(path)
    try:
        doc = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise BenchError(f"{path}: cannot read ({exc.strerror}); check the path") from None
    except orjson.JSONDecodeError:
        raise BenchError(f"{path}: not valid JSON; is this a memini-bench results file?") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
        raise BenchError(f"{path}: not a memini-bench results file (no config object)")
    config = doc["config"]
    mode = config.get("mode", "")
    if "suites" in doc:
        return VetoResults(path, config, doc, tuple(doc["suites"]))
    if "points" in doc:
        return VetoScaleResults(path, config, doc, tuple(doc["points"]))
    results = doc.get("results")
    if mode in RANKING_MODES:
        return RankingResults(path, config, doc, tuple(_rank_row(r, path) for r in results or []))
    if mode in GATE_MODES:
        return GateResults(path, config, doc, tuple(results or []), doc.get("distribution", {}))
    if isinstance(results, list) and results and isinstance(results[0], dict) and "dur_recall" in results[0]:
        return QualityResults(path, config, doc, tuple(results))
    if isinstance(results, list) and all(isinstance(r, dict) and "recall_at_k" in r for r in results) and results:
        return CompareResults(path, config, doc, tuple(_score(r, path) for r in results))
    return GenericResults(path, config, doc)
