"""Hypothesis fuzzing of every loader: malformed documents of each suite's shape (wrong types, nulls, missing
fields, odd dates, NUL and line breaks, duplicates, huge and negative numbers, truncated files).

The contract: a loader returns a Dataset or raises a one-line BenchError, never another exception, never a hang
(``time_limit`` per case). A Dataset that loads is then prepared (every holdout, a limit) and run through memini's
three systems with the temporal boost (both extractors, both keyword backends) and scored, and its TREC and
per-question files written: the same contract holds for everything downstream of a loader. The fast suite runs
a few hundred derandomized examples; ``-m slow`` runs thousands of random ones.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from fuzz_strategies import (
    file_docs,
    locomo_docs,
    longmemeval_docs,
    mutated,
    serialized,
    time_limit,
    veto_corpora,
    veto_scenarios,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.core.dataset import Dataset, prepare
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.errors import BenchError
from memini_bench.evaluation.metrics import score_all
from memini_bench.evaluation.runner import run_all
from memini_bench.loaders import LoadOptions, load
from memini_bench.results.write import per_question_rows, write_jsonl, write_trec
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import memini_systems

CASE_SECONDS = 300.0  # a hang guard only: a case's time on a busy machine is no failure
FAST = settings(max_examples=60, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(max_examples=2500, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# tmpfs where there is one: every case writes files, and results writes fsync
WORK = Path(tempfile.mkdtemp(prefix="memini-fuzz-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))

DOCS = {"file": file_docs(), "locomo": locomo_docs(), "locomo-sessions": locomo_docs(),
        "longmemeval": longmemeval_docs()}


def _check_message(exc: BenchError) -> None:
    message = str(exc)
    assert message and "\n" not in message and "\r" not in message, repr(message)


def _downstream(ds: Dataset, holdout: str, limit: int, extractor: str, keyword_backend: str) -> None:
    """Prepare, run, score and write ``ds``: a BenchError (naming the flags) or results."""
    try:
        prepared = prepare(ds, holdout=holdout, limit=limit)
    except BenchError as exc:
        _check_message(exc)
        return
    config = HybridConfig(temporal_boost=0.4, temporal_extractor=extractor, keyword_backend=keyword_backend)
    systems = memini_systems(TextEncoder(HashEmbedder(16)), config)
    results = run_all(systems, prepared, 5)
    scores = score_all(results, [1, 5])
    assert all(0.0 <= s["recall_any@{k}"] <= 1.0 and 0.0 <= s["mrr"] <= 1.0 for s in scores)
    write_trec(WORK / "trec", prepared.name, results)
    write_jsonl(WORK / "per-question.jsonl", per_question_rows(results))
    assert (WORK / "trec" / f"{prepared.name}.qrels").exists()


def _contract(suite: str, data: bytes, options: tuple[str, int, str, str, str], name: str = "data.json",
              folder: Path = WORK) -> None:
    path = folder / name
    path.write_bytes(data)
    holdout, limit, extractor, abstention, keyword_backend = options
    with time_limit(CASE_SECONDS):
        try:
            ds = load(suite, str(path), LoadOptions(abstention=abstention))
        except BenchError as exc:
            _check_message(exc)
            return
        assert isinstance(ds, Dataset) and ds.items and ds.questions
        _downstream(ds, holdout, limit, extractor, keyword_backend)


_OPTIONS = st.tuples(st.sampled_from(["all", "tune", "held"]), st.sampled_from([0, 1, 3]),
                     st.sampled_from(["regex", "extended"]), st.sampled_from(["exclude", "include"]),
                     st.sampled_from(["numpy", "fts5"]))


def _suite_case(suite: str):
    return st.tuples(mutated(DOCS[suite]).flatmap(serialized), _OPTIONS)


@pytest.mark.parametrize("suite", sorted(DOCS))
def test_loaders_keep_the_contract(suite):
    @FAST
    @given(case=_suite_case(suite))
    def run(case):
        _contract(suite, *case)

    run()


@st.composite
def _veto_case(draw):
    corpus = draw(mutated(veto_corpora()).flatmap(serialized))
    scenarios = draw(mutated(veto_scenarios()).flatmap(serialized))
    return corpus, scenarios, draw(_OPTIONS)


def _veto_contract(corpus: bytes, scenarios: bytes, options: tuple[str, int, str, str, str]) -> None:
    folder = WORK / "veto"
    folder.mkdir(exist_ok=True)
    (folder / "scenarios.json").write_bytes(scenarios)
    _contract("vetobench", corpus, options, name="corpus.json", folder=folder)


@FAST
@given(case=_veto_case())
def test_vetobench_loader_keeps_the_contract(case):
    _veto_contract(*case)


@pytest.mark.slow
@pytest.mark.parametrize("suite", sorted(DOCS))
def test_loaders_keep_the_contract_long(suite):
    @SLOW
    @given(case=_suite_case(suite))
    def run(case):
        _contract(suite, *case)

    run()


@pytest.mark.slow
@SLOW
@given(case=_veto_case())
def test_vetobench_loader_keeps_the_contract_long(case):
    _veto_contract(*case)
