"""One MCP server, reached through the official ``mcp`` SDK: a stdio process it starts, or a streamable-HTTP URL.

The harness is synchronous and the SDK is asyncio: the session lives on an event loop in a thread of its own
(``anyio``'s blocking portal), opened by ``start`` and closed by ``close``; each call waits at most the mapping's
``timeout`` (the SDK's per-request read timeout, and an ``anyio.fail_after`` around it). Closing goes through the
SDK's stdio shutdown: close the server's stdin, wait, then terminate and kill its whole process group, so a server
that hangs or ignores its stdin never outlives the run. The server's stderr goes to a file in the run's store
folder; its last line is quoted when the server fails.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
from anyio.from_thread import start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memini_bench.errors import BenchError

_GRACE = 5.0  # seconds beyond a call's own timeout the caller waits for the loop to report it


def _last_line(path: Path | None) -> str:
    if path is None or not path.is_file():
        return ""
    lines = [ln.strip() for ln in path.read_text("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def _describe_exc(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class McpTransport:
    """An MCP session with one server (module docstring). ``label`` names it in every error line."""

    def __init__(self, label: str, command: Sequence[str], url: str, env: Mapping[str, str], store: Path,
                 timeout: float, startup_timeout: float) -> None:
        self.label, self.command, self.url, self.env = label, list(command), url, dict(env)
        self.store, self.timeout, self.startup_timeout = store, timeout, startup_timeout
        self.server_info: dict[str, str] = {}
        self.tools: dict[str, dict] = {}
        self._stack: contextlib.ExitStack | None = None
        self._portal = None
        self._session: ClientSession | None = None
        self._stderr_path: Path | None = None
        self.pid: int | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the server (or connect), initialise the session and list its tools; one line on any failure."""
        if self.command and shutil.which(self.command[0]) is None:
            raise BenchError(f"{self.label}: cannot start the server: {self.command[0]!r} is not an executable; "
                             "install it (make mcp-servers installs the shipped ones into .venv-mcp/)")
        self.store.mkdir(parents=True, exist_ok=True)
        stack = contextlib.ExitStack()
        self._stack = stack
        try:
            self._portal = stack.enter_context(start_blocking_portal())
            if self.command:
                self._stderr_path = self.store / "server-stderr.log"
                errlog = stack.enter_context(open(self._stderr_path, "w", encoding="utf-8"))  # noqa: SIM115
                params = StdioServerParameters(command=self.command[0], args=self.command[1:], env=self.env,
                                               cwd=str(self.store))
                streams = stack.enter_context(self._portal.wrap_async_context_manager(stdio_client(params, errlog)))
            else:
                from mcp.client.streamable_http import streamable_http_client

                streams = stack.enter_context(self._portal.wrap_async_context_manager(
                    streamable_http_client(self.url)))
            read, write = streams[0], streams[1]
            session = stack.enter_context(self._portal.wrap_async_context_manager(
                ClientSession(read, write)))
            self._session = session
            init = self._run(self._initialise, self.startup_timeout, "start-up (initialize and tools/list)")
        except BenchError:
            self.close()
            raise
        except Exception as exc:  # an OSError spawning it, a refused URL
            self.close()
            raise BenchError(f"{self.label}: cannot start the server ({_describe_exc(exc)})"
                             + self._stderr_hint()) from None
        info, tools = init
        self.server_info = info
        self.tools = tools

    async def _initialise(self) -> tuple[dict[str, str], dict[str, dict]]:
        assert self._session is not None
        result = await self._session.initialize()
        info = getattr(result, "server_info", None)
        tools: dict[str, dict] = {}
        cursor = None
        while True:
            from mcp import types

            listing = await self._session.list_tools(
                params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            for tool in listing.tools:
                tools[tool.name] = dict(tool.input_schema or {})
            cursor = getattr(listing, "next_cursor", None)
            if not cursor:
                break
        return ({"name": str(getattr(info, "name", "") or ""), "version": str(getattr(info, "version", "") or "")},
                tools)

    def close(self) -> None:
        """End the session and the server process (the SDK's shutdown: stdin closed, then terminate, then kill)."""
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            with contextlib.suppress(Exception):
                stack.close()
        self._portal = None

    # -- calls -----------------------------------------------------------------------------------------------
    def _run(self, fn, seconds: float, what: str, *args):
        """Run coroutine function ``fn(*args)`` on the session's loop, bounded by ``seconds``."""
        if self._portal is None or self._session is None:
            raise BenchError(f"{self.label}: the server is not running (it failed or was closed earlier)")

        async def bounded():
            with anyio.fail_after(seconds):
                return await fn(*args)

        future = self._portal.start_task_soon(bounded)
        try:
            return future.result(timeout=seconds + _GRACE)
        except TimeoutError:
            future.cancel()
            raise self._fault(what, "", seconds) from None
        except BenchError:
            raise
        except Exception as exc:
            raise self._fault(what, _describe_exc(exc), seconds) from None

    def _fault(self, what: str, why: str, seconds: float) -> BenchError:
        if not why or "TimeoutError" in why or "timed out" in why.lower():
            knob = "startup_timeout" if what.startswith("start-up") else "timeout"
            why = f"no answer within {seconds:g} s (raise it with ?{knob}=SECONDS)"
        elif "connection closed" in why.lower():
            why += " (the server process ended or closed its output)"
        return BenchError(f"{self.label}: {what} failed: {why}" + self._stderr_hint())

    def _stderr_hint(self) -> str:
        line = _last_line(self._stderr_path)
        return f"; the server's last stderr line: {line!r}" if line else ""

    def call(self, tool: str, arguments: Mapping[str, object], *, write: bool = False,
             timeout: float | None = None) -> object:
        """The decoded reply of one tool call: its structured content, else its text parsed as JSON, else the text;
        a tool error, a closed connection or no answer in time is one line."""
        seconds = timeout or self.timeout
        result = self._run(self._call, seconds, f"tool {tool}", tool, dict(arguments), seconds)
        return self._decode(tool, result)

    def call_many(self, calls: Sequence[tuple[str, Mapping[str, object]]], concurrency: int, *,
                  write: bool = True) -> list[object]:
        """Each call's decoded reply, in order, at most ``concurrency`` in flight at once."""
        if concurrency <= 1 or len(calls) <= 1:
            return [self.call(tool, args) for tool, args in calls]

        async def many():
            limiter = anyio.Semaphore(concurrency)
            out: list[object] = [None] * len(calls)

            async def one(i: int, tool: str, args: Mapping[str, object]) -> None:
                async with limiter:
                    out[i] = await self._call(tool, dict(args), self.timeout)

            async with anyio.create_task_group() as tg:
                for i, (tool, args) in enumerate(calls):
                    tg.start_soon(one, i, tool, args)
            return out

        bound = self.timeout * math.ceil(len(calls) / concurrency)
        results = self._run(many, bound, f"{len(calls)} calls of tool {calls[0][0]}")
        return [self._decode(tool, r) for (tool, _), r in zip(calls, results, strict=True)]

    async def _call(self, tool: str, arguments: dict, seconds: float):
        assert self._session is not None
        return await self._session.call_tool(tool, arguments, read_timeout_seconds=seconds)

    def _decode(self, tool: str, result: object) -> object:
        texts = [c.text for c in getattr(result, "content", None) or [] if getattr(c, "type", "") == "text"]
        if getattr(result, "is_error", False):
            said = " ".join(texts).strip().replace("\n", " ")[:200]
            raise BenchError(f"{self.label}: tool {tool} answered an error: {said or '(no text)'}")
        structured = getattr(result, "structured_content", None)
        if isinstance(structured, dict) and structured:
            return structured
        text = "\n".join(texts)
        try:
            return json.loads(text)
        except ValueError:
            return text
