"""The numbers of the report: leaderboard rows, provenance, significance, the Pareto front and Wilson intervals.

- A ``Row`` is one (results file, system): per K the ``metrics.Score`` fields (fractions in 0..1, latencies in
  ms), plus the file's index so every number links to its provenance (config, commit, data sha256, command).
- ``significance(source)`` reads the file's own paired tests (``evaluation.significance``: McNemar for R@K, paired
  bootstrap for MRR and nDCG@K, Holm-adjusted over the file's whole family); nothing is re-tested here.
- ``pareto(points)``: the points no other point dominates when recall is to be high and latency low: p is on the
  front iff no q has ``q.recall >= p.recall`` and ``q.latency <= p.latency`` with one of them strict.
- ``wilson(p, n)``: the 95% Wilson score interval of a proportion p over n questions,
  ``(p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` with z = 1.959964.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memini_bench.report.collect import Inputs, Source

#: Leaderboard metrics: (key, label, per K?, higher is better?, shown as percent?)
METRICS: tuple[tuple[str, str, bool, bool, bool], ...] = (
    ("recall_at_k", "R@K", True, True, True),
    ("recall_all_at_k", "RecallAll@K", True, True, True),
    ("mrr", "MRR", False, True, True),
    ("ndcg_at_k", "nDCG@K", True, True, True),
    ("p50_ms", "p50 ms", False, False, False),
    ("p95_ms", "p95 ms", False, False, False),
    ("ingest_ms", "ingest ms", False, False, False),
    ("tokens_injected_mean", "tokens@K", True, False, False),
)
#: The significance row's metric name for a leaderboard metric at K (None: never tested).
SIG_METRIC = {"recall_at_k": "R@{k}", "ndcg_at_k": "nDCG@{k}", "mrr": "MRR"}
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
    by_k: dict[int, dict[str, float]]

    def value(self, metric: str, k: int) -> float | None:
        return self.by_k.get(k, {}).get(metric)


def embedder_label(config: dict, system: str) -> str:
    """The README's embedder cell: ``all-MiniLM-L6-v2 @512`` from ``st:sentence-transformers/...|max_tokens=512``."""
    if system in KEYWORD_ONLY:
        return "-"
    model = str(config.get("embed_model", ""))
    return model.replace("st:sentence-transformers/", "").replace("|max_tokens=", " @") or "-"


#: The results file's name of each leaderboard metric held in ``Score.scores`` (``{k}``: the row's K).
SCORE_NAMES = {"recall_at_k": "recall_any@{k}", "recall_all_at_k": "recall_all@{k}", "mrr": "mrr",
               "ndcg_at_k": "ndcg@{k}", "p50_ms": "latency_p50", "p95_ms": "latency_p95",
               "tokens_injected_mean": "tokens_injected@{k}"}


def _score(s, key: str) -> float | None:
    """The row's value of a leaderboard metric; None (shown "-") when the file does not hold it: a missing score
    is no 0.0."""
    name = SCORE_NAMES.get(key)
    if name is None:
        return float(getattr(s, key))
    value = s.value(name, None)
    return None if value is None else float(value)


def rows(inputs: Inputs) -> list[Row]:
    out = []
    for source in inputs.sources:
        doc = source.results
        for system in doc.systems:
            by_k = {s.k: {key: _score(s, key) for key, *_ in METRICS} for s in doc.scores if s.system == system}
            questions = max(s.questions for s in doc.scores if s.system == system)
            out.append(Row(source.index, source.name, doc.dataset, system, questions,
                           embedder_label(doc.config, system), by_k))
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
    return [r for r in source.results.raw.get("significance") or [] if isinstance(r, dict) and "system_a" in r]


def sig_lookup(source: Source) -> dict[tuple[str, str, str], dict]:
    """(system_a, system_b, metric) -> test row, both orders (the swapped row has delta negated)."""
    out: dict[tuple[str, str, str], dict] = {}
    for r in significance(source):
        out[(r["system_a"], r["system_b"], r["metric"])] = r
        out[(r["system_b"], r["system_a"], r["metric"])] = {**r, "system_a": r["system_b"],
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
