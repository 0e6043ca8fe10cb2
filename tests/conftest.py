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
