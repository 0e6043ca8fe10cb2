"""Loopback services in the shapes of mem0's REST server and Zep's v1 memory API, for the HTTP adapter's tests: a
real HTTP server (``tests.loopback.ScriptedServer``) over an SQLite FTS5 store (porter, BM25, one table; a
search reads the caller's user or session only). ``MemoryShape.faults`` makes a search misbehave (``garbage``,
``unknown``, ``leak``, ``error``).

Run one by hand (the HTTP adapter's walk-through in docs/extending.md): ``python -m tests.protocol.shapes mem0 8888``.
"""

from __future__ import annotations

import re
import sqlite3
import sys
import threading
import time
import uuid

from tests.loopback import ScriptedServer


def fts_query(text: str) -> str:
    """The words of ``text`` as an FTS5 OR query (each quoted, so punctuation never reaches FTS5's syntax)."""
    words = re.findall(r"\w+", text.lower())
    return " OR ".join(f'"{w}"' for w in words) or '""'


class MemoryShape:
    """One store answering ``handler(path, body)`` in the shape ``kind`` (``mem0`` or ``zep``)."""

    def __init__(self, kind: str, fault: str = "") -> None:
        self.kind, self.fault = kind, fault
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE mem USING fts5(owner UNINDEXED, uuid UNINDEXED, meta UNINDEXED, "
                        "content, tokenize='porter')")
        self.lock = threading.Lock()
        self.writes = 0

    def add(self, owner: str, content: str, meta: str) -> str:
        uid = str(uuid.uuid4())
        with self.lock:
            self.db.execute("INSERT INTO mem VALUES (?, ?, ?, ?)", (owner, uid, meta, content))
            self.writes += 1
        return uid

    def search(self, owner: str, text: str, limit: int) -> list[tuple[str, str, str, float]]:
        with self.lock:
            rows = self.db.execute("SELECT uuid, meta, content, bm25(mem) FROM mem WHERE mem MATCH ? AND owner = ? "
                                   "ORDER BY bm25(mem), rowid LIMIT ?", (fts_query(text), owner, limit)).fetchall()
            if self.fault == "leak":
                rows = self.db.execute("SELECT uuid, meta, content, -99.0 FROM mem WHERE owner != ? LIMIT 1",
                                       (owner,)).fetchall() + rows
        return [(u, m, c, -float(s)) for u, m, c, s in rows]

    def handler(self, path: str, body: object) -> tuple:
        if self.kind == "mem0":
            return self._mem0(path, body)
        return self._zep(path, body)

    def _broken(self) -> tuple | None:
        if self.fault == "garbage":
            return 200, b"<html>upstream timed out</html>"
        if self.fault == "error":
            return 400, {"detail": "bad request"}
        if self.fault == "slow":
            time.sleep(5)
        return None

    def _mem0(self, path: str, body: dict) -> tuple:
        import json

        if path == "/memories":
            if not body.get("user_id") or body.get("infer") is not False:
                return 422, {"detail": "user_id required; this store runs infer=false only"}
            results = [{"id": self.add(body["user_id"], m["content"], json.dumps(body.get("metadata") or {})),
                        "memory": m["content"], "event": "ADD"} for m in body["messages"]]
            return 200, {"results": results}
        if path == "/search":
            broken = self._broken()
            if broken:
                return broken
            found = self.search(body["user_id"], body["query"], int(body.get("top_k", 10)))
            results = [{"id": u, "memory": c, "score": s, "metadata": json.loads(m)} for u, m, c, s in found]
            if self.fault == "unknown":
                results.insert(0, {"id": "x", "memory": "?", "score": 9.0, "metadata": {"memini_key": "m999999"}})
            return 200, {"results": results}
        return 404, {"detail": f"no route {path}"}

    def _zep(self, path: str, body: dict) -> tuple:
        import json
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(path)
        m = re.fullmatch(r"/api/v1/sessions/([^/]+)/(memory|search)", parts.path)
        if m is None:
            return 404, {"detail": f"no route {path}"}
        session, verb = m.groups()
        if verb == "memory":
            for msg in body["messages"]:
                self.add(session, msg["content"], json.dumps(msg.get("metadata") or {}))
            return 200, {"message": "OK"}
        broken = self._broken()
        if broken:
            return broken
        limit = int(parse_qs(parts.query).get("limit", ["10"])[0])
        found = self.search(session, body["text"], limit)
        return 200, [{"message": {"uuid": u, "content": c, "metadata": json.loads(meta)}, "score": s}
                     for u, meta, c, s in found]


def main() -> None:
    kind, port = sys.argv[1], int(sys.argv[2])
    with ScriptedServer(MemoryShape(kind).handler, port=port) as srv:
        print(f"{kind}-shaped memory service on {srv.url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
