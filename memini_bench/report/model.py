"""The numbers of the report: leaderboard rows, provenance, significance, the Pareto front and Wilson intervals.

- A ``Row`` is one (results file, system): per K every metric its rows hold, keyed by its registered name with the
  row's own cut-off written ``@K`` (``recall_any@K``, ``mrr``, ``latency_p50``: ``core.metrics.column_key``;
  fractions in 0..1, latencies in ms) and ``ingest_ms``, plus the file's index so every number links to its
  provenance (config, commit, data sha256, command). ``metric_columns`` lists the columns the files hold: the
  report shows every metric a run scored, one registered in a plugin included.
- ``significance(source)`` reads the file's own paired tests (``evaluation.significance``: McNemar for R@K, paired
  bootstrap for MRR and nDCG@K, Holm-adjusted over the file's whole family); nothing is re-tested here.
- ``pareto(points)``: the points no other point dominates when recall is to be high and latency low: p is on the
  front iff no q has ``q.recall >= p.recall`` and ``q.latency <= p.latency`` with one of them strict.
- ``wilson(p, n)``: the 95% Wilson score interval of a proportion p over n questions,
  ``(p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` with z = 1.959964.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from memini_bench.core.metrics import at_k, column_key, normalize
from memini_bench.core.metrics import parse as parse_metric
from memini_bench.errors import BenchError
from memini_bench.report.collect import Inputs, Source
from memini_bench.results.schema import Score

#: The leaderboard's first columns, in this order (then every other metric the files hold, in the order the
#: scorer wrote them): registered names with the row's cut-off as ``@K``, and the run's whole ingest.
LEAD = ("recall_any@K", "recall_all@K", "mrr", "ndcg@K", "latency_p50", "latency_p95", "ingest_ms",
        "tokens_injected@K")
INGEST = "ingest_ms"
#: Systems that embed nothing (the Markdown export's embedder column shows ``-`` for them, as the README does).
KEYWORD_ONLY = frozenset({"memini-keyword", "bm25s", "bm25s-global", "agentmemory-bm25", "lancedb-fts",
                          "qdrant-bm25"})
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Row:
    source: int
    file: str
    dataset: str
    system: str
    questions: int
    embedder: str
    by_k: dict[int, dict[str, float | None]]

    def value(self, metric: str, k: int) -> float | None:
        """The value of the column ``metric`` (``recall_any@K``, ``mrr``, ``ingest_ms``) at K; None when absent."""
        return self.by_k.get(k, {}).get(metric)


@dataclass(frozen=True)
class MetricColumn:
    """One leaderboard column: its key (a registered name, ``@K`` for the row's cut-off), whether it is per K,
    which way is better, and whether it is a fraction (shown as a percent)."""

    key: str
    per_k: bool
    higher: bool
    pct: bool

    @property
    def label(self) -> str:
        return self.key


@functools.cache
def column_of(key: str) -> MetricColumn:
    """The column of a key (``ingest_ms`` or a metric's registered name with ``@K``)."""
    if key == INGEST:
        return MetricColumn(key, False, False, False)
    try:
        metric = parse_metric(at_k(key, 1), flag="metric")
    except BenchError:  # a name the registry does not know (a plugin not installed here): shown, higher better
        return MetricColumn(key, key.endswith("@K"), True, True)
    return MetricColumn(key, key.endswith("@K"), metric.higher_is_better, metric.unit == "fraction")


def by_k(scores: list[Score], scored: bool = False) -> dict[int, dict[str, float | None]]:
    """Per K, every metric of the rows under its column key (``column_key``) and the run's ``ingest_ms``; a run
    scored by ``score`` (``scored``) has no ingest time: None, shown ``-`` and never the best."""
    return {s.k: {**{column_key(n, s.k): float(v) for n, v in s.scores.items()},
                  INGEST: None if scored else float(s.ingest_ms)} for s in scores}


def metric_columns(all_rows: list[Row]) -> list[MetricColumn]:
    """The leaderboard's columns: ``LEAD`` (those any row holds), then every other key the rows hold."""
    held = dict.fromkeys(key for r in all_rows for values in r.by_k.values() for key in values)
    return [column_of(key) for key in dict.fromkeys([*(k for k in LEAD if k in held), *held])]


def embedder_label(config: dict, system: str) -> str:
    """The README's embedder cell: ``all-MiniLM-L6-v2 @512`` from ``st:sentence-transformers/...|max_tokens=512``."""
    if system in KEYWORD_ONLY:
        return "-"
    model = str(config.get("embed_model", ""))
    return model.replace("st:sentence-transformers/", "").replace("|max_tokens=", " @") or "-"


def rows(inputs: Inputs) -> list[Row]:
    out = []
    for source in inputs.sources:
        doc = source.results
        for system in doc.systems:
            per_k = by_k([s for s in doc.scores if s.system == system], doc.config.get("mode") == "score")
            questions = max(s.questions for s in doc.scores if s.system == system)
            out.append(Row(source.index, source.name, doc.dataset, system, questions,
                           embedder_label(doc.config, system), per_k))
    return out


def ks_of(all_rows: list[Row]) -> list[int]:
    return sorted({k for r in all_rows for k in r.by_k})


def provenance(source: Source) -> dict:
    """What a number of this file traces to: the file, the commit, the data and its sha256, the command line."""
    c = source.results.config
    command = c.get("command") or c.get("argv")
    if isinstance(command, list):
        command = " ".join(str(a) for a in command)
    return {"index": source.index, "file": str(source.results.path), "dataset": source.dataset,
            "mode": c.get("mode", ""), "suite": c.get("suite", ""), "data": c.get("data", ""),
            "data_sha256": c.get("data_sha256", ""), "git_commit": c.get("git_commit", ""),
            "harness_version": c.get("harness_version", ""), "embed_model": c.get("embed_model", ""),
            "command": command or "", "per_question": str(source.per_question or ""), "config": c}


def significance(source: Source) -> list[dict]:
    """The file's paired tests, each metric by its registered name (an older file's ``R@5``: ``recall_any@5``)."""
    return [{**r, "metric": normalize(str(r.get("metric", "")))} for r in source.results.raw.get("significance") or []
            if isinstance(r, dict) and "system_a" in r]


def sig_lookup(source: Source) -> dict[tuple[str, str, str], dict]:
    """(system_a, system_b, metric) -> test row, both orders (the swapped row has delta negated); the metric by its
    registered name (an older file's ``R@5`` is ``recall_any@5``: ``core.metrics.normalize``)."""
    out: dict[tuple[str, str, str], dict] = {}
    for r in significance(source):
        name = r["metric"]
        out[(r["system_a"], r["system_b"], name)] = r
        out[(r["system_b"], r["system_a"], name)] = {**r, "system_a": r["system_b"],
                                                     "system_b": r["system_a"], "delta": -r["delta"]}
    return out


def best_row(group: list[Row], metric: str, k: int, higher: bool = True) -> Row | None:
    scored = [r for r in group if r.value(metric, k) is not None]
    if not scored:
        return None
    return max(scored, key=lambda r: r.value(metric, k) if higher else -r.value(metric, k))


def pareto(points: list[tuple[float, float]]) -> list[bool]:
    """For (latency, recall) points: True where no other point dominates (module docstring)."""
    flags = []
    for i, (lat, rec) in enumerate(points):
        dominated = any(j != i and r2 >= rec and l2 <= lat and (r2 > rec or l2 < lat)
                        for j, (l2, r2) in enumerate(points))
        flags.append(not dominated)
    return flags


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    if n <= 0:
        return (0.0, 1.0)
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return ((centre - half) / denom, (centre + half) / denom)
