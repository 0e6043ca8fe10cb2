"""The ``mcp`` and ``http`` system factories: ``-systems mcp:NAME|PATH[?key=value&...]`` (``http:`` alike).

``NAME`` is a mapping shipped in ``mappings/`` (``mcp.NAME.toml``), ``PATH`` any mapping file; ``?timeout=``,
``startup_timeout=``, ``batch=`` and ``concurrency=`` override the file's values for the run. Each factory
returns one ``ProtocolSystem``; nothing starts until its ``ingest``.
"""

from __future__ import annotations

import atexit
import weakref
from pathlib import Path
from urllib.parse import parse_qsl

from memini_bench.errors import BenchError
from memini_bench.systems.context import SystemContext
from memini_bench.systems.protocol import mapping
from memini_bench.systems.protocol.system import ProtocolSystem

_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_live() -> None:
    """A server is never left behind by a process that exits without closing its systems."""
    for system in list(_LIVE):
        system.close()


def split_argument(kind: str, argument: str) -> tuple[str, dict[str, str]]:
    """``NAME?timeout=5&concurrency=2`` -> (``NAME``, overrides)."""
    name, _, query = argument.partition("?")
    try:
        overrides = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=True)) if query else {}
    except ValueError:
        raise BenchError(f"-systems {kind}:{argument}: read ?key=value&key=value after the mapping") from None
    return name, overrides


def _spec(kind: str, argument: str) -> mapping.MappingSpec:
    name, overrides = split_argument(kind, argument)
    return mapping.load(kind, name, overrides)


def make_mcp(ctx: SystemContext, argument: str = "") -> ProtocolSystem:
    """An MCP memory server through a mapping (``mcp:NAME|PATH``)."""
    from memini_bench.core.registry import import_extra

    transports = import_extra("memini_bench.systems.protocol.mcp_transport", "mcp", "mcp")
    spec = _spec("mcp", argument)

    def make_transport(store: Path):
        values = system.run_values(store)
        command = [str(mapping.render(c, values)) for c in spec.command]
        env = {k: str(mapping.render(v, values)) for k, v in spec.env.items()}
        url = mapping.environ(str(mapping.render(spec.url, values))) if spec.url else ""
        return transports.McpTransport(system.name, command, url, env, store, spec.timeout, spec.startup_timeout)

    system = ProtocolSystem(spec, make_transport, spec.label + ctx.label)
    _LIVE.add(system)
    return system


def make_http(ctx: SystemContext, argument: str = "") -> ProtocolSystem:
    """A REST memory service through a mapping (``http:NAME|PATH``)."""
    from memini_bench.systems.protocol.http_transport import HttpTransport

    spec = _spec("http", argument)

    def make_transport(store: Path):
        return HttpTransport(system.name, mapping.environ(spec.url), spec.timeout)

    system = ProtocolSystem(spec, make_transport, spec.label + ctx.label)
    _LIVE.add(system)
    return system
