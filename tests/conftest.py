"""Shared fixtures: the real data sets in ../shared/data (tests that need them skip when it is absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def needs_extra(extra: str, *modules: str) -> None:
    """Skip, saying which extra to install, when one of ``modules`` (what the extra installs) is missing: a test of
    an optional part skips on a core install rather than failing."""
    for module in modules:
        pytest.importorskip(module, reason=f"the {extra} extra is not installed: pip install 'memini-bench[{extra}]'")


def needs_report() -> None:
    needs_extra("report", "jinja2", "matplotlib")


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


@pytest.fixture
def no_network():
    """A socket guard (``netguard.NetGuard``): any Python-level connection, datagram or name lookup aimed anywhere
    but loopback is refused and the test fails at teardown, even if the code under test swallowed the refusal.
    Yields the list of attempts. (A library's own C or Rust networking bypasses Python sockets: the guard sees only
    what goes through Python.)"""
    from netguard import NetGuard

    with NetGuard() as guard:
        yield guard.attempts
    assert not guard.attempts, f"non-loopback network access attempted: {guard.attempts}"


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


@pytest.fixture(params=["compiled", "pure"])
def kernel_path(request, monkeypatch):
    """Each test using it runs twice: with the compiled kernels (``retrieval._kernels``) and without them (the
    numpy and Python paths), which must give the same ids and floats."""
    from memini_bench.retrieval import kernels

    if request.param == "compiled" and kernels.KERNELS is None:
        pytest.skip("the C kernels are not built here (or MEMINI_BENCH_KERNELS=0); test_kernels.py says which")
    if request.param == "pure":
        monkeypatch.setattr(kernels, "KERNELS", None)
    return request.param
