"""The results schema: one typed class per kind of results file, written and read through the same class.

Every results file is ``{"schema": "memini-bench.results", "schema_version": N, "kind": KIND, "config": {...},
...}`` (``SCHEMA_VERSION``, ``ADDED_IN``): the writer builds the kind's object and writes ``to_dict()``;
``from_dict`` (``results.read.load``) picks the class by ``kind`` alone, never by guessing from the keys, reads every
version back to 1 (``upgrade``: a field a later version added takes its default, an old ``Score`` row is read into
the open score mapping) and refuses a newer version or an unknown kind.

Kinds (``KIND``, the class, its own keys):

- ``run``: ``CompareResults``, a normal run's ``results`` (``Score`` rows: ``{metric name: value}`` per K and per
  category, fractions in 0..1);
  ``significance`` rows when asked for; a sweep's cells are runs too.
- ``ranking``: ``RankingResults``, ``-rerank`` and the re-rank tier (``RankRow`` per strategy and category).
- ``gate``: ``GateResults``, ``-vec-gate`` / ``-rerank-gate`` (threshold rows and the score ``distribution``).
- ``vetobench`` / ``vetobench-scale``: ``VetoResults`` (``suites``), ``VetoScaleResults`` (``points``).
- ``quality``: ``QualityResults``, the recall-quality scoreboard (``results`` rows).
- ``sweep-summary``, ``compare-files``, ``study`` (multihop, entity bridge, QA, the studies) and ``bench``
  (``make speed``, ``scale``, ``gpu``, ``ray-estimate``): their documents as written (``extra``).

Keys a kind does not own are kept in ``extra`` and written back as they were.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from memini_bench.core.metrics import parse as parse_metric
from memini_bench.errors import BenchError

SCHEMA = "memini-bench.results"
#: The version the writer writes. 1: the first schema; 2: ``Score`` gains ``leaked``, ``model_load_ms``,
#: ``embed_ms`` and ``store_ingest_ms`` (a version-1 row reads with their defaults, 0); 3: a ``Score`` row's metrics
#: are an open mapping, ``scores`` ``{metric name: value}`` and ``categories`` ``{category: {metric name: value}}``,
#: in place of the fixed fields (``LEGACY_FIELDS``: ``recall_at_k`` is ``recall_any@K`` ...), in a run's
#: ``results`` and a sweep summary's cells. Every version back to 1 reads.
SCHEMA_VERSION = 3
#: The fields each version added to a kind's rows (what a file of an older version lacks, read as the default).
ADDED_IN = {2: {"Score": ("leaked", "model_load_ms", "embed_ms", "store_ingest_ms")},
            3: {"Score": ("scores", "categories")}}


#: A version-1/2 ``Score`` row's metric fields and the canonical metric names they are (``{k}``: the row's K).
LEGACY_FIELDS = (("recall_at_k", "recall_any@{k}"), ("recall_all_at_k", "recall_all@{k}"), ("mrr", "mrr"),
                 ("ndcg_at_k", "ndcg@{k}"), ("p50_ms", "latency_p50"), ("p95_ms", "latency_p95"),
                 ("tokens_injected_mean", "tokens_injected@{k}"), ("token_efficiency", "token_efficiency@{k}"))
#: A version-1/2 row's per-category fields and the metric each holds.
LEGACY_CATEGORY_FIELDS = (("per_category", "recall_any@{k}"), ("per_category_all", "recall_all@{k}"))
#: A row's own fields besides its scores (every version).
_ROW_FIELDS = ("system", "dataset", "k", "questions", "ingest_ms", "leaked", "model_load_ms", "embed_ms",
               "store_ingest_ms")


@dataclass(frozen=True, slots=True)
class Score:
    """One (system, K) row: ``scores`` maps a canonical metric name (``core.metrics``: ``recall_any@5``, ``mrr``,
    ``latency_p50``) to its value (fractions in 0..1, latencies in ms); ``categories`` maps each category to its
    own ``{metric name: value}``; a metric is read by its registered name (``row["recall_any@{k}"]``, ``value``,
    ``category``), an old spelling read as the same metric (``core.metrics.parse``)."""

    system: str
    dataset: str
    k: int
    questions: int
    scores: dict[str, float] = field(default_factory=dict)
    categories: dict[str, dict[str, float]] = field(default_factory=dict)
    per_category_questions: dict[str, int] = field(default_factory=dict)
    ingest_ms: float = 0.0
    #: hits of another group dropped before scoring (``-leaks count``), over every question of the run
    leaked: int = 0
    #: ``ingest_ms`` apart: loading the embedding model, embedding, and the store's own share (the rest)
    model_load_ms: float = 0.0
    embed_ms: float = 0.0
    store_ingest_ms: float = 0.0

    def value(self, name: str, default: float = 0.0) -> float:
        """The score of the metric ``name`` (``{k}`` stands for the row's K) in any of its spellings
        (``recall_all@5``, ``RA@5``, ``recall_all_at_k`` at the row's K: ``core.metrics.parse``), ``default`` when
        the row does not hold it; an unknown name is a BenchError naming the closest valid one."""
        key = name.format(k=self.k)
        if key in self.scores:
            return self.scores[key]
        return self.scores.get(parse_metric(key, self.k, flag="metric").name, default)

    def __getitem__(self, name: str) -> float:
        """``value(name)``: ``row["recall_any@{k}"]``, ``row["mrr"]`` (0 when the row does not hold it)."""
        return self.value(name)

    def category(self, name: str) -> dict[str, float]:
        """Each category's value of the metric ``name`` (``{k}``: the row's K), for the categories that hold it."""
        key = name.format(k=self.k)
        return {c: v[key] for c, v in self.categories.items() if key in v}

    def to_row(self) -> dict[str, Any]:
        """The row as results schema 3 writes it."""
        return {"system": self.system, "dataset": self.dataset, "k": self.k, "questions": self.questions,
                "scores": dict(self.scores), "categories": {c: dict(v) for c, v in self.categories.items()},
                "per_category_questions": dict(self.per_category_questions), "ingest_ms": self.ingest_ms,
                "leaked": self.leaked, "model_load_ms": self.model_load_ms, "embed_ms": self.embed_ms,
                "store_ingest_ms": self.store_ingest_ms}

    @staticmethod
    def from_row(row: dict, where: str = "results row") -> Score:
        """A row of any schema version (3: ``scores``/``categories``; 1 and 2: the fixed metric fields, mapped by
        ``LEGACY_FIELDS``); a row without ``system`` and ``k`` is refused with one line."""
        if not isinstance(row, dict) or "system" not in row or "k" not in row or not (
                "scores" in row or "recall_at_k" in row):
            raise BenchError(f"{where}: a results row lacks system, k or its scores; is this a memini-bench file?")
        own = {f: row[f] for f in _ROW_FIELDS if f in row}
        if "scores" in row:
            return Score(scores=dict(row["scores"]), categories={c: dict(v) for c, v in
                                                                 row.get("categories", {}).items()},
                         per_category_questions=dict(row.get("per_category_questions", {})), **own)
        return Score(**own, **legacy_scores(row))


#: The keys that mark a version-1/2 ``Score`` row wherever a document holds one (a run's ``results``, a sweep
#: summary's baseline and cells, VetoBench's per-suite scores); a ``RankRow`` (no latency) is not one.
_LEGACY_MARK = ("system", "k", "recall_at_k", "mrr", "p50_ms")


def is_legacy_row(value: object) -> bool:
    return isinstance(value, dict) and all(key in value for key in _LEGACY_MARK) and "scores" not in value


def upgrade(doc: dict) -> dict:
    """A version-1/2 document as version 3 writes it: every ``Score`` row in it (at any depth) in the open form
    (``Score.from_row(row).to_row()``: the same numbers under their canonical names, the fields version 2 added
    at their defaults), every other value as it was; the version set to 3. A version-3 document is returned as
    it is."""

    def walk(value: object) -> object:
        if is_legacy_row(value):
            return Score.from_row(value).to_row()  # type: ignore[arg-type]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    if doc.get("schema_version", SCHEMA_VERSION) >= 3:
        return doc
    out = {k: (v if k == "config" else walk(v)) for k, v in doc.items()}
    out["schema_version"] = SCHEMA_VERSION
    return out


def legacy_scores(row: dict) -> dict[str, Any]:
    """``scores``, ``categories`` and ``per_category_questions`` of a version-1/2 row: the same numbers under their
    canonical names (nothing recomputed, nothing rounded)."""
    k = row["k"]
    scores = {name.format(k=k): row[f] for f, name in LEGACY_FIELDS if f in row}
    categories: dict[str, dict[str, float]] = {}
    for f, name in LEGACY_CATEGORY_FIELDS:
        for cat, v in row.get(f, {}).items():
            categories.setdefault(cat, {})[name.format(k=k)] = v
    return {"scores": scores, "categories": categories,
            "per_category_questions": dict(row.get("per_category_questions", {}))}


@dataclass(frozen=True, slots=True)
class RankRow:
    system: str
    category: str
    questions: int
    recall_any_at_1: float     # recall_any@1
    recall_any_at_k: float     # recall_any@K, K the file's -k
    mrr: float                 # over each strategy's whole list


#: A gate row's field before the registered vocabulary (read, never written).
GATE_LEGACY_FIELDS = {"pos_recall_at_k": "pos_recall_any"}
#: A ranking row's fields under their names before the registered vocabulary (read, never written).
RANK_LEGACY_FIELDS = {"recall_at_1": "recall_any_at_1", "recall_at_k": "recall_any_at_k"}


def _rows(cls: type, rows: object, where: str, required: tuple[str, ...]) -> tuple:
    """``rows`` (a list of dicts) as ``cls`` objects; unknown keys are dropped, a missing required one refused."""
    if not isinstance(rows, list):
        raise BenchError(f"{where}: results is not a list; is this a memini-bench file?")
    names = {f.name for f in dataclasses.fields(cls)}
    out = []
    for row in rows:
        missing = [k for k in required if not isinstance(row, dict) or k not in row]
        if missing:
            raise BenchError(f"{where}: a results row lacks {', '.join(missing)}; is this a memini-bench file?")
        out.append(cls(**{k: v for k, v in row.items() if k in names}))
    return tuple(out)


@dataclass(frozen=True)
class ResultsFile:
    """One results file: its kind (``KIND``), ``config`` (what made it), the kind's own fields, and ``extra`` (every
    other top-level key). ``path`` is where it was read from (None for one being written)."""

    KIND: ClassVar[str] = ""
    config: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    path: Path | None = field(default=None, compare=False)

    @property
    def dataset(self) -> str:
        return str(self.config.get("dataset", ""))

    @property
    def raw(self) -> dict:
        """The document as written (``to_dict()``)."""
        return self.to_dict()

    def body(self) -> dict[str, Any]:
        """The kind's own top-level keys (none for a kind that keeps everything in ``extra``)."""
        return {}

    @classmethod
    def parse_body(cls, doc: dict, where: str) -> tuple[dict[str, Any], set[str]]:
        """The constructor arguments of the kind's own fields, and the top-level keys they came from."""
        return {}, set()

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "kind": self.KIND, "config": self.config,
                **self.body(), **self.extra}

    @staticmethod
    def from_dict(doc: object, path: str | Path | None = None) -> ResultsFile:
        """The typed object of a results document, its class chosen by ``kind``."""
        where = str(path) if path is not None else "results document"
        if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
            raise BenchError(f"{where}: not a memini-bench results file (no config object)")
        if doc.get("schema") != SCHEMA or "kind" not in doc:
            raise BenchError(f"{where}: written before results schema 1 (no kind); rewrite it with "
                             "python cmd/migrate_results.py FILE (its numbers stay as they are)")
        version = doc.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= SCHEMA_VERSION:
            raise BenchError(f"{where}: results schema version {version!r}; this memini-bench reads versions "
                             f"1..{SCHEMA_VERSION} (upgrade it to read newer files)")
        cls = KINDS.get(doc["kind"])
        if cls is None:
            raise BenchError(f"{where}: unknown results kind {doc['kind']!r}; known: {', '.join(KINDS)}")
        doc = upgrade(doc)
        own, keys = cls.parse_body(doc, where)
        extra = {k: v for k, v in doc.items() if k not in {"schema", "schema_version", "kind", "config", *keys}}
        return cls(config=doc["config"], extra=extra, path=Path(path) if path is not None else None, **own)


@dataclass(frozen=True)
class CompareResults(ResultsFile):
    """A normal run (and each sweep cell): one ``Score`` per system and K; ``significance`` rows in ``extra``."""

    KIND: ClassVar[str] = "run"
    scores: tuple[Score, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"results": [s.to_row() for s in self.scores]}

    @classmethod
    def parse_body(cls, doc: dict, where: str) -> tuple[dict[str, Any], set[str]]:
        rows = doc.get("results", [])
        if not isinstance(rows, list):
            raise BenchError(f"{where}: results is not a list; is this a memini-bench file?")
        return {"scores": tuple(Score.from_row(r, where) for r in rows)}, {"results"}

    def score(self, system: str, k: int) -> Score | None:
        return next((s for s in self.scores if s.system == system and s.k == k), None)

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(s.system for s in self.scores))


@dataclass(frozen=True)
class RankingResults(ResultsFile):
    """``-rerank`` and the re-rank tier: one ``RankRow`` per strategy and category."""

    KIND: ClassVar[str] = "ranking"
    rows: tuple[RankRow, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"results": [dataclasses.asdict(r) for r in self.rows]}

    @classmethod
    def parse_body(cls, doc: dict, where: str) -> tuple[dict[str, Any], set[str]]:
        required = tuple(f.name for f in dataclasses.fields(RankRow))
        rows = doc.get("results", [])
        if isinstance(rows, list):
            rows = [{RANK_LEGACY_FIELDS.get(k, k): v for k, v in r.items()} if isinstance(r, dict) else r
                    for r in rows]
        return {"rows": _rows(RankRow, rows, where, required)}, {"results"}

    def row(self, system: str, category: str) -> RankRow | None:
        return next((r for r in self.rows if r.system == system and r.category == category), None)


def _list_kind(kind: str, key: str, attr: str, doc: str) -> type[ResultsFile]:
    """A kind whose own field ``attr`` is the list under the top-level ``key`` (rows kept as dicts)."""

    def body(self: ResultsFile) -> dict[str, Any]:
        return {key: list(getattr(self, attr))}

    def parse_body(cls: type, d: dict, where: str) -> tuple[dict[str, Any], set[str]]:
        value = d.get(key, [])
        if not isinstance(value, list):
            raise BenchError(f"{where}: {key} is not a list; is this a memini-bench file?")
        return {attr: tuple(value)}, {key}

    cls = dataclasses.make_dataclass(
        doc.split(":")[0], [(attr, tuple, field(default=()))], bases=(ResultsFile,), frozen=True,
        namespace={"KIND": kind, "body": body, "parse_body": classmethod(parse_body), "__doc__": doc})
    cls.__module__ = __name__
    return cls


VetoResults = _list_kind("vetobench", "suites", "suites", "VetoResults: veto recall of every system per suite.")
VetoScaleResults = _list_kind("vetobench-scale", "points", "points", "VetoScaleResults: the VetoBench scale curve.")
QualityResults = _list_kind("quality", "results", "boards", "QualityResults: the recall-quality scoreboard's rows.")


@dataclass(frozen=True)
class GateResults(ResultsFile):
    """``-vec-gate`` / ``-rerank-gate``: one row per threshold and the score distribution."""

    KIND: ClassVar[str] = "gate"
    rows: tuple[dict, ...] = ()
    distribution: dict = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {"results": list(self.rows), "distribution": self.distribution}

    @classmethod
    def parse_body(cls, doc: dict, where: str) -> tuple[dict[str, Any], set[str]]:
        rows = doc.get("results", [])
        if not isinstance(rows, list):
            raise BenchError(f"{where}: results is not a list; is this a memini-bench file?")
        rows = tuple({GATE_LEGACY_FIELDS.get(k, k): v for k, v in r.items()} if isinstance(r, dict) else r
                     for r in rows)
        return {"rows": rows, "distribution": doc.get("distribution", {})}, {"results", "distribution"}


@dataclass(frozen=True)
class SweepSummary(ResultsFile):
    """A sweep's ``summary.json``: the grid, every cell against the baseline, the selection."""

    KIND: ClassVar[str] = "sweep-summary"


@dataclass(frozen=True)
class CompareFilesResults(ResultsFile):
    """``-compare``: paired significance of runs read back from per-question files."""

    KIND: ClassVar[str] = "compare-files"


@dataclass(frozen=True)
class StudyResults(ResultsFile):
    """A study's figures (``-multihop``, ``-entity-bridge``, ``-qa``, the contradiction and entity studies)."""

    KIND: ClassVar[str] = "study"


@dataclass(frozen=True)
class BenchResults(ResultsFile):
    """A benchmark's measurements (``make speed``, ``make scale``, ``make gpu``, ``make ray-estimate``)."""

    KIND: ClassVar[str] = "bench"


def study_document(doc: dict) -> StudyResults:
    """A study's ``{"config": ..., ...}`` document as its typed results file (kind ``study``)."""
    rest = dict(doc)
    return StudyResults(config=rest.pop("config"), extra=rest)


def bench_document(doc: dict) -> BenchResults:
    """A benchmark's ``{"config": ..., ...}`` document as its typed results file (kind ``bench``)."""
    rest = dict(doc)
    return BenchResults(config=rest.pop("config"), extra=rest)


#: Every kind by its ``KIND`` (the one place a kind is registered: define its class above and add it here).
KINDS: dict[str, type[ResultsFile]] = {cls.KIND: cls for cls in (
    CompareResults, RankingResults, GateResults, VetoResults, VetoScaleResults, QualityResults, SweepSummary,
    CompareFilesResults, StudyResults, BenchResults)}
