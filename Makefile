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
# Embedders for `make quality`; add a sentence-transformers model with e.g. QUALITY_EMBEDDERS=hash,minilm,st:PATH
QUALITY_EMBEDDERS ?= hash,minilm,wordllama
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install bench test test-all lint speed quality results clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e '.[dev,plot,wordllama]'
	touch $(STAMP)

install: $(STAMP)

bench: $(STAMP)
	$(PY) -m memini_bench -suite sample

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

test-all: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check memini_bench tests quality cmd

speed: $(STAMP)
	$(PY) cmd/speed.py --locomo $(LOCOMO)

quality: $(STAMP)
	$(PY) -m quality.scoreboard -embedders $(QUALITY_EMBEDDERS) -out results/quality.json

# Every committed file in results/ and the README's generated tables, from the shared data sets (MiniLM;
# ~5 minutes with a cold embedding cache on 2 cores, under 2 with a warm one).
results: $(STAMP)
	$(PY) -m memini_bench -suite locomo -data $(LOCOMO) -k 5,10
	$(PY) -m memini_bench -suite locomo-sessions -data $(LOCOMO) -k 5,10
	$(PY) -m memini_bench -suite longmemeval -data $(LME)/longmemeval_s_single.json -k 5,10
	$(PY) -m memini_bench -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -k 5,10
	$(PY) -m memini_bench -suite locomo -data $(LOCOMO) -rerank -rerank-cats ""
	$(PY) -m memini_bench -suite locomo -data $(LOCOMO) -rerank -rerank-cats "" -temporal-extractor extended
	$(PY) -m memini_bench -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -rerank
	$(PY) -m memini_bench -suite longmemeval -data $(LME)/longmemeval_oracle_sample97.json -shared-haystack -rerank \
		-temporal-extractor extended
	$(PY) -m memini_bench -suite locomo -data $(LOCOMO) -vec-gate 0,0.4,0.45,0.5,0.55,0.6
	$(PY) -m memini_bench -suite vetobench -data $(VETO) -scale -plot
	$(PY) -m quality.scoreboard -embedders $(QUALITY_EMBEDDERS) -out results/quality.json
	$(PY) cmd/results_table.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
