"""Every registered system takes any user text as plain text: a query that starts and ends with a double quote,
full-text operators (AND, OR, NOT, NEAR, *, ~, ^, field:value, parentheses), SQL quotes, a NUL, line breaks,
emoji, a very long string. A hypothesis fuzz test recalls each registered system (hash embedder, a corpus of
eight items) with such queries: it must return hits of the asked group only, never raise (in a run, a raise ends
the whole run: lancedb-fts once did on ``"..."``, a phrase query its index without positions refuses). A system
that cannot be built here (its extra missing, an LLM endpoint it needs unset) is skipped, saying why."""

from __future__ import annotations

import os

import pytest
from fuzz_strategies import ODD_TEXT, time_limit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peers_fixture import hash_context

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.core.registry import SYSTEMS
from memini_bench.errors import BenchError
from memini_bench.systems.lineup import build_systems

ITEMS = [Item(f"{g}{i}", text, g) for g in ("A", "B") for i, text in enumerate(
    ['the cat sat on the "mat"', "dogs chase cats AND birds", "a bird sings (loudly)", "cats sleep all day: zzz"])]
HOSTILE = ('"cats sleep"', '"', '""', '"the cat sat on the mat"', "'", "a' OR '1'='1", "cats AND", "AND OR NOT",
           "NOT cats", "cats OR dogs", "NEAR(cats dogs)", "cat*", "*", "?", "cats~", "cats^2", "text:cats",
           "grp:B", "(((", ")", "[", "{}", "+cats -dogs", "&&||!", "\\", "/* */", "--", ";", "%", "_", "\0",
           "cats\0dogs", "\n", "cats\ndogs", "\u2028", "🐈 cats 🙂", "x" * 20_000, ("cats " * 2_000).strip())
QUERIES = st.one_of(st.sampled_from(HOSTILE + ODD_TEXT),
                    st.builds(lambda a: f'"{a}"', st.text(max_size=40)),  # starts and ends with a double quote
                    st.text(max_size=200))
#: Systems that need more than a hash embedder and a folder (an LLM endpoint; VetoBench's own items).
NOT_HERE = {"veto-composite": "reads VetoBench items only (tests/vetobench fuzz it)"}


#: Systems whose ingest or recall takes seconds (an embedded server, an ORM, a library's own pipeline): slow.
HEAVY = {"mem0", "chroma", "taosmd", "taosmd-rrf", "taosmd-mem0", "engram-search", "engrava", "fluctlightdb",
         "fluctlightdb-maxsim", "mempalace", "mempalace-hybrid", "agentmemory"}


def _names() -> list:
    return [pytest.param(e.name, marks=pytest.mark.slow) if e.name in HEAVY else e.name
            for e in SYSTEMS.entries() if e.origin == "built-in"]


_built: dict[str, object] = {}


def _system(name: str, home) -> object:
    """``name`` built and its corpus ingested once per test session (ingest is the slow part); a system that cannot
    be built here is skipped with its one-line reason."""
    if name in NOT_HERE:
        pytest.skip(f"{name}: {NOT_HERE[name]}")
    if name not in _built:
        try:
            (system,) = build_systems([name], hash_context())
            system.ingest(ITEMS)
        except BenchError as exc:
            _built[name] = exc
        else:
            _built[name] = system
    found = _built[name]
    if isinstance(found, BenchError):
        pytest.skip(f"{name} cannot be built here: {found}")
    return found


@pytest.fixture(scope="module", autouse=True)
def _close_all():
    yield
    for system in _built.values():
        if not isinstance(system, BenchError) and hasattr(system, "close"):  # close is optional
            system.close()
    _built.clear()


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("name", _names())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERIES, group=st.sampled_from(["A", "B", "C"]), k=st.sampled_from([1, 3, 10]))
def test_every_system_takes_any_text_as_plain_text(name, query, group, k, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    system = _system(name, tmp_path)
    with time_limit(60):
        if hasattr(system, "prepare"):  # optional in the contract
            system.prepare([query])
        hits = system.recall(group, query, k)
    assert isinstance(hits, list) and len(hits) <= k
    assert all(isinstance(h, Hit) and h.ids and all(i.startswith(group) for i in h.ids) for h in hits), hits
    assert group != "C" or hits == []
    assert os.environ["HOME"] == str(tmp_path)
