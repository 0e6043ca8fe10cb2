"""The shipped MCP memory servers themselves (installed by ``make mcp-servers`` into ``.venv-mcp/``; each test skips
with the reason when its server is absent): each measured through its shipped mapping, no server left behind."""

from __future__ import annotations

import json

import pytest

from memini_bench.core.dataset import Item
from memini_bench.systems.context import SystemContext
from memini_bench.systems.protocol.system import SERVERS_DIR
from tests.cli_run import run_cli
from tests.protocol.common import ITEMS, processes_with, two_groups

pytest.importorskip("mcp", reason="needs the mcp extra: pip install 'memini-bench[mcp]'")

BASIC_MEMORY = SERVERS_DIR / "basic-memory" / "bin" / "basic-memory"
SERVER_MEMORY = SERVERS_DIR / "node" / "node_modules" / ".bin" / "mcp-server-memory"


def _need(path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is absent: make mcp-servers installs the shipped MCP servers into .venv-mcp/")


def test_server_memory_one_process_per_group_substring_search():
    """The reference memory server keeps one graph: a server per group; its search is a substring match."""
    _need(SERVER_MEMORY)
    from memini_bench.systems.protocol.factory import make_mcp

    system = make_mcp(SystemContext(), "server-memory")
    try:
        system.ingest([Item(id=i, content=c, group=g) for i, c, g in ITEMS])
        assert [h.ids for h in system.recall("alice", "grey cat", 2)] == [("a1",)]
        assert system.recall("bob", "grey cat", 2) == []  # a1 is in the other group's server only
        assert [h.ids for h in system.recall("bob", "ADOPTED", 5)] == [("b1",)]  # case-insensitive
        workdir = str(system.workdir)
        assert system.describe()["transport"]["servers_started"] == 2
    finally:
        system.close()
    assert processes_with(workdir) == []


@pytest.mark.slow
def test_basic_memory_through_the_cli(tmp_path, capsys):
    """basic-memory's start-up alone takes 10-30 s here (it imports its whole stack and migrates its SQLite)."""
    _need(BASIC_MEMORY)
    data = two_groups(tmp_path)
    code, out, err = run_cli(["run", "-suite", "file", "-data", str(data), "-systems", "mcp:basic-memory", "-k", "1,2",
                              "-out", str(tmp_path / "out"), "-per-question", str(tmp_path / "pq.jsonl")], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    assert sum(r["first_gold_rank"] == 0 for r in rows) >= 3  # keyword questions on six short notes
    described = json.loads(next((tmp_path / "out").glob("*.json")).read_text())["config"]["systems"][0]
    assert described["server"]["name"] == "Basic Memory"
    assert described["transport"]["ingest_calls"] == len(ITEMS) + 2  # a project per group, a note per item
    assert processes_with("basic-memory", mine=True) == []
