"""What the CLI needs of every mode without importing it: each mode's own options (a frozen dataclass whose fields
are its flags) and its ``ModeSpec`` (verb, help topic, name, summary, options, what else it reads, the flags its
verb stands for). The modes' implementations (``modes.run_systems``, ``modes.sweep``...) import numpy, the systems
and the scorers; this module imports only the option classes of the concerns, so ``memini-bench VERB --help``, the
flat form's flags and its routes (``modes.routes``) are built without them, and a mode's module is imported only
when its verb runs (``modes.mode_for``).

A mode honours its own options and its ``uses``: option classes, all of whose flags it reads, and field names of
single flags. ``SPECS`` lists the modes in the order of ``--help-all``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import click

from memini_bench.core.options import CoreOptions
from memini_bench.core.settings import CommaList, Int, Real, setting
from memini_bench.embed.settings import EmbedSettings
from memini_bench.errors import BenchError
from memini_bench.evaluation.hits import RunGuardOptions
from memini_bench.executors import ExecutorOptions
from memini_bench.loaders import LoadOptions
from memini_bench.loaders.poison import poison_setting
from memini_bench.modes.score_options import ScoreOptions
from memini_bench.rerankers import cross_encoder_requested
from memini_bench.rerankers.crossencoder import APIS
from memini_bench.results.options import OutputOptions
from memini_bench.studies.defaults import DEFAULT_CAPS, DEFAULT_VOCABULARY, VOCABULARY_NAMES
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.lineup import LineupOptions
from memini_bench.systems.reference_settings import ReferenceSettings
from memini_bench.vetobench.defaults import (
    COMPOSITE_EMBEDDER,
    DEFAULT_FILES,
    DEFAULT_SEED,
    DEFAULT_SIZES,
    EXTRACT_E2E,
    VETO_FILES,
)

#: -rerank's default categories (LongMemEval's).
DEFAULT_CATS = "knowledge-update,temporal-reasoning"
#: -qa's default -qa-k (memini's 10 memories).
QA_DEFAULT_K = (10,)


@dataclass(frozen=True)
class SystemsRunOptions:
    """The normal run's own flags: its paired tests (-significance, -resamples, -seed), -poison, -categories,
    -protocol."""

    significance: bool = setting("significance", False, "Also test every system against -reference (default the "
                                 "hybrid, or the first system) on the same questions: exact McNemar on R@K, paired "
                                 "bootstrap on MRR and nDCG@K, Holm across the family.")
    resamples: int = setting("resamples", 10_000, "Bootstrap resamples for -significance and -sweep.",
                             type=Int(min=100, max=1_000_000))
    seed: int = setting("seed", 0, "Bootstrap seed for -significance and -sweep.", type=Int(min=0))
    poison: int = poison_setting()
    categories: tuple[str, ...] = setting("categories", (), "Per-category tables for these systems (comma-separated "
                                          "names, or all); default the hybrid, else the first system.",
                                          type=CommaList(allow_empty=True))
    protocol: str = setting("protocol", "standard", "How the data set is written and asked: standard (every item "
                            "ingested, then every question) or time-ordered (LoCoMo, LongMemEval: items written in "
                            "time order, each question asked at its own time against what was written before it, "
                            "reported beside the standard protocol; docs/temporal.md).",
                            type=click.Choice(["standard", "time-ordered"]))


@dataclass(frozen=True)
class ListOptions:
    list: str = setting("list", "", "Print every registered system, suite, embedder, executor and metric (plugins "
                        "included), one line each, and exit; -list metrics (or systems, suites, ...) one kind, "
                        "each metric with its formula.", is_flag=False, flag_value="all")


@dataclass(frozen=True)
class SignificanceOptions:
    compare: tuple[str, ...] = setting("compare", (), "Paired significance from -per-question files: one file "
                                       "(its -reference system against the others) or two (system by system).",
                                       type=CommaList(allow_empty=True, unique=True))
    reference: str = setting("reference", "", "The system the others are tested against: by -significance "
                             "(default memini-hybrid when it runs, else the first system) and by -compare with one "
                             "file (default memini-hybrid).")
    compare_systems: tuple[str, ...] = setting("compare-systems", (), "-compare with two files: the systems to "
                                               "pair (default: every system both files hold).",
                                               type=CommaList(allow_empty=True))

    def __post_init__(self) -> None:
        if len(self.compare) > 2:
            raise BenchError(f"-compare: give one or two per-question files, not {len(self.compare)}")


@dataclass(frozen=True)
class RerankOptions:
    rerank: bool = setting("rerank", False, "Compare pure RRF with memini's recency and temporal re-rankers on the "
                           "same fused candidates (R@1 / R@K / MRR per category).")
    rerank_cats: tuple[str, ...] = setting("rerank-cats", tuple(DEFAULT_CATS.split(",")), "Question categories for "
                                           "-rerank, comma-separated (\"\" = all).", type=CommaList(allow_empty=True))


@dataclass(frozen=True)
class GateOptions:
    vec_gate: tuple[float, ...] = setting("vec-gate", (), "Vector-gate sweep over these thresholds (e.g. "
                                          "0,0.2,0.3,0.4): positive recall vs foreign-group injection.",
                                          type=CommaList(Real(min=0), sort=True, allow_empty=True))
    rerank_gate: tuple[float, ...] = setting("rerank-gate", (), "Cross-encoder score-gate sweep over these "
                                             "thresholds (needs -rerank-url or -rerank-model local:PATH).",
                                             type=CommaList(Real(), sort=True, allow_empty=True))
    rerank_gate_pool: int = setting("rerank-gate-pool", 20, "Candidates reranked per question for -rerank-gate.",
                                    type=Int(min=1, max=1000))

    def __post_init__(self) -> None:
        if self.vec_gate and self.rerank_gate:
            raise BenchError("-vec-gate and -rerank-gate: give one sweep per run")


@dataclass(frozen=True)
class RerankTierOptions:
    rerank_url: str = setting("rerank-url", "", "Cross-encoder base URL (POST {URL}/rerank, Bearer "
                              "MEMINI_RERANK_API_KEY): runs the rerank-tier comparison (or feeds -rerank-gate).")
    rerank_model: str = setting("rerank-model", "", "Cross-encoder model name for -rerank-url, or local:PATH for a "
                                "local sentence-transformers CrossEncoder folder.")
    rerank_api: str = setting("rerank-api", "cohere", "Request shape for -rerank-url: cohere ({model, query, "
                              "documents}: Cohere, Jina, llama-server, vLLM) or tei ({query, texts}).",
                              type=click.Choice(list(APIS)))
    rerank_timeout: float = setting("rerank-timeout", 60.0, "Seconds to wait for one /rerank reply.",
                                    type=Real(min=0, min_open=True, max=3600))
    llm_rerank: bool = setting("llm-rerank", False, "Rerank tier with an LLM through MEMINI_LLM_BASE_URL, "
                               "MEMINI_LLM_API_KEY and MEMINI_LLM_MODEL (one chat call per question; use -limit).")
    llm_rerank_pool: int = setting("llm-rerank-pool", 20, "Head of the hybrid order handed to the reranker per "
                                   "question.", type=Int(min=1, max=1000))
    rerank_max_doc_chars: int = setting("rerank-max-doc-chars", 2048, "Cross-encoder: cut each candidate to this "
                                        "many characters (0 = no cap).", type=Int(min=0))
    rerank_max_batch_chars: int = setting("rerank-max-batch-chars", 6000, "Cross-encoder: cap the query + "
                                          "documents characters per request, splitting into batches (0 = no cap).",
                                          type=Int(min=0))


@dataclass(frozen=True)
class VetoOptions:
    veto_files: str = setting("veto-files", DEFAULT_FILES, "VetoBench: veto-composite with each scenario's files in "
                              "scope (known), without (none), or both.", type=click.Choice(list(VETO_FILES)))
    veto_embedders: tuple[str, ...] = setting("veto-embedders", ("hash", "minilm"), "VetoBench: embedders for "
                                              "memini's hybrid/vector systems, one set each (comma-separated; -dims "
                                              "applies to hash).", type=CommaList())
    composite_embedder: str = setting("composite-embedder", COMPOSITE_EMBEDDER, "VetoBench: veto-composite's "
                                      "semantic embedder: fnv64 (the doc's 64-dim hashed bag of tokens) or any "
                                      "-embedder name.")
    scale: bool = setting("scale", False, "VetoBench: also run the scale curve (generated distractor decisions, "
                          "veto recall@5 per system at each -veto-sizes).")
    veto_sizes: tuple[int, ...] = setting("veto-sizes", DEFAULT_SIZES, "VetoBench -scale: corpus sizes "
                                          "(decisions).", type=CommaList(Int(min=1, max=1_000_000), sort=True))
    scale_seed: int = setting("scale-seed", DEFAULT_SEED, "VetoBench -scale: seed of the distractor generator.",
                              type=Int())
    live: bool = setting("live", False, "VetoBench: behavioural layer through the OpenAI-compatible chat endpoint in "
                         "MEMINI_LLM_BASE_URL / _API_KEY / _MODEL (temperature 0).")
    archive: str = setting("archive", "", "VetoBench -live: write every context, reply and verdict to this JSON file "
                           "(-run<i> added before .json when -veto-runs > 1).")
    veto_runs: int = setting("veto-runs", 1, "VetoBench -live: repeat the run N times.", type=Int(min=1, max=1000))
    veto_conditions: tuple[str, ...] = setting("veto-conditions", (), "VetoBench -live: conditions, comma-separated: "
                                               "none, conventions, flatfile, extract-e2e (our extraction over the "
                                               "decision transcripts, then veto-composite), a system of the run "
                                               "(ranks the corpus), or any other registered system (e.g. mem0: "
                                               "ingests the transcripts, its own top 5 as context); default: the "
                                               "built-ins and the run's systems.", type=CommaList(allow_empty=True))
    extract_model: str = setting("extract-model", "", "VetoBench -live extract-e2e: the chat model that extracts "
                                 "the decisions (default: MEMINI_LLM_MODEL, the agent's).")
    veto_summary: tuple[str, ...] = setting("veto-summary", (), "VetoBench: summarize these -archive files "
                                            "(comma-separated): violation and acknowledgement rates as min-max "
                                            "across runs, veto absence (violations with the veto present vs "
                                            "absent) and what ingestion kept.", type=CommaList(allow_empty=True))

    def __post_init__(self) -> None:
        if (self.archive or self.veto_runs != 1 or self.veto_conditions) and not self.live:
            raise BenchError("-archive / -veto-runs / -veto-conditions: need -live")
        if self.extract_model and EXTRACT_E2E not in self.veto_conditions:
            raise BenchError(f"-extract-model: only the {EXTRACT_E2E} condition extracts; add it to -veto-conditions")


@dataclass(frozen=True)
class QAOptions:
    qa: bool = setting("qa", False, "End-to-end QA (memini's cmd/qa): recall, a reader LLM (MEMINI_LLM_*) answers "
                       "from the memories, a judge LLM (MEMINI_JUDGE_*, default the reader's) grades; per-category "
                       "accuracy, tokens, McNemar between arms; resumable.")
    qa_k: tuple[int, ...] = setting("qa-k", QA_DEFAULT_K, "-qa: memories given to the reader, comma-separated; each "
                                    "value times each system is one arm (memini's 10).",
                                    type=CommaList(Int(min=1, max=100), sort=True))
    concurrency: int = setting("concurrency", 6, "-qa: questions answered and graded at once (memini's 6 workers).",
                               type=Int(min=1, max=64))
    qa_retries: int = setting("qa-retries", 3, "-qa: retries of a failed LLM call (then left for a resumed run).",
                              type=Int(min=0, max=10))
    qa_timeout: float = setting("qa-timeout", 120.0, "-qa: seconds per reader or judge call (one try; then "
                                "-qa-retries).",
                                type=Real(min=0, min_open=True))
    qa_checkpoint: str = setting("qa-checkpoint", "", "-qa: resume checkpoint (default <out>/<stem>.ckpt.jsonl).")
    qa_archive: str = setting("qa-archive", "", "-qa: every prompt, reply and verdict (default "
                              "<out>/<stem>.archive.jsonl).")
    qa_categories: tuple[str, ...] = setting("qa-categories", (), "-qa: grade only these question categories "
                                             "(comma-separated; e.g. 1,2,3,4 on LoCoMo).",
                                             type=CommaList(allow_empty=True))
    qa_exclude: tuple[str, ...] = setting("qa-exclude", (), "-qa: leave these categories out (e.g. 5, LoCoMo's "
                                          "adversarial); stated.",
                                          type=CommaList(allow_empty=True))
    qa_runs: int = setting("qa-runs", 1, "-qa: independent reader and judge passes; mean, std and 95% "
                           "interval.", type=Int(min=1, max=50))
    qa_judges: tuple[str, ...] = setting("qa-judges", (), "-qa: two or more judge models on the judge's endpoint "
                                         "(the first grades accuracy); percent agreement, Cohen's kappa, confusion.",
                                         type=CommaList(allow_empty=True))
    qa_labels: str = setting("qa-labels", "", "-qa: human verdicts, JSONL of {arm, id, correct[, run]}.")
    qa_prompts: str = setting("qa-prompts", "", "-qa: judge prompts: memini (ours, default), longmemeval:PATH (from "
                              "your checkout of LongMemEval) or locomo:PATH.")
    qa_judged_k: int = setting("qa-judged-k", 0, "-qa: judged recall@K / precision@K by an LLM relevance judge for "
                               "systems whose hits carry no data-set id (0: off).", type=Int(min=0, max=100))
    prices: str = setting("prices", "", "-qa: price table, TOML [models.\"NAME\"] input_per_million / "
                          "output_per_million dollars (default $MEMINI_PRICES).")
    qa_hypotheses: str = setting("qa-hypotheses", "", "-qa: also grade answers made elsewhere (JSONL of {question_id, "
                                 "hypothesis}) as the arm answers:<stem>; without -systems nothing is recalled.")
    qa_full_context: int = setting("qa-full-context", 0, "-qa: also the full-context arm: the group's whole history, "
                                   "the oldest cut to this many tokens (stated). 0: off.",
                                   type=Int(min=0, max=10_000_000))
    estimate: bool = setting("estimate", False, "-qa: print the calls, input tokens, money and time the run would "
                             "take, before any call, then stop.")


@dataclass(frozen=True)
class SweepOptions:
    sweep: str = setting("sweep", "", "Grid over hybrid settings, session-doc or embedder, e.g. 'pool=30,50,80 "
                         "fusion=0.3,0.5,-1': every cell against the baseline with McNemar and bootstrap tests "
                         "(-grid: the same flag, as memini-bench sweep -grid '...' reads).", aliases=("grid",))
    select: str = setting("select", "", "With -sweep and -holdout tune: pick the best cell by a metric "
                          "(recall_any@K, recall_all@K, mrr, ndcg@K, recall_frac@K ...: memini-bench -list metrics) "
                          "on tune, then report it and the baseline on held.")
    sweep_max_cells: int = setting("sweep-max-cells", 500, "Refuse a -sweep grid of more cells than this (the "
                                   "count and a time estimate are printed first); raise it to confirm a bigger grid.",
                                   type=Int(min=1))

    def __post_init__(self) -> None:
        if self.select and not self.sweep:
            raise BenchError("-select: picks a -sweep cell; add -sweep")


@dataclass(frozen=True)
class MultihopOptions:
    multihop: bool = setting("multihop", False, "Multi-hop retrieval ceiling (memini's): full-gold coverage and mean "
                             "gold recall at k 10 for one recall, + a second recall on query + top-1 content, + "
                             "the oracle second hop (a found gold's content).")
    multihop_category: str = setting("multihop-category", "1", "Question category of -multihop and -entity-bridge "
                                     "(LoCoMo: 1 = multi-hop).")
    multihop_min_gold: int = setting("multihop-min-gold", 2, "Least gold ids a -multihop / -entity-bridge question "
                                     "has.", type=Int(min=1))


@dataclass(frozen=True)
class EntityBridgeOptions:
    entity_bridge: bool = setting("entity-bridge", False, "Entity-bridge diagnostic on the -multihop questions: "
                                  "share of failures an entity link (DF-capped) could bridge, and promoting up to "
                                  "3 linked pool candidates under the reserve gate.")
    bridge_df_caps: tuple[float, ...] = setting("bridge-df-caps", DEFAULT_CAPS, "Document-frequency caps "
                                                "of -entity-bridge, as shares of the conversation.",
                                                type=CommaList(Real(min=0, max=1, min_open=True)))
    bridge_vocab: tuple[str, ...] = setting("bridge-vocab", (DEFAULT_VOCABULARY,), "Vocabularies of "
                                            "-entity-bridge: entities (capitalised spans), concepts (memini's "
                                            "lowercase concept leg: stemmed words and pairs), comma-separated.",
                                            type=CommaList(click.Choice(list(VOCABULARY_NAMES))))


def cross_encoder_configured(opts) -> bool:
    """``-rerank-url`` or ``-rerank-model local:PATH`` given (``-rerank-model NAME`` alone is a BenchError)."""
    tier = opts.mode(RerankTierOptions)
    return cross_encoder_requested(tier.rerank_url, tier.rerank_model)


@dataclass(frozen=True)
class ModeSpec:
    """One mode as the CLI sees it (see the module docstring). ``implied``: the flag values its verb stands for
    (``qa`` is ``-qa``); ``unused``: the flags every mode takes that this verb does not offer (``list`` reads no
    data set)."""

    verb: str                     # as typed after memini-bench: run, sweep, study rerank
    topic: str                    # its help topic (memini-bench help TOPIC)
    name: str                     # as its errors call it
    summary: str                  # one line
    options: type | None
    uses: tuple = ()
    implied: Mapping[str, object] = field(default_factory=dict)
    unused: frozenset[str] = frozenset()

    def used_fields(self, always: frozenset[str]) -> set[str]:
        """The field names (= flag python names) the mode honours: ``always``, its own options and its ``uses``."""
        import dataclasses

        used = set(always)
        for entry in ((self.options,) if self.options is not None else ()) + tuple(self.uses):
            used.update((entry,) if isinstance(entry, str) else (f.name for f in dataclasses.fields(entry)))
        return used


SPECS: tuple[ModeSpec, ...] = (
    ModeSpec("list", "listing", "-list", "every registered system, suite, embedder, executor and metric",
             ListOptions, implied={"list": "all"}, unused=frozenset({"suite", "data"})),
    ModeSpec("compare", "compare-files", "-compare", "paired significance of runs read back from -per-question files",
             SignificanceOptions, (SystemsRunOptions, "k", "out", "no_write")),
    # Reads the hybrid's pool and temporal-extractor settings and the keyword backend; its fusion is RRF by definition.
    ModeSpec("study rerank", "rerank", "-rerank", "memini's recency and temporal re-rank table", RerankOptions,
             (LoadOptions, EmbedSettings, "k", "limit", "holdout", "pool", "pool_factor", "pool_floor",
              "temporal_extractor", "keyword_backend", "out", "name", "per_question", "no_write"),
             implied={"rerank": True}),
    ModeSpec("study gates", "gates", "the gate sweeps (-vec-gate / -rerank-gate)",
             "relevance-gate sweeps of the vector leg or the cross-encoder", GateOptions,
             (LoadOptions, HybridConfig, EmbedSettings, "k", "limit", "holdout", "out", "name", "no_write",
              "rerank_url", "rerank_model", "rerank_api", "rerank_timeout", "rerank_max_doc_chars",
              "rerank_max_batch_chars")),
    # The baseline is the run's hybrid (every hybrid setting); device is the local cross-encoder's.
    ModeSpec("study rerank-tier", "rerank-tier", "the rerank tier (-rerank-url / -rerank-model / -llm-rerank)",
             "a cross-encoder or LLM re-rank stage over the hybrid", RerankTierOptions,
             (LoadOptions, HybridConfig, EmbedSettings, "k", "limit", "holdout", "out", "name", "no_write")),
    ModeSpec("vetobench", "vetobench", "-suite vetobench",
             "veto recall on VetoBench, its scale curve and the live agent layer", VetoOptions,
             (HybridConfig, EmbedSettings, "holdout", "limit", "systems", "system", "out", "no_write", "plot", "leaks",
              "recall_timeout"), implied={"suite": "vetobench"}),
    ModeSpec("qa", "qa", "-qa", "end-to-end QA accuracy with an LLM reader and judge", QAOptions,
             (LoadOptions, HybridConfig, EmbedSettings, RunGuardOptions, "limit", "holdout", "systems", "system",
              "rewrite", "out", "name", "no_write"), implied={"qa": True}),
    ModeSpec("sweep", "sweep", "-sweep",
             "a grid over a system's settings (memini's hybrid, the reference), with tune/held selection",
             SweepOptions, (LoadOptions, HybridConfig, ReferenceSettings, EmbedSettings, ExecutorOptions,
                            "significance", "resamples", "seed", "poison", "k", "limit", "holdout", "out", "name",
                            "plot", "no_write", "systems", "system")),
    ModeSpec("study multihop", "multihop", "-multihop", "memini's multi-hop retrieval ceiling", MultihopOptions,
             (LoadOptions, HybridConfig, EmbedSettings, RunGuardOptions, "k", "limit", "holdout", "systems", "system",
              "out", "name", "per_question", "no_write"), implied={"multihop": True}),
    ModeSpec("study entity-bridge", "entity-bridge", "-entity-bridge", "memini's entity-bridge diagnostic",
             EntityBridgeOptions,
             (LoadOptions, HybridConfig, EmbedSettings, RunGuardOptions, "k", "limit", "holdout", "systems", "system",
              "out", "name", "no_write", "multihop_category", "multihop_min_gold"), implied={"entity_bridge": True}),
    ModeSpec("score", "score", "score", "score rankings made elsewhere (TREC runs, JSONL) as a run scores its own",
             ScoreOptions, ("k", "metrics", "out", "leaks", "exclude", "abstention", "granularity", "unit",
                            "significance", "resamples", "seed", "categories")),
    ModeSpec("run", "run", "the system comparison", "the normal run: significance tests and poisoning",
             SystemsRunOptions, (CoreOptions, LineupOptions, LoadOptions, HybridConfig, EmbedSettings, OutputOptions,
                                 ExecutorOptions, ReferenceSettings, RunGuardOptions, "reference")),
)


def spec_for(verb: str) -> ModeSpec:
    """The spec of ``verb`` (``run``, ``study rerank``...); a KeyError for an unknown one (``modes.mode_for``
    words the error)."""
    for spec in SPECS:
        if spec.verb == verb:
            return spec
    raise KeyError(verb)
