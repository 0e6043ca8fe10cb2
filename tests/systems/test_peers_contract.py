"""Every peer system keeps the adapter rules (memini_bench.systems.peers): registered with its extra, a missing extra is
one
line naming it, no hit from another group, nothing left in the temp folder or written to the home folder, no
network. Add a row to PEERS for a new adapter."""

from __future__ import annotations

import importlib.util
import os
import re
import sys

import pytest
from peers_fixture import hash_context

from memini_bench.cli import main
from memini_bench.core.dataset import Item
from memini_bench.core.registry import SYSTEMS, Entry
from memini_bench.systems.lineup import build_systems

# (system, "module:factory", pip extra ("" = none), the importable packages its extra installs)
PEERS = [
    ("bm25s", "memini_bench.systems.peers.bm25s:make", "bm25s", ("bm25s", "Stemmer")),
    ("bm25s-global", "memini_bench.systems.peers.bm25s:make_global", "bm25s", ("bm25s", "Stemmer")),
    ("sqlite-vec", "memini_bench.systems.peers.sqlite_vec:make", "sqlite-vec", ("sqlite_vec", "pysqlite3")),
    ("sqlite-vec-hybrid", "memini_bench.systems.peers.sqlite_vec:make_hybrid", "sqlite-vec",
     ("sqlite_vec", "pysqlite3")),
    ("agentmemory", "memini_bench.systems.peers.agentmemory:make", "", ()),
    ("agentmemory-bm25", "memini_bench.systems.peers.agentmemory:make_bm25", "", ()),
    ("mempalace", "memini_bench.systems.peers.mempalace:make_raw", "", ()),
    ("mempalace-hybrid", "memini_bench.systems.peers.mempalace:make_hybrid", "", ()),
    ("lancedb", "memini_bench.systems.peers.lancedb:make", "lancedb", ("lancedb",)),
    ("lancedb-fts", "memini_bench.systems.peers.lancedb:make_fts", "lancedb", ("lancedb",)),
    ("lancedb-hybrid", "memini_bench.systems.peers.lancedb:make_hybrid", "lancedb", ("lancedb",)),
    ("qdrant", "memini_bench.systems.peers.qdrant:make", "qdrant", ("qdrant_client",)),
    ("qdrant-bm25", "memini_bench.systems.peers.qdrant:make_bm25", "qdrant", ("qdrant_client",)),
    ("qdrant-hybrid", "memini_bench.systems.peers.qdrant:make_hybrid", "qdrant", ("qdrant_client",)),
    ("chroma", "memini_bench.systems.peers.chroma:make", "chroma", ("chromadb",)),
    ("mem0", "memini_bench.systems.peers.mem0:make", "mem0", ("mem0", "qdrant_client")),
    ("taosmd", "memini_bench.systems.peers.taosmd:make", "taosmd", ("taosmd",)),
    ("taosmd-rrf", "memini_bench.systems.peers.taosmd:make_rrf", "taosmd", ("taosmd",)),
    ("taosmd-bm25-rrf", "memini_bench.systems.peers.taosmd:make_bm25_rrf", "taosmd", ("taosmd",)),
    ("taosmd-mem0", "memini_bench.systems.peers.taosmd:make_mem0", "taosmd", ("taosmd",)),
    ("engram-search", "memini_bench.systems.peers.engram:make", "engram-search", ("engram",)),
    ("engrava", "memini_bench.systems.peers.engrava:make", "engrava", ("engrava", "aiosqlite")),
    ("fluctlightdb", "memini_bench.systems.peers.fluctlight:make", "fluctlightdb",
     ("fluctlightdb", "fluctlightdb_native")),
    ("inspeximus", "memini_bench.systems.peers.inspeximus:make", "inspeximus", ("inspeximus",)),
]
EXTRA_PACKAGES = {extra: pkgs for _, _, extra, pkgs in PEERS if extra}
WITH_EXTRA = [(name, spec, extra, pkg) for name, spec, extra, pkgs in PEERS for pkg in pkgs]


def _installed(packages: tuple[str, ...]) -> bool:
    """Whether every package can be imported, found without importing it (importing mem0 writes ~/.mem0)."""
    return all(importlib.util.find_spec(package) is not None for package in packages)


@pytest.mark.parametrize("name, spec, extra, packages", PEERS)
def test_registered_with_its_extra(name, spec, extra, packages):
    entry = next(e for e in SYSTEMS.entries() if e.name == name)
    assert entry.extra == extra and entry.help


@pytest.mark.parametrize("name, spec, extra, package", WITH_EXTRA)
def test_a_missing_extra_is_one_line_naming_it(name, spec, extra, package, monkeypatch, tmp_path, capsys):
    module = spec.partition(":")[0]
    monkeypatch.setitem(sys.modules, package, None)  # `import package` now fails as if it were not installed
    monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setitem(SYSTEMS._entries, name, Entry(name, spec, "", extra=extra))  # lazy again
    with pytest.raises(SystemExit) as exc:
        main(["-suite", "sample", "-embedder", "hash", "-systems", name, "-out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1, err
    named = re.search(rf"{re.escape(name)} needs the {re.escape(extra)} extra \((\S+) is not installed\): "
                      rf"pip install 'memini-bench\[{re.escape(extra)}\]'$", err[0])
    # {package}, another one when absent, or (where the extra is not installed at all) its distribution's name
    from memini_bench.core.registry import missing_distributions

    assert named and named.group(1) in (*EXTRA_PACKAGES[extra], *(missing_distributions(extra) or ())), err[0]
    assert not list(tmp_path.iterdir())


ITEMS = [Item(f"{g}{i}", text, g) for g in ("A", "B") for i, text in enumerate(
    ["the cat sat on the mat", "dogs chase cats", "a bird sings", "cats sleep all day"])]
QUERIES = [("A", "what do cats do?"), ("B", "which cat sat on the mat?"), ("A", "the"), ("C", "cats")]


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("name, spec, extra, packages", PEERS)
def test_group_isolation_temp_folder_and_home(name, spec, extra, packages, monkeypatch, tmp_path):
    if not _installed(packages):
        pytest.skip(f"needs the {extra} extra: pip install 'memini-bench[{extra}]'")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (system,) = build_systems([name], hash_context())
    system.ingest(ITEMS)
    system.prepare([q for _, q in QUERIES])
    results = [system.recall(g, q, 10) for g, q in QUERIES]
    folder = getattr(system, "_workdir", None)
    info = system.describe()
    system.close()
    for (group, _), hits in zip(QUERIES, results, strict=True):
        assert all(h.ids[0].startswith(group) for h in hits), (group, hits)
    assert results[3] == [] and any(results[0]) and any(results[1])
    assert folder is None or not folder.exists()
    assert not os.listdir(home)
    assert info.get("dropped_other_group", 0) == 0
    if extra:
        assert info["version"]


@pytest.mark.slow
def test_no_hit_from_another_group_on_all_locomo_questions(locomo):
    """Every peer system over all 1,982 LoCoMo turn-level questions (hash embedder), depth 10."""
    from memini_bench.evaluation.runner import run_system

    names = [name for name, _, _, packages in PEERS if _installed(packages)]
    systems = build_systems(names, hash_context())
    group_of = {it.id: it.group for it in locomo.items}
    for system in systems:
        try:
            result = run_system(system, locomo, depth=10)
        finally:
            system.close()
        assert len(result.questions) == 1982
        wrong = [(q.question.id, hit) for q in result.questions for ids in q.ranked_ids for hit in ids
                 if group_of[hit] != q.question.group]
        assert not wrong, (system.name, wrong[:5])


def test_the_socket_guard_refuses_the_network_but_not_loopback(no_network):
    import socket
    import urllib.request

    from loopback import ScriptedServer

    with pytest.raises(OSError, match="socket guard"):
        socket.create_connection(("192.0.2.1", 80), timeout=1)  # TEST-NET-1: never reachable anyway
    with pytest.raises(OSError, match="socket guard"):
        socket.getaddrinfo("example.com", 443)
    assert len(no_network) == 2
    no_network.clear()  # the attempts above were the test's own; teardown checks that nothing else tried
    with ScriptedServer(lambda path, body: (200, {"ok": True})) as server:
        request = urllib.request.Request(server.url + "/x", data=b"{}", method="POST")
        assert urllib.request.urlopen(request, timeout=60).status == 200
