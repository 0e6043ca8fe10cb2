"""Per-question receipts of one data set, written as script files the receipts page loads from ``file://``.

A *run* is one system of one per-question file (label ``system · file``), so two runs of one system (two files)
sit side by side and their diff is the same filter as A against B. For a data set ``D`` the site holds:

- ``receipts/D/index.js``: every run's label and every question's id, category and first gold rank per run
  (-1: no gold within the recalled depth): enough for the filters ("A finds it within K, B does not": rank_A in
  [0, K) and rank_B not in [0, K); "ranks differ"), over all questions, without loading their texts;
- ``receipts/D/pNNNN.js``: ``PAGE`` questions each: query, gold ids with texts, each run's top K hits (ids,
  score, whether gold) and first gold rank, and once per page each hit's snippet of ``SNIPPET`` characters (the
  runs share most hits, so a snippet is written once). A page is loaded only when shown.

Scripts, not JSON: a page opened from ``file://`` may not ``fetch`` files beside it, but may load scripts.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from memini_bench.core.runs import first_gold_rank
from memini_bench.report.collect import Source
from memini_bench.report.texts import Texts, texts_for
from memini_bench.results.atomic_io import atomic_write

PAGE = 50
SNIPPET = 200


def _script(call: str, payload: object) -> bytes:
    return b"window." + call.encode() + b"(" + orjson.dumps(payload) + b");\n"


def build(sources: list[Source], folder: Path, slug: str, top_k: int, keep=None) -> dict:
    """Write data set ``slug``'s receipts under ``folder`` (module docstring); returns the page's summary. ``keep``
    (source, run) -> bool leaves a run out when False (the site keeps one run per system and settings)."""
    runs = [(f"{r.system} · {s.name}", r, s) for s in sources for r in s.runs if keep is None or keep(s, r)]
    texts = {s.index: texts_for(s.results.config) for s in sources if s.runs}
    order: dict[str, int] = {}
    for _, result, _ in runs:
        for q in result.questions:
            order.setdefault(q.question.id, len(order))
    by_run = [{q.question.id: q for q in result.questions} for _, result, _ in runs]
    ids = list(order)
    first = next(iter(texts.values()), Texts())
    questions = []
    for qid in ids:
        ref = next(m[qid] for m in by_run if qid in m)
        questions.append([qid, ref.question.category,
                          [first_gold_rank(m[qid]) if qid in m else None for m in by_run]])
    out = folder / "receipts" / slug
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "index.js", lambda w: w(_script("MB_RECEIPTS_INDEX", {
        "runs": [label for label, _, _ in runs], "questions": questions, "page": PAGE, "k": top_k,
        "notes": sorted({t.note for t in texts.values() if t.note})})))
    for start in range(0, len(ids), PAGE):
        items: dict[str, str] = {}
        page = [_receipt(qid, by_run, runs, texts, first, top_k, items) for qid in ids[start:start + PAGE]]
        atomic_write(out / f"p{start // PAGE:04d}.js",
                     lambda w, page=page, n=start // PAGE, items=items: w(_script(
                         "MB_RECEIPTS_PAGE", {"n": n, "q": page, "items": items})))
    return {"runs": len(runs), "questions": len(ids), "pages": (len(ids) + PAGE - 1) // PAGE}


def _snip(text: str | None) -> str:
    if text is None:
        return ""
    return text if len(text) <= SNIPPET else text[:SNIPPET - 1] + "…"


def _receipt(qid: str, by_run: list[dict], runs: list, texts: dict[int, Texts], first: Texts, top_k: int,
             items: dict[str, str]) -> dict:
    ref = next(m[qid] for m in by_run if qid in m)
    tx = first
    hits = []
    for m, (_, _, source) in zip(by_run, runs, strict=True):
        run = m.get(qid)
        if run is None:
            hits.append(None)
            continue
        tx = texts.get(source.index, first)
        gold = set(run.question.gold)
        for h in run.ranked_ids[:top_k]:
            if h and h[0] not in items:
                items[h[0]] = _snip(tx.items.get(h[0]))
        hits.append({"rank": first_gold_rank(run), "ms": round(run.latency_ms, 3), "top": [
            [list(h), run.scores[i] if i < len(run.scores) else None, bool(gold.intersection(h))]
            for i, h in enumerate(run.ranked_ids[:top_k])]})
    return {"id": qid, "cat": ref.question.category, "query": tx.queries.get(qid, ""),
            "gold": [[g, _snip(tx.items.get(g))] for g in ref.question.gold], "runs": hits}
