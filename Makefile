# memini-bench: `make bench` runs the offline sample, `make test` the test suite; both install first if needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# A CPU build of PyTorch (an unpinned torch pulls a multi-GB CUDA build). Override for a GPU machine.
TORCH_SPEC ?= torch==2.13.0
LOCOMO ?= ../shared/data/locomo/locomo10.json
# Embedders for `make quality`; add a sentence-transformers model with e.g. QUALITY_EMBEDDERS=hash,minilm,st:PATH
QUALITY_EMBEDDERS ?= hash,minilm
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install bench test test-all lint speed quality clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e '.[dev,plot]'
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

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
