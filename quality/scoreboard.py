"""The recall-quality scoreboard: memini's hybrid recall on the tier-mixed corpus (``quality.corpus``), judged on
recall and on precision (behaviour doc section 13). ``python -m quality.scoreboard -embedders hash,minilm``.

For each embedder and each config (``reserve=0``: k 5, no reserve; ``production``: k 5, reserve 2; ``prod k=3``:
k 3, reserve 2) a fresh store ingests the corpus, then the 40 questions are asked in order through
``HybridSystem`` (fusion alpha 0.5, pool 50, composite with memini's tier quality, synchronous reinforcement, so
access counts accumulate across the 40 queries). Per returned list of length n (n <= k):

- on-topic: the memory id starts with ``<query key>-``; injected: off-topic and durable (semantic/procedural).
- dur R / MRR: over the 10 fact queries, the share whose fact is returned (``metrics.recall_any`` at k) and the
  mean of 1/rank (``metrics.reciprocal_rank``: 0 if absent).
- epi R / MRR: the same over the 20 detail questions and their detail line.
- P@5 = mean over all 40 queries of on-topic / n; P@3 = mean of on-topic in the first 3 / min(3, n) (an empty
  list adds 0 and still counts).
- spray q / n: over the 10 episodic and confusable queries, queries with >= 1 injection / injections in total;
  inj q / n: the same over all 40 queries; inj fact / detail: injections on fact and on detail queries.

Cross-encoder rows (memini's ``rerank`` mode, run when ``-rerank-url`` / ``MEMINI_RERANK_URL`` or ``-rerank-model
local:PATH`` / ``MEMINI_RERANK_MODEL=local:PATH`` names one): the same store and recall, then the cross-encoder
reorders the returned top k (memini's ``finalizeRecall`` with a reranker and ``MEMINI_RERANK_POOL`` 0: it sees
the deduplicated top k, so the set, the precision and the injections stay and only the order, hence MRR and P@3,
moves). A reranker error stops the run (memini falls back to the composite order; a benchmark must not hide it).

The structural check memini asserts (``sanity_violations``): every config with the reserve on keeps durable recall
at or above the ``reserve=0`` baseline, compared at the config's own depth k. ``production`` (k 5) is compared
with the baseline's R@5 as reported. ``prod k=3`` cannot be compared at equal depth with a k=5 baseline's R@5 (a
narrower window may legitimately hold fewer facts), so its durable R@3 is compared with the baseline's R@3
computed from the baseline's top 3 (the baseline's own access history, which reinforced its top 5, not 3). A
violation exits 1.

Variants (``-variants fixed,pre-fix,ratio0.4,anchor-only``, ``quality.variants``): every config again under memini's
pre-fix baseline and its two gate probes, in fresh stores. A row of a variant other than ``fixed`` carries
``"variant"`` (a row without it is ``fixed``, so the default run's file is what it was); the sanity check applies
to ``fixed`` only (the pre-fix baseline is the regression memini fixed, and the probes were not taken).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import click

from memini_bench.core.dataset import Dataset
from memini_bench.core.runs import RunResult, first_gold_rank
from memini_bench.core.settings import Int, command, setting
from memini_bench.core.table import Cell, Column, Table, fmt_pct, markdown
from memini_bench.embed import endpoints
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import EmbedSettings, build_encoder
from memini_bench.errors import BenchError
from memini_bench.evaluation.metrics import recall_any, reciprocal_rank
from memini_bench.evaluation.runner import run_system
from memini_bench.rerankers import Candidate, Reranker, build_reranker, cross_encoder_requested, reorder_by_id
from memini_bench.results.identity import claim, script_identity
from memini_bench.results.provenance import harness
from memini_bench.results.schema import QualityResults
from memini_bench.results.write import write_results_file
from memini_bench.retrieval.composite import DURABLE_TIERS
from memini_bench.systems.config import HybridConfig, pool_size
from memini_bench.systems.memini import HybridSystem
from quality import corpus
from quality import variants as qvariants
from quality.variants import Variant


@dataclass(frozen=True, slots=True)
class Config:
    label: str
    reserve: int
    limit: int


CONFIGS = (Config("reserve=0", 0, 5), Config("production", 2, 5), Config("prod k=3", 2, 3))


@dataclass(frozen=True, slots=True)
class Board:
    """One config's scoreboard row (fractions in 0..1)."""

    dur_recall: float
    dur_mrr: float
    epi_recall: float
    epi_mrr: float
    p3: float
    p5: float
    spray_q: int
    spray_n: int
    inj_q: int
    inj_n: int
    inj_fact_n: int
    inj_detail_n: int


def injected_count(ids: Sequence[str], key: str, tiers: dict[str, str]) -> int:
    """Off-topic durable memories among ``ids``."""
    return sum(1 for i in ids if not corpus.on_topic(i, key) and tiers[i] in DURABLE_TIERS)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def durable_recall(result: RunResult, k: int) -> float:
    """Durable R@k: the share of the fact queries whose fact is in the top k (``metrics.recall_any``)."""
    return _mean([recall_any(run, k) for run in result.questions if run.question.category == "fact"])


def score_board(result: RunResult, tiers: dict[str, str]) -> Board:
    """The scoreboard metrics of one run (definitions in the module docstring)."""
    gold_runs: dict[str, list] = {"fact": [], "detail": []}
    inj = {cls: [] for cls in corpus.CLASSES}
    p3 = p5 = 0.0
    for run in result.questions:
        q = run.question
        key = corpus.topic_key(q)
        ids = [hit_ids[0] for hit_ids in run.ranked_ids]
        on = [corpus.on_topic(i, key) for i in ids]
        if ids:
            p5 += sum(on) / len(ids)
            p3 += sum(on[:3]) / min(3, len(ids))
        inj[q.category].append(injected_count(ids, key, tiers))
        if q.category in gold_runs:
            gold_runs[q.category].append(run)
    n = len(result.questions)
    spray = inj["episodic"] + inj["confusable"]
    every = [x for counts in inj.values() for x in counts]

    def recall(runs: list) -> float:
        return _mean([recall_any(r, result.depth) for r in runs])

    def mrr(runs: list) -> float:
        return _mean([reciprocal_rank(r) for r in runs])

    return Board(recall(gold_runs["fact"]), mrr(gold_runs["fact"]), recall(gold_runs["detail"]),
                 mrr(gold_runs["detail"]), p3 / n if n else 0.0, p5 / n if n else 0.0,
                 sum(1 for x in spray if x), sum(spray), sum(1 for x in every if x), sum(every),
                 sum(inj["fact"]), sum(inj["detail"]))


def hybrid(encoder: TextEncoder, config: Config, keyword_backend: str = "numpy",
           variant: Variant = qvariants.VARIANTS[qvariants.DEFAULT]) -> HybridSystem:
    """A fresh store and memini's hybrid recall for one config (and variant), reinforcing as memini's scoreboard
    does."""
    settings = HybridConfig(reinforce=True, semantic_reserve=config.reserve, keyword_backend=keyword_backend)
    return qvariants.hybrid(variant, encoder, settings, f"memini-hybrid {config.label}")


class Reranked:
    """A system whose top k (from ``inner``) is reordered by a cross-encoder (``rerankers.reorder_by_id``)."""

    def __init__(self, inner: HybridSystem, reranker: Reranker) -> None:
        self.inner, self.reranker = inner, reranker
        self.name = f"{inner.name} rerank"

    def ingest(self, items) -> None:
        self.inner.ingest(items)

    def recall(self, group, query, k, *, now=None, context=None):
        hits = self.inner.recall(group, query, k, now=now, context=context)
        by_id = {h.ids[0]: h for h in hits}
        order = self.reranker.rerank(query, [Candidate(h.ids[0], h.content) for h in hits])
        return [by_id[i] for i in reorder_by_id(list(by_id), order)]


def run_config(encoder: TextEncoder, ds: Dataset, config: Config, keyword_backend: str = "numpy",
               reranker: Reranker | None = None, variant: Variant = qvariants.VARIANTS[qvariants.DEFAULT]) -> RunResult:
    system = hybrid(encoder, config, keyword_backend, variant)
    return run_system(Reranked(system, reranker) if reranker is not None else system, ds, config.limit)


def sanity_violations(rows: Sequence[tuple[Config, RunResult]]) -> list[str]:
    """memini's structural check: each reserve-on config's durable R@k (k = its limit) against the ``reserve=0``
    baseline's durable R@k over the baseline's own top k (its reported figure when the limits are equal; the
    comparison at equal depth when the config's k is smaller, as for ``prod k=3``: see the module docstring)."""
    base = next((r for c, r in rows if c.reserve == 0), None)
    if base is None:
        return []
    out = []
    for c, result in rows:
        if c.reserve == 0:
            continue
        k = min(c.limit, base.depth)
        have, floor = durable_recall(result, k), durable_recall(base, k)
        if have < floor:
            out.append(f"{c.label}: durable R@{k} {fmt_pct(have)} below reserve=0's R@{k} ({fmt_pct(floor)})")
    return out


def table(embedder: str, ds: Dataset, rows: Sequence[tuple[Config, Board]]) -> str:
    """One embedder's scoreboard (the module docstring's columns), N and its marks in the footnote."""
    classes = [q.category for q in ds.questions]
    title = (f"## quality — {embedder}: {len(ds.items)} memories, {classes.count('fact')} fact / "
             f"{classes.count('episodic') + classes.count('confusable')} no-durable / {classes.count('detail')} "
             "detail queries")
    columns = (Column("config", "config", "left"), Column("k", "k"), Column("reserve", "reserve"),
               Column("durable", "dur R@k / MRR"), Column("episodic", "epi R@k / MRR"),
               Column("p3", "P@3", better="higher"), Column("p5", "P@5", better="higher"),
               Column("spray", "spray q/n"), Column("injected", "inj q/n"), Column("injected_by_class", "inj fact/det"))
    body = tuple((Cell(c.label, c.label), Cell(c.limit, str(c.limit)), Cell(c.reserve, str(c.reserve)),
                  Cell((b.dur_recall, b.dur_mrr), f"{fmt_pct(b.dur_recall)} / {b.dur_mrr:.3f}"),
                  Cell((b.epi_recall, b.epi_mrr), f"{fmt_pct(b.epi_recall)} / {b.epi_mrr:.3f}"),
                  Cell(b.p3, f"{b.p3:.3f}"), Cell(b.p5, f"{b.p5:.3f}"),
                  Cell((b.spray_q, b.spray_n), f"{b.spray_q}/{b.spray_n}"),
                  Cell((b.inj_q, b.inj_n), f"{b.inj_q}/{b.inj_n}"),
                  Cell((b.inj_fact_n, b.inj_detail_n), f"{b.inj_fact_n}/{b.inj_detail_n}")) for c, b in rows)
    note = (f"N: {len(ds.questions)} queries asked in order per config (dur: the fact queries; epi: the detail "
            "queries; spray: the no-durable ones; P@k and inj: all); q/n = queries with an injection / injections. "
            "No marks: no test between configs.")
    return markdown(Table(columns, body, title=title, notes=(note,), notes_in_markdown=True)) + "\n"


def query_rows(result: RunResult) -> list[dict]:
    return [{"id": r.question.id, "class": r.question.category, "gold": list(r.question.gold),
             "returned": [ids[0] for ids in r.ranked_ids], "scores": list(r.scores),
             "gold_rank": first_gold_rank(r) + 1} for r in result.questions]


def run(embedders: Sequence[str], *, dims: int = 256, keyword_backend: str = "numpy",
        configs: Sequence[Config] = CONFIGS, emit=print, reranker: Reranker | None = None,
        reranker_label: str = "", variant_list: Sequence[Variant] = (qvariants.VARIANTS[qvariants.DEFAULT],)
        ) -> tuple[dict, list[str]]:
    """Run every config for every embedder and variant (each also through ``reranker`` when given: the
    cross-encoder rows); returns the results document and any sanity violations."""
    ds = corpus.build()
    tiers = {it.id: it.tier for it in ds.items}
    results: list[dict] = []
    identities: dict[str, str] = {}
    problems: list[str] = []
    for name in embedders:
        encoder = build_encoder(EmbedSettings(embedder=name, dims=dims))  # the disk cache serves repeated runs
        identities[name] = encoder.embedder.identity
        for variant in variant_list:
            tag = {} if variant.name == qvariants.DEFAULT else {"variant": variant.name}
            for mode, ce in (("comp", None), ("rerank", reranker)):
                if mode == "rerank" and ce is None:
                    continue
                rows, runs = [], []
                for config in configs:
                    result = run_config(encoder, ds, config, keyword_backend, ce, variant)
                    board = score_board(result, tiers)
                    rows.append((config, board))
                    runs.append((config, result))
                    results.append({"embedder": name, "embed_model": encoder.embedder.identity, "mode": mode,
                                    **tag, **asdict(config), **asdict(board), "queries": query_rows(result)})
                label = encoder.embedder.identity + (f" · rerank ({reranker_label})" if ce is not None else " · comp")
                emit(table(label + (f" · {variant.name}" if tag else ""), ds, rows))
                if not tag:
                    problems += [f"{name} {mode} {p}" for p in sanity_violations(runs)]
    doc = {"config": {"dataset": ds.name, "memories": len(ds.items), "questions": len(ds.questions),
                      "group": corpus.GROUP, "clock": corpus.CLOCK.isoformat(), "fusion_alpha": 0.5,
                      "pool": {c.label: pool_size(c.limit) for c in configs}, "reinforce": True,
                      "keyword_backend": keyword_backend, "embedders": identities, "dims": dims,
                      "reranker": reranker_label, **_variants_config(variant_list), **harness()},
           "results": results}
    return doc, problems


def _variants_config(variant_list: Sequence[Variant]) -> dict:
    if [v.name for v in variant_list] == [qvariants.DEFAULT]:
        return {}  # the default run's config stays what it was
    return {"variants": {v.name: v.describe() for v in variant_list}}


@dataclass(frozen=True)
class ScoreboardOptions:
    """The flags of ``python -m quality.scoreboard``."""

    embedders: str = setting("embedders", "hash,minilm", "Comma-separated embedders: hash, minilm, st:PATH_OR_NAME, "
                             "..., sweep (every MEMINI_SWEEP_EMBEDDERS endpoint, url|model|dims).")
    dims: int = setting("dims", 256, "Dimensions of the hash embedder.", type=Int(min=1, max=65536))
    keyword_backend: str = setting("keyword-backend", "numpy", "BM25 backend.", type=click.Choice(["numpy", "fts5"]))
    rerank_url: str = setting("rerank-url", "", "Cross-encoder /rerank base URL (default $MEMINI_RERANK_URL): adds the "
                              "rerank rows (Bearer MEMINI_RERANK_API_KEY).")
    rerank_model: str = setting("rerank-model", "", "Model name for -rerank-url, or local:PATH for a local "
                                "sentence-transformers CrossEncoder folder (default $MEMINI_RERANK_MODEL).")
    variants: str = setting("variants", qvariants.DEFAULT, "Comma-separated hybrid variants: fixed (memini's current), "
                            "pre-fix (additive composite, gate 0.6 x evictee), ratio0.4, anchor-only (the gate "
                            "probes).")
    out: str = setting("out", "runs/quality.json", "The JSON results file.")
    no_write: bool = setting("no-write", False, "Print the tables only.")


@command(ScoreboardOptions, name="quality")
def scoreboard_command(args: ScoreboardOptions) -> None:
    """memini's recall-quality scoreboard: durable and episodic recall, precision and injections."""
    embedders, dims, keyword_backend, variants, out, no_write = (args.embedders, args.dims, args.keyword_backend,
                                                                 args.variants, args.out, args.no_write)
    rerank_url = args.rerank_url or os.environ.get("MEMINI_RERANK_URL", "")
    rerank_model = args.rerank_model or os.environ.get("MEMINI_RERANK_MODEL", "")
    names = endpoints.expand([n.strip() for n in embedders.split(",") if n.strip()])
    if not names:
        raise BenchError("-embedders: name at least one embedder (hash, minilm, st:PATH_OR_NAME)")
    variant_list = qvariants.parse(variants)
    reranker, label = None, ""
    if cross_encoder_requested(rerank_url, rerank_model):
        reranker = build_reranker(url=rerank_url, model=rerank_model)
        reranker.load()
        label = rerank_model or rerank_url
    ident = script_identity("quality", args, embedders=names, rerank_url=rerank_url, rerank_model=rerank_model)
    path = None if no_write else claim(Path(out), ident)  # before any embedding
    doc, problems = run(names, dims=dims, keyword_backend=keyword_backend, reranker=reranker, reranker_label=label,
                        variant_list=variant_list, emit=lambda text: (sys.stdout.write(text), sys.stdout.flush()))
    if path is not None:
        rest = {k: v for k, v in doc.items() if k not in ("config", "results")}
        write_results_file(path, QualityResults(config={**doc["config"], "identity": ident},
                                                boards=tuple(doc["results"]), extra=rest))
        print(f"wrote {path}", file=sys.stderr)
    for p in problems:
        print(f"quality: sanity check failed: {p}", file=sys.stderr)
    sys.exit(1 if problems else 0)


def main(argv: list[str] | None = None) -> None:
    from memini_bench.core.console import run_command

    run_command(scoreboard_command, argv, "quality")


if __name__ == "__main__":
    main()
