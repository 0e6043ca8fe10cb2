"""Serve one registered memini-bench system as an MCP stdio server: ``python -m memini_bench.systems.protocol.serve
SYSTEM`` (e.g. ``bm25s``).

Tools (the shipped ``mcp:bm25s-served`` mapping uses them):

- ``store(items: [{id, content, group}])``: keep items (any number of calls, in order);
- ``commit()``: hand every stored item to the system's ``ingest`` (a System ingests once; the mapping's
  ``[finish]``, so it is timed with the ingest);
- ``search(query, group, k) -> {"hits": [{"id", "score"}]}``: the system's ``recall`` (a search before ``commit``
  commits first).

The same system called in process and through this server on the same run gives the transport's cost: the MCP
round trip, JSON encoding and the process boundary (docs/extending.md, "your memory server, no code").
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

from memini_bench.core.dataset import Item
from memini_bench.core.registry import SYSTEMS
from memini_bench.systems.lineup import context_for, made_by


def build(name: str) -> MCPServer:
    """An MCP server exposing ``store`` and ``search`` over the registered system ``name``."""
    system = made_by(SYSTEMS.get(name), context_for(), name, "serve")[0]
    pending: list[Item] = []
    state = {"ingested": False}
    server = MCPServer(f"memini-bench {name}")

    @server.tool()
    def store(items: list[dict]) -> dict:
        """Store memories: each {id, content, group}."""
        if state["ingested"]:
            raise ValueError("store after the first search: this server ingests once")
        pending.extend(Item(id=str(it["id"]), content=str(it["content"]), group=str(it["group"])) for it in items)
        return {"stored": len(items)}

    @server.tool()
    def commit() -> dict:
        """Ingest every stored memory into the system (once)."""
        if not state["ingested"]:
            system.ingest(pending)
            state["ingested"] = True
        return {"ingested": len(pending)}

    @server.tool()
    def search(query: str, group: str, k: int = 10) -> dict:
        """The k best memories of group for query."""
        commit()
        hits = system.recall(group, query, k)
        return {"hits": [{"id": h.ids[0], "score": float(h.score)} for h in hits]}

    return server


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m memini_bench.systems.protocol.serve SYSTEM (a registered name, e.g. bm25s)")
    build(args[0]).run("stdio")


if __name__ == "__main__":
    main()
