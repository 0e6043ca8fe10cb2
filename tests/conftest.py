"""Shared fixtures: the real data sets in ../shared/data (tests that need them skip when it is absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared(relative: str) -> Path:
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"needs the shared data set {path} (the ../shared folder beside the project)")
    return path


@pytest.fixture(scope="session")
def locomo_path() -> Path:
    return shared("locomo/locomo10.json")


@pytest.fixture(scope="session")
def lme_dir() -> Path:
    return shared("longmemeval")


@pytest.fixture(scope="session")
def locomo(locomo_path):
    from memini_bench.loaders import load

    return load("locomo", str(locomo_path))


@pytest.fixture(scope="session")
def locomo_sessions(locomo_path):
    from memini_bench.loaders import load

    return load("locomo-sessions", str(locomo_path))


_LOOPBACK_HOSTS = ("localhost", "::1", "0:0:0:0:0:0:0:1")


def _is_loopback(address: object) -> bool:
    """A socket address on this machine: 127.0.0.0/8, ::1, localhost, or a Unix socket path."""
    if not isinstance(address, tuple):
        return True  # AF_UNIX (a path) never leaves the machine
    host = str(address[0]).lower()
    return host.startswith("127.") or host in _LOOPBACK_HOSTS


@pytest.fixture
def no_network(monkeypatch):
    """A socket guard: any Python-level connection (or name lookup) to a non-loopback address is refused and the
    test fails at teardown, even if the code under test swallowed the refusal. Yields the list of attempts.
    (A library's own C or Rust networking bypasses Python sockets: the guard sees only what goes through Python.)"""
    import socket

    attempts: list[object] = []
    real_connect, real_connect_ex, real_getaddrinfo = socket.socket.connect, socket.socket.connect_ex, \
        socket.getaddrinfo

    def refuse(address: object) -> OSError:
        attempts.append(address)
        return OSError(f"socket guard: connection to {address!r} refused (tests never leave 127.0.0.1)")

    def connect(self, address):
        if not _is_loopback(address):
            raise refuse(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        if not _is_loopback(address):
            raise refuse(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host is not None and not _is_loopback((host,)):
            raise socket.gaierror(refuse((host,)).args[0])
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts
    assert not attempts, f"non-loopback network access attempted: {attempts}"


@pytest.fixture
def open_tmp():
    """A temp folder every user can reach (pytest's tmp_path sits under a 0700 folder), for tests that drop root."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="memini-open-"))
    folder.chmod(0o755)
    yield folder
    for path in folder.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(folder, ignore_errors=True)
