"""Running systems over a data set: ingest once (timed), then one recall per question in data set order (timed).

Per system: ``ingest(items)`` (timed; a system with ``IngestTimed`` reports its own share instead), ``prepare``
(the optional hook, untimed), one ``recall(group, query, depth, now=, context=)`` per question (each timed), and
``close()`` (the optional hook) afterwards, also when a recall fails. The result holds everything the metrics need
(ranked ids, scores, token counts, latencies), so a metric never re-runs a system.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from memini_bench.core.contract import Closable, IngestTimed, Preparable, System
from memini_bench.core.dataset import Dataset
from memini_bench.core.runs import QuestionRun, RunResult, TokenMemo
from memini_bench.progress import progress


def run_system(system: System, ds: Dataset, depth: int) -> RunResult:
    """Ingest ``ds.items`` into ``system`` (timed), then recall each question at ``depth`` (= max K)."""
    t0 = time.perf_counter()
    system.ingest(ds.items)
    ingest_ms = (time.perf_counter() - t0) * 1e3
    if isinstance(system, IngestTimed):
        ingest_ms = float(system.ingest_time_ms)
    if isinstance(system, Preparable):  # e.g. embed every query in batches before the timed recalls
        system.prepare([q.query for q in ds.questions])
    runs = []
    tokens_of = TokenMemo()
    for q in progress(ds.questions, len(ds.questions), system.name):
        context = dict(q.context)
        t = time.perf_counter()
        hits = system.recall(q.group, q.query, depth, now=q.now, context=context)
        latency = (time.perf_counter() - t) * 1e3
        runs.append(QuestionRun(q, tuple(h.ids for h in hits), tuple(h.score for h in hits),
                                tuple(tokens_of[h.content] for h in hits), latency))
    corpus_tokens = sum(tokens_of[item.content] for item in ds.items)
    return RunResult(system.name, ds.name, depth, ingest_ms, corpus_tokens, tuple(runs))


def run_all(systems: Sequence[System], ds: Dataset, depth: int, *, close: bool = True) -> list[RunResult]:
    """Every system in order; with ``close`` each closable system is closed afterwards, whatever happened (a caller
    that reuses the systems passes False and closes them itself, with ``close_all``)."""
    try:
        return [run_system(s, ds, depth) for s in systems]
    finally:
        if close:
            close_all(systems)


def close_all(systems: Sequence[System]) -> None:
    for s in systems:
        if isinstance(s, Closable):
            s.close()
