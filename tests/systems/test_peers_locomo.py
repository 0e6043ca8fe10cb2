"""Slow: the peer stores on all of LoCoMo (turn level, the run's default embedder, MiniLM from the vector cache).

Every adapter answers every one of the 1,982 questions from the question's group only, and the exact vector
stores (LanceDB flat, Qdrant local, Chroma at ef_search >= each group's size, mem0 at threshold 0) return
memini-vector's ranked lists, id for id: cosine on unit vectors orders as 1/(1+L2) does. About 6 minutes on 2 cores
with a warm cache (mem0's local-Qdrant payload filter costs ~0.2 s a question).
"""

from __future__ import annotations

import importlib.util

import pytest

from memini_bench.evaluation.runner import run_all
from memini_bench.modes.options import RunOptions
from memini_bench.systems.lineup import build_systems

pytestmark = pytest.mark.slow

FAMILIES = {  # module that must be importable -> (systems, those that must equal memini-vector)
    "lancedb": (("lancedb", "lancedb-fts", "lancedb-hybrid"), ("lancedb",)),
    "qdrant_client": (("qdrant", "qdrant-bm25", "qdrant-hybrid"), ("qdrant",)),
    "chromadb": (("chroma",), ("chroma",)),
    "mem0": (("mem0",), ("mem0",)),
}


@pytest.fixture(scope="module")
def context():
    return RunOptions.build({}).context()


@pytest.fixture(scope="module")
def reference(locomo, context):
    [vector] = build_systems(["memini-vector"], context)
    return run_all([vector], locomo, 10)[0]


@pytest.mark.parametrize("module", list(FAMILIES))
def test_peers_stay_in_the_group_and_exact_stores_equal_memini_vector(module, locomo, context, reference,
                                                                      monkeypatch):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (see the peers extra)")
    monkeypatch.delenv("MEMINI_LLM_BASE_URL", raising=False)  # mem0 with infer=False
    names, exact = FAMILIES[module]
    results = run_all(build_systems(list(names), context), locomo, 10)
    for result in results:
        assert len(result.questions) == len(locomo.questions) == 1982
        for run in result.questions:
            prefix = run.question.group + "/"
            assert all(i.startswith(prefix) for ids in run.ranked_ids for i in ids), (result.system, run.question.id)
        if result.system in exact:
            differing = [a.question.id for a, b in zip(reference.questions, result.questions, strict=True)
                         if a.ranked_ids != b.ranked_ids]
            assert differing == [], f"{result.system}: {len(differing)} lists differ from memini-vector"
