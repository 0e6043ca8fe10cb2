"""Running systems over a data set: ingest once (timed), then one recall per question in data set order (timed).

Per system: ``ingest(items)`` (timed; a system with ``IngestTimed`` reports its own share instead), ``prepare``
(the optional hook, untimed), one ``recall(group, query, depth, now=, context=)`` per question (each timed, and
bounded by ``-recall-timeout``), and ``close()`` (the optional hook) afterwards, also when a recall fails. Every
hook runs under ``core.hooks`` (the recalls under one ``HookLoop``): whatever it raises is one line naming the
system and the hook. Every recall's
return is checked (``evaluation.hits.check_hits``: a list of at most depth ``Hit``s of the question's group) before
it is kept. The result holds everything the metrics need (ranked ids, scores, token counts, latencies), so a metric
never re-runs a system.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from memini_bench.core import hooks
from memini_bench.core.contract import Closable, IngestTimed, Preparable, System
from memini_bench.core.dataset import Dataset
from memini_bench.core.runs import QuestionRun, RunResult, TokenMemo
from memini_bench.evaluation.hits import RunGuardOptions, check_hits
from memini_bench.progress import progress, stage


def _no_clock() -> tuple[float, float]:
    return 0.0, 0.0


def run_system(system: System, ds: Dataset, depth: int, guard: RunGuardOptions | None = None,
               clock: Callable[[], tuple[float, float]] | None = None) -> RunResult:
    """Ingest ``ds.items`` into ``system`` (timed), then recall each question at ``depth`` (= max K). ``clock``
    (the run's ``TextEncoder.clock``) splits the ingest time: the model load and embedding during the ingest call
    (or, for an ``IngestTimed`` system, its own ``ingest_parts_ms``) are reported apart from the store's share."""
    guard = guard or RunGuardOptions()
    clock = clock or _no_clock
    name = str(system.name)
    load0, embed0 = clock()
    t0 = time.perf_counter()
    with stage(f"{name} ingest of {len(ds.items)} items"):
        hooks.call(name, "ingest", system.ingest, ds.items)
    ingest_ms = (time.perf_counter() - t0) * 1e3
    load1, embed1 = clock()
    load_ms, embed_ms = load1 - load0, embed1 - embed0
    own_ms = hooks.call(name, "ingest_time_ms", lambda: system.ingest_time_ms if isinstance(system, IngestTimed)
                        else None)
    if own_ms is not None:
        ingest_ms = float(own_ms)
        parts = hooks.call(name, "ingest_parts_ms", lambda: getattr(system, "ingest_parts_ms", None)) or {}
        load_ms, embed_ms = float(parts.get("model_load_ms", 0.0)), float(parts.get("embed_ms", 0.0))
    if isinstance(system, Preparable):  # e.g. embed every query in batches before the timed recalls
        hooks.call(name, "prepare", system.prepare, [q.query for q in ds.questions])
    group_of = {item.id: item.group for item in ds.items}
    checked, latencies = [], []  # per question, in ds.questions' order (no tuple per recall for the collector)
    recall = hooks.call(name, "recall", getattr, system, "recall")  # looked up once, guarded like a hook
    with hooks.HookLoop(name, guard.recall_timeout, own=hooks.is_own(system)) as recalls:
        for q in progress(ds.questions, len(ds.questions), f"{name} recall", unit="questions"):
            context = dict(q.context)
            asked = f"question {q.id!r}"
            t = time.perf_counter()
            hits = recalls.call("recall for " + asked, recall, q.group, q.query, depth, now=q.now, context=context)
            latencies.append((time.perf_counter() - t) * 1e3)
            checked.append(check_hits(name, asked, q.group, hits, depth, group_of, guard.leaks))
    # the token counts after the loop, in one pass (a recall in between would push the memo out of the caches)
    tokens_of = TokenMemo()
    count = tokens_of.__getitem__
    runs = tuple([QuestionRun(q, ids, scores, tuple(map(count, contents)), latency)
                  for q, (ids, scores, contents, _, _), latency in zip(ds.questions, checked, latencies,
                                                                     strict=True)])
    corpus_tokens = sum(map(count, [item.content for item in ds.items]))
    leaked = sum([c.leaked for c in checked])
    return RunResult(name, ds.name, depth, ingest_ms, corpus_tokens, runs, leaked, load_ms, embed_ms)


def run_all(systems: Sequence[System], ds: Dataset, depth: int, *, close: bool = True,
            guard: RunGuardOptions | None = None,
            clock: Callable[[], tuple[float, float]] | None = None) -> list[RunResult]:
    """Every system in order; with ``close`` each closable system is closed afterwards, whatever happened (a caller
    that reuses the systems passes False and closes them itself, with ``close_all``)."""
    try:
        results = [run_system(s, ds, depth, guard, clock) for s in systems]
    except BaseException:
        if close:
            close_all(systems, quiet=True)  # the error on its way out is the one to report
        raise
    if close:
        close_all(systems)
    return results


def close_all(systems: Sequence[System], *, quiet: bool = False) -> None:
    """Close every closable system; the first failing ``close`` is one line (``PluginError``), raised after every
    other system was closed; ``quiet`` drops it (a caller already on its way out with another error)."""
    failed: hooks.PluginError | None = None
    for s in systems:
        if isinstance(s, Closable):
            try:
                hooks.call(str(s.name), "close", s.close)
            except hooks.PluginError as exc:
                failed = failed or exc
    if failed is not None and not quiet:
        raise failed
