"""An MCP stdio memory server for the protocol tests, built on the ``mcp`` SDK's server: ``remember`` stores an
item, ``recall`` ranks a group's items by the number of query words they share (ties by order stored). ``FAULT``
(environment) makes it misbehave: ``die`` (the process exits on the first recall: killed mid-run), ``hang`` (a
recall never answers), ``garbage`` (a recall answers text that is not JSON), ``unknown`` (a recall names a key never
stored), ``leak`` (a recall puts another group's item first), ``exit_at_start`` (the process exits before the
handshake). The first argument is a marker the tests look for in ``ps`` (no server process may outlive a run)."""

from __future__ import annotations

import os
import sys
import time

if os.environ.get("FAULT") == "exit_at_start":
    sys.exit(3)

from mcp.server.mcpserver import MCPServer  # noqa: E402

FAULT = os.environ.get("FAULT", "")
server = MCPServer("fault-server")
items: list[tuple[str, str, str]] = []  # (key, content, group)


@server.tool()
def remember(key: str, content: str, group: str) -> dict:
    """Store one memory."""
    items.append((key, content, group))
    return {"ok": True}


@server.tool()
def recall(query: str, group: str, k: int = 10):
    """The k memories of group sharing most words with query."""
    if FAULT == "die":
        os._exit(1)
    if FAULT == "hang":
        time.sleep(3600)
    if FAULT == "garbage":
        return "<html>503 upstream</html>"
    words = set(query.lower().split())
    pool = [it for it in items if it[2] == group]
    ranked = sorted(pool, key=lambda it: -len(words & set(it[1].lower().split())))[:k]
    if FAULT == "leak":
        ranked = [it for it in items if it[2] != group][:1] + ranked[:k - 1]
    hits = [{"key": key, "score": float(len(words & set(content.lower().split())))} for key, content, _ in ranked]
    if FAULT == "unknown":
        hits.insert(0, {"key": "m999999", "score": 99.0})
    return {"hits": hits}


if __name__ == "__main__":
    server.run("stdio")
