"""``ProtocolSystem``: a memory server reached over MCP or HTTP, measured as a ``System`` through a mapping file.

Life of a run:

1. *Start-up* (timed apart: ``ingest_parts_ms["model_load_ms"]``, the results' load column): the server process is
   started (MCP stdio; one per run, or one per group on a fresh store when the mapping says ``groups =
   "process"``), the session initialised and the tools listed; then the mapping is checked against the tools'
   input schemas (``check_tools``) before anything is written: a missing tool, an argument the schema does not
   have or a required argument the mapping does not give is one line naming it.
2. *Ingest* (the store's share of the ingest time): ``[setup]`` once per group, then the items in the data set's
   order, ``batch`` items per call and at most ``concurrency`` calls in flight; each item gets a safe key
   (``m000123``) the replies are read back by.
3. *Recall*: one mapped call per question (its latency is the question's). The reply's hits are read by the
   mapping's JSON paths; a hit naming no item this system gave the server (``never ingested``), an item of
   another group (``leaks``), a reply that does not have the mapped shape, a tool error, a dead or silent server
   are each one line; the runner turns it into exit 2 with nothing written. A hit repeated by the server is kept
   once (counted in ``describe()["duplicates_dropped"]``).
4. ``close()`` ends every server process (also after any failure; the runner closes systems on errors).

``describe()`` records the mapping (its file's sha256 and settings), the server's name and version (from the MCP
handshake) and the transport's counts and times (``transport``: start-up, ingest calls, recall calls and their mean
round trip).
"""

from __future__ import annotations

import hashlib
import math
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.errors import BenchError
from memini_bench.systems.protocol.mapping import MappingSpec, environ, render, select

REPO = Path(__file__).resolve().parents[3]
#: Where ``make mcp-servers`` installs the shipped servers (``{venv}`` in a mapping).
SERVERS_DIR = REPO / ".venv-mcp"


def _snippet(doc: object) -> str:
    text = doc if isinstance(doc, str) else repr(doc)
    return text.replace("\n", " ")[:120]


def _schema_properties(schema: Mapping) -> tuple[set[str], set[str], bool]:
    """A tool input schema's property names, required names and whether it takes other names too."""
    props = set((schema.get("properties") or {}).keys())
    required = set(schema.get("required") or ())
    extra = schema.get("additionalProperties", True) is not False and not props
    return props, required, extra


def check_tools(spec: MappingSpec, tools: Mapping[str, Mapping]) -> list[str]:
    """The mapped tools checked against the server's (name -> input schema): one line naming the first fault;
    returns the mapped tool names in use."""
    used = []
    for section, call in (("setup", spec.setup), ("ingest", spec.ingest), ("finish", spec.finish),
                          ("recall", spec.recall)):
        if call is None:
            continue
        if call.target not in tools:
            raise BenchError(f"{spec.label}: the mapping's [{section}] tool {call.target!r} is not one of the server's"
                             f" tools ({', '.join(sorted(tools)) or 'none'}); fix tool = in {spec.source}")
        props, required, extra = _schema_properties(tools[call.target])
        given = set(call.arguments) if isinstance(call.arguments, Mapping) else set()
        unknown = sorted(given - props) if not extra else []
        if unknown:
            raise BenchError(f"{spec.label}: the mapping's [{section}] passes argument {unknown[0]!r} to tool "
                             f"{call.target}, whose schema has no such argument (it takes: {', '.join(sorted(props))})"
                             f"; fix {spec.source}")
        missing = sorted(required - given)
        if missing:
            raise BenchError(f"{spec.label}: tool {call.target} requires argument {missing[0]!r}, which the mapping's "
                             f"[{section}] does not give; add it to {spec.source}")
        used.append(call.target)
    return used


class ProtocolSystem:
    """A memory server measured through a mapping (module docstring). ``make_transport(store)`` makes one server
    connection whose files live under ``store``."""

    def __init__(self, spec: MappingSpec, make_transport, name: str = "") -> None:
        self.spec = spec
        self.name = name or spec.label
        self.make_transport = make_transport
        self.workdir: Path | None = None
        self.transports: dict[str, object] = {}  # "" = the run's one server; else a group's own
        self.items: list[Item] = []
        self.by_key: dict[str, int] = {}
        self.by_id: dict[str, int] = {}
        self.group_keys: dict[str, str] = {}
        self.startup_ms = 0.0
        self.store_ms = 0.0
        self.calls = {"setup": 0, "ingest": 0, "recall": 0}
        self.recall_ms = 0.0
        self.duplicates_dropped = 0
        self.servers_started = 0
        self.server_info: dict[str, str] = {}
        self.pattern = re.compile(spec.extract.id_pattern) if spec.extract.id_pattern else None

    # -- the run's values ---------------------------------------------------------------------------------------
    def run_values(self, store: Path) -> dict[str, object]:
        return {"store": str(store), "venv": str(SERVERS_DIR), "python": sys.executable, "repo": str(REPO)}

    def _store(self, group_key: str) -> Path:
        if self.workdir is None:
            safe = "".join(c if c.isalnum() else "-" for c in self.name)
            try:
                self.workdir = Path(tempfile.mkdtemp(prefix=f"memini-bench-{safe}-"))
            except OSError as exc:
                raise BenchError(f"{self.name}: cannot make its store folder in {tempfile.gettempdir()} ({exc}); "
                                 "set TMPDIR to a writable folder with room") from None
        return self.workdir / (group_key or "store")

    def transport_for(self, group: str):
        key = self.group_keys[group] if self.spec.groups == "process" else ""
        if key not in self.transports:
            t0 = time.perf_counter()
            transport = self.make_transport(self._store(key))
            self.transports[key] = transport
            self.servers_started += 1
            transport.start()
            if transport.tools is not None:
                check_tools(self.spec, transport.tools)
            self.server_info = dict(transport.server_info)
            self.startup_ms += (time.perf_counter() - t0) * 1e3
        return self.transports[key]

    # -- ingest -------------------------------------------------------------------------------------------------
    def item_values(self, index: int) -> dict[str, object]:
        item = self.items[index]
        when = item.time.isoformat() if isinstance(item.time, datetime) else str(item.time or "")
        return {"key": f"m{index:06d}", "id": item.id, "content": item.content, "group": item.group,
                "group_key": self.group_keys[item.group], "time": when}

    def ingest(self, items: Sequence[Item]) -> None:
        self.items = list(items)
        for i, item in enumerate(self.items):
            self.by_key[f"m{i:06d}"] = i
            self.by_id.setdefault(item.id, i)
            self.group_keys.setdefault(item.group, f"g{len(self.group_keys)}")
        by_group: dict[str, list[int]] = {}
        for i, item in enumerate(self.items):
            by_group.setdefault(item.group, []).append(i)
        # start every server (and check the mapping) before the first write
        for group in by_group:
            self.transport_for(group)
        spec = self.spec
        t0 = time.perf_counter()
        for group, indices in by_group.items():
            transport = self.transport_for(group)
            group_values = {"group": group, "group_key": self.group_keys[group],
                            **self.run_values(self._store(self.group_keys[group] if spec.groups == "process" else ""))}
            if spec.setup is not None:
                transport.call(render(spec.setup.target, group_values), render(spec.setup.arguments, group_values),
                               write=True)
                self.calls["setup"] += 1
            calls = []
            for start in range(0, len(indices), spec.batch):
                chunk = indices[start:start + spec.batch]
                if spec.batch == 1:
                    values = self.item_values(chunk[0])
                    calls.append((render(spec.ingest.target, values), render(spec.ingest.arguments, values)))
                else:
                    each = [render(spec.ingest.each, self.item_values(i)) for i in chunk]
                    values = {**group_values, "items": each}
                    calls.append((render(spec.ingest.target, values), render(spec.ingest.arguments, values)))
            transport.call_many(calls, spec.concurrency, write=True)
            self.calls["ingest"] += len(calls)
        if spec.finish is not None:
            for key, transport in self.transports.items():
                values = self.run_values(self._store(key))
                transport.call(render(spec.finish.target, values), render(spec.finish.arguments, values), write=True)
                self.calls["setup"] += 1
        self.store_ms = (time.perf_counter() - t0) * 1e3

    @property
    def ingest_time_ms(self) -> float:
        return self.startup_ms + self.store_ms

    @property
    def ingest_parts_ms(self) -> dict[str, float]:
        """Server start-up (and the mapping check) as the load part; the writes are the store's share."""
        return {"model_load_ms": self.startup_ms, "embed_ms": 0.0}

    # -- recall -------------------------------------------------------------------------------------------------
    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        if group not in self.group_keys:
            return []  # a group with no items: the server was never asked to hold it
        spec = self.spec
        values = {"query": query, "k": k, "group": group, "group_key": self.group_keys[group]}
        t0 = time.perf_counter()
        reply = self.transport_for(group).call(render(spec.recall.target, values),
                                               render(spec.recall.arguments, values))
        self.recall_ms += (time.perf_counter() - t0) * 1e3
        self.calls["recall"] += 1
        return self.hits(reply, group, k)

    def _fault(self, what: str, reply: object) -> BenchError:
        return BenchError(f"{self.name}: {what} (reply: {_snippet(reply)!r}); the server's reply does not fit the "
                          f"mapping's [recall] (check results/id/score in {self.spec.source})")

    def _rows(self, reply: object) -> list[object]:
        ex = self.spec.extract
        if isinstance(reply, str):
            if self.pattern is None or ex.id:
                raise self._fault("the reply is text, not JSON", reply)
            return [m.group(1) if m.groups() else m.group(0) for m in self.pattern.finditer(reply)]
        found = select(reply, ex.results)
        if len(found) == 1 and isinstance(found[0], list):
            return found[0]
        if not found and "*" not in ex.results:
            raise self._fault(f"nothing at {ex.results}", reply)
        return found

    def _index_of(self, value: object, reply: object) -> int:
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise self._fault(f"a hit's id is {type(value).__name__}, not text", reply)
        text = str(value)
        if self.pattern is not None:
            m = self.pattern.search(text)
            text = (m.group(1) if m.groups() else m.group(0)) if m else text
        index = self.by_key.get(text, self.by_id.get(text))
        if index is None:
            raise BenchError(f"{self.name}: the server returned {text!r}, which is no item this run ingested into "
                             "it (a stale store, or a mapping whose id path reads the wrong field); recall refused")
        return index

    def hits(self, reply: object, group: str, k: int) -> list[Hit]:
        """The reply's hits as ``Hit``s of ``group``, at most ``k`` (module docstring)."""
        ex = self.spec.extract
        rows = self._rows(reply)
        if ex.limit:
            rows = rows[:ex.limit]
        out: list[Hit] = []
        seen: set[int] = set()
        for rank, row in enumerate(rows, 1):
            if ex.id:
                ids = select(row, ex.id)
                if not ids:
                    raise self._fault(f"hit {rank} has nothing at {ex.id}", reply)
                index = self._index_of(ids[0], reply)
            else:
                index = self._index_of(row, reply)
            item = self.items[index]
            if item.group != group:
                raise BenchError(f"{self.name}: a recall in group {group!r} returned item {item.id!r} of group "
                                 f"{item.group!r}; the server leaks across groups (use groups = \"process\" in "
                                 f"{self.spec.source} if it cannot keep them apart)")
            if index in seen:
                self.duplicates_dropped += 1
                continue
            seen.add(index)
            score = 1.0 / rank
            if ex.score:
                found = select(row, ex.score)
                value = found[0] if found else None
                if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                    raise self._fault(f"hit {rank}'s score at {ex.score} is {value!r}, not a finite number", reply)
                score = float(value)
            content = item.content
            if ex.content:
                found = select(row, ex.content)
                if found and isinstance(found[0], str):
                    content = found[0]
            out.append(Hit((item.id,), score, content))
            if len(out) == k:
                break
        return out

    # -- the rest of the contract -------------------------------------------------------------------------------
    def describe(self) -> dict:
        spec = self.spec
        recalls = self.calls["recall"]
        return {"protocol": spec.kind, "mapping": spec.source and Path(spec.source).name,
                "mapping_sha256": hashlib.sha256(spec.text.encode()).hexdigest(),
                "server": self.server_info, "command": list(spec.command), "url": environ(spec.url),
                "groups": spec.groups, "batch": spec.batch, "concurrency": spec.concurrency,
                "timeout_s": spec.timeout, "tools": {"ingest": spec.ingest.target, "recall": spec.recall.target,
                                                     "setup": spec.setup.target if spec.setup else "",
                                                     "finish": spec.finish.target if spec.finish else ""},
                "duplicates_dropped": self.duplicates_dropped,
                "transport": {"servers_started": self.servers_started, "startup_ms": round(self.startup_ms, 1),
                              "ingest_calls": self.calls["ingest"] + self.calls["setup"],
                              "ingest_ms": round(self.store_ms, 1), "recall_calls": recalls,
                              "recall_mean_ms": round(self.recall_ms / recalls, 3) if recalls else 0.0}}

    def plan_notes(self, items: Sequence[Item] = (), query: str = "", k: int = 10) -> list[str]:
        """What ``--plan`` prints for this system: the mapping checked against the server's tools (an MCP server is
        started, listed and ended; nothing is written to it), the mapped calls, and a dry rendering of the first
        item's ingest and of the first question's recall (not sent)."""
        spec = self.spec
        checked = ""
        if spec.kind == "mcp":
            transport = self.make_transport(self._store("plan"))
            try:
                transport.start()
                used = check_tools(spec, transport.tools or {})
                info = transport.server_info
                server = f"{info.get('name') or 'the server'} {info.get('version', '')}".strip()
                checked = (f"  checked against {server} ({len(transport.tools or {})} tools): "
                           f"{', '.join(dict.fromkeys(used))} present, arguments match their schemas")
            finally:
                transport.close()
                self.close()
        where = spec.url and environ(spec.url) or " ".join(spec.command)
        lines = [f"{self.name}: {spec.kind} server {where!r} ({spec.source}), groups: {spec.groups}, batch "
                 f"{spec.batch}, concurrency {spec.concurrency}, timeout {spec.timeout:g} s"]
        if checked:
            lines.append(checked)
        if spec.setup is not None:
            lines.append(f"  setup per group: {spec.setup.target}")
        if spec.finish is not None:
            lines.append(f"  finish per server: {spec.finish.target}")
        if items:
            probe = ProtocolSystem(spec, self.make_transport, self.name)
            probe.items = list(items[:1])
            probe.group_keys = {items[0].group: "g0"}
            values = probe.item_values(0)
            args = (render(spec.ingest.arguments, values) if spec.batch == 1 else
                    render(spec.ingest.arguments, {"group": items[0].group, "group_key": "g0", "store": "",
                                                   "items": [render(spec.ingest.each, values)]}))
            lines.append(f"  ingest: {render(spec.ingest.target, values)} {_snippet(args)}")
            values = {"query": query, "k": k, "group": items[0].group, "group_key": "g0"}
            lines.append(f"  recall: {render(spec.recall.target, values)} "
                         f"{_snippet(render(spec.recall.arguments, values))}")
        lines.append(f"  hits: {spec.extract.results} -> id {spec.extract.id or '(the value)'}"
                     + (f" ~ /{spec.extract.id_pattern}/" if spec.extract.id_pattern else "")
                     + f", score {spec.extract.score or '1/rank'}")
        return lines

    def close(self) -> None:
        transports, self.transports = self.transports, {}
        for transport in transports.values():
            transport.close()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
