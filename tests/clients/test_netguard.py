"""The socket guard the peer tests run under: it refuses and records non-loopback traffic, lets loopback through."""

from __future__ import annotations

import socket
import urllib.request

import pytest
from loopback import ScriptedServer
from netguard import NetGuard, is_loopback_address, is_loopback_host


def test_loopback_classification():
    assert all(is_loopback_host(h) for h in ("127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost",
                                             "::ffff:127.0.0.1", b"127.0.0.1", None))
    assert not any(is_loopback_host(h) for h in ("10.0.0.1", "8.8.8.8", "::ffff:8.8.8.8", "example.com",
                                                 "us.i.posthog.com", "2001:db8::1", 42))
    assert is_loopback_address("/tmp/some.sock") and not is_loopback_address(("1.1.1.1", 443))


def test_non_loopback_is_refused_and_recorded():
    with NetGuard() as guard:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with pytest.raises(ConnectionRefusedError, match="socket guard"):
            sock.connect(("10.255.255.1", 80))
        assert sock.connect_ex(("10.255.255.1", 81)) != 0
        sock.close()
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        with pytest.raises(ConnectionRefusedError):
            udp.sendto(b"x", ("192.0.2.1", 53))
        udp.close()
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo("example.com", 443)
        with pytest.raises(OSError):  # what an HTTP client sees
            urllib.request.urlopen("http://example.com/", timeout=1)
    assert [a.split(" ")[0] for a in guard.attempts] == ["connect", "connect_ex", "sendto", "getaddrinfo",
                                                         "getaddrinfo"]


def test_loopback_passes_and_the_guard_is_removed_afterwards():
    original = socket.socket.connect
    with ScriptedServer(lambda path, body: (200, {"ok": path})) as srv, NetGuard() as guard:
        request = urllib.request.Request(srv.url + "/v1/x", data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=60) as reply:
            assert reply.read() == b'{"ok": "/v1/x"}'
    assert guard.attempts == [] and socket.socket.connect is original
