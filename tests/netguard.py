"""A socket guard for tests: any connection, datagram or name lookup aimed anywhere but loopback is refused and
recorded, so a library that swallows the error (telemetry clients do) still fails the test that checks
``guard.attempts == []``.

``with NetGuard() as guard: ...`` patches Python's ``socket`` module: ``socket.socket.connect``, ``connect_ex``,
``sendto`` and ``socket.getaddrinfo`` (which ``socket.create_connection``, http.client, urllib3, httpx, posthog and
the openai client all go through). Loopback is 127.0.0.0/8, ::1 (also IPv4-mapped), ``localhost`` and Unix
sockets. Native code that opens sockets itself (the Rust cores of LanceDB and Chroma, gRPC's C core) is outside a
Python guard's reach; those libraries are run with their telemetry off and on local paths only.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def is_loopback_host(host: object) -> bool:
    """Whether ``host`` (a name or an address, str or bytes) is this machine's loopback."""
    if host is None:
        return True  # getaddrinfo(None, port): the local wildcard / loopback
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip("[]").split("%", 1)[0].lower()
    if name in LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def is_loopback_address(address: Any) -> bool:
    """Whether a socket address (``(host, port, ...)`` or a Unix path) stays on this machine."""
    if isinstance(address, str | bytes):
        return True  # AF_UNIX path
    if isinstance(address, tuple) and address:
        return is_loopback_host(address[0])
    return False


class NetGuard:
    """Refuse and record every non-loopback connect, sendto and name lookup while active."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._saved: dict[str, Any] = {}

    def _refuse(self, what: str) -> OSError:
        self.attempts.append(what)
        return ConnectionRefusedError(f"socket guard: refused {what} (tests never leave 127.0.0.1)")

    def __enter__(self) -> NetGuard:
        guard = self
        connect, connect_ex, sendto = socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto
        getaddrinfo = socket.getaddrinfo
        self._saved = {"connect": connect, "connect_ex": connect_ex, "sendto": sendto, "getaddrinfo": getaddrinfo}

        def guarded_connect(sock: socket.socket, address: Any) -> None:
            if not is_loopback_address(address):
                raise guard._refuse(f"connect {address!r}")
            return connect(sock, address)

        def guarded_connect_ex(sock: socket.socket, address: Any) -> int:
            if not is_loopback_address(address):
                guard._refuse(f"connect_ex {address!r}")
                return 111  # ECONNREFUSED
            return connect_ex(sock, address)

        def guarded_sendto(sock: socket.socket, data: bytes, *args: Any) -> int:
            address = args[-1] if args else None
            if not is_loopback_address(address):
                raise guard._refuse(f"sendto {address!r}")
            return sendto(sock, data, *args)

        def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not is_loopback_host(host):
                guard.attempts.append(f"getaddrinfo {host!r}")
                raise socket.gaierror(socket.EAI_NONAME, f"socket guard: refused lookup of {host!r}")
            return getaddrinfo(host, *args, **kwargs)

        socket.socket.connect = guarded_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
        socket.socket.sendto = guarded_sendto  # type: ignore[method-assign]
        socket.getaddrinfo = guarded_getaddrinfo
        return self

    def __exit__(self, *exc: object) -> None:
        socket.socket.connect = self._saved["connect"]  # type: ignore[method-assign]
        socket.socket.connect_ex = self._saved["connect_ex"]  # type: ignore[method-assign]
        socket.socket.sendto = self._saved["sendto"]  # type: ignore[method-assign]
        socket.getaddrinfo = self._saved["getaddrinfo"]
