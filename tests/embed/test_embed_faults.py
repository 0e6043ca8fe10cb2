"""A misbehaving OpenAI-compatible endpoint on loopback: every bad reply is one line naming the endpoint, nothing
from it reaches the disk cache, and the next run against a correct server gives the correct vectors and numbers.
Also: a cache poisoned with NaN by an older version heals, and windows are sent in parallel."""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time

import numpy as np
import pytest
from loopback import ScriptedServer

from memini_bench.embed.cache import DiskCache, cache_file
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.embed.openai import OpenAIEmbedder
from memini_bench.errors import BenchError

DIMS = 32
HASH = HashEmbedder(DIMS)
TEXTS = [f"memory number {i} about topic {i % 7}" for i in range(45)]  # 3 requests of 20, 20, 5


def _reply(body, fault: str = ""):
    """The correct reply for ``body`` (vectors from the hash embedder), then broken as ``fault`` says."""
    vectors = HASH.encode(body["input"]).tolist()
    index = list(range(len(vectors)))
    if fault == "nan":
        vectors[-1][3] = math.nan
    elif fault == "inf":
        vectors[0][0] = math.inf
    elif fault == "-inf":
        vectors[0][5] = -math.inf
    elif fault == "overflow":
        vectors[0][1] = 1e39                                     # finite in JSON, Infinity as float32
    elif fault == "zero":
        vectors[len(vectors) // 2] = [0.0] * DIMS
    elif fault == "index0":
        index = [0] * len(vectors)
    elif fault == "duplicate":
        index[-1] = 0
    elif fault == "out-of-range":
        index[-1] = len(vectors)
    elif fault == "short":
        vectors[0] = vectors[0][:-1]
    elif fault == "missing":
        vectors, index = vectors[:-1], index[:-1]
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in zip(index, vectors, strict=True)]
    return {"object": "list", "data": data[::-1], "model": body["model"]}


class Switchable:
    """A handler whose fault can be changed between runs; ``"fault_at"`` breaks only that request number."""

    def __init__(self, fault: str = "", fault_at: int | None = None) -> None:
        self.fault, self.fault_at, self.calls = fault, fault_at, 0

    def __call__(self, path, body):
        self.calls += 1
        broken = self.fault if self.fault_at in (None, self.calls) else ""
        return 200, _reply(body, broken)


def _encoder(url, cache_dir, **kw):
    embedder = OpenAIEmbedder(url + "/v1", "test-model", dims=kw.pop("dims", DIMS), backoff=0.01, **kw)
    return TextEncoder(embedder, cache=DiskCache(cache_dir, embedder.identity, DIMS))


def _rows(cache_dir) -> int:
    files = list(cache_dir.glob("embeddings-*.sqlite"))
    if not files:
        return 0
    with sqlite3.connect(files[0]) as db:
        return db.execute("SELECT count(*) FROM vectors").fetchone()[0]


FAULTS = {
    "nan": "1 of 20 vectors hold NaN or infinite values (first: vector 19)",
    "inf": "NaN or infinite values (first: vector 0)",
    "-inf": "NaN or infinite values (first: vector 0)",
    "overflow": "NaN or infinite values (first: vector 0)",
    "zero": "1 of 20 vectors are all zeros (first: vector 10)",
    "index0": "sent index 0 20 times",
    "duplicate": "sent index 0 2 times",
    "out-of-range": "sent index 20 for a request of 20 texts",
    "short": "returned vectors of length 31, 32, expected 32; set MEMINI_EMBED_DIMS",
    "missing": "returned 19 vectors for 20 texts",
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_bad_reply_is_one_line_caches_nothing_and_a_fixed_server_heals(tmp_path, fault):
    handler = Switchable(fault, fault_at=2)                      # the second of three requests is broken
    with ScriptedServer(handler) as srv:
        with pytest.raises(BenchError) as exc:
            _encoder(srv.url, tmp_path, concurrency=1).documents(TEXTS)
        message = str(exc.value)
        assert message.startswith(f"embedding endpoint at {srv.url}/v1/embeddings") and "\n" not in message
        assert FAULTS[fault] in message
        assert _rows(tmp_path) == 0                              # not even the sound first request's vectors
        handler.fault = ""
        fixed = _encoder(srv.url, tmp_path)
        got = fixed.documents(TEXTS)
    np.testing.assert_allclose(got, HASH.encode(TEXTS), rtol=1e-6)
    assert fixed.embedded == len(TEXTS) and _rows(tmp_path) == len(TEXTS)
    again = _encoder(srv.url, tmp_path, retries=0)              # the server is gone: served from the disk cache
    np.testing.assert_allclose(again.documents(TEXTS), HASH.encode(TEXTS), rtol=1e-6)
    assert again.embedded == 0


def test_unknown_dims_is_learnt_from_the_first_reply_and_then_enforced(tmp_path):
    with ScriptedServer(Switchable("short", fault_at=3)) as srv:
        embedder = OpenAIEmbedder(srv.url, "m", backoff=0.01)     # no MEMINI_EMBED_DIMS
        with pytest.raises(BenchError, match="length 31, 32, expected 32"):
            embedder.encode(TEXTS)
    assert embedder.dims == DIMS


# --- the whole CLI: exit 2 and one line, nothing written, then the correct numbers --------------------------

def _run(args, capsys):
    from memini_bench.cli import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    return exc.value.code, capsys.readouterr().err


def _recalls(out):
    """The recall rows of the one results file in folder ``out`` (its name depends on the run's settings)."""
    (path,) = out.glob("memini-sample*.json")
    doc = json.loads(path.read_text())
    return sorted((r["system"], r["k"], r["scores"][f"recall_any@{r['k']}"]) for r in doc["results"])


@pytest.fixture
def endpoint_env(monkeypatch):
    def point(url):
        monkeypatch.setenv("MEMINI_EMBED_BASE_URL", url + "/v1")
        monkeypatch.setenv("MEMINI_EMBED_MODEL", "test-model")
        monkeypatch.setenv("MEMINI_EMBED_DIMS", str(DIMS))
    for name in ("MEMINI_EMBED_QUERY_PREFIX", "MEMINI_EMBED_DOC_PREFIX", "MEMINI_EMBED_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    return point


SAMPLE_FAULTS = {"nan": "1 of 10 vectors hold NaN or infinite values", "zero": "1 of 10 vectors are all zeros",
                 "index0": "sent index 0 10 times"}


@pytest.mark.parametrize("fault", list(SAMPLE_FAULTS))
def test_cli_bad_endpoint_exits_2_then_the_fixed_server_gives_the_right_numbers(tmp_path, capsys, endpoint_env,
                                                                                fault):
    handler = Switchable(fault)
    out, cache = tmp_path / "out", tmp_path / "cache"
    args = ["-suite", "sample", "-out", str(out), "-cache-dir", str(cache)]
    with ScriptedServer(handler) as srv:
        endpoint_env(srv.url)
        code, err = _run(args, capsys)
        last = err.splitlines()[-1]
        assert code == 2 and "Traceback" not in err and [line for line in err.splitlines() if "error" in line] == [last]
        assert last.startswith(f"memini-bench: error: embedding endpoint at {srv.url}/v1/embeddings: ")
        assert SAMPLE_FAULTS[fault] in last
        assert not list(out.glob("*.json")) and _rows(cache) == 0
        handler.fault = ""
        code, err = _run(args, capsys)
        assert code == 0, err
        healed = _recalls(out)
        code, _ = _run(["-suite", "sample", "-out", str(tmp_path / "clean"), "-cache-dir", str(tmp_path / "c2")],
                       capsys)
    assert code == 0 and healed == _recalls(tmp_path / "clean")


def test_cli_cache_holding_nan_heals_on_the_next_run(tmp_path, capsys, endpoint_env):
    out, cache = tmp_path / "out", tmp_path / "cache"
    args = ["-suite", "sample", "-out", str(out), "-cache-dir", str(cache)]
    with ScriptedServer(Switchable()) as srv:
        endpoint_env(srv.url)
        assert _run(args, capsys)[0] == 0
        good = _recalls(out)
        rows = _rows(cache)
        with sqlite3.connect(next(cache.glob("embeddings-*.sqlite"))) as db:   # what an older version let in
            db.execute("UPDATE vectors SET vec = ?", (np.full(DIMS, np.nan, dtype=np.float32).tobytes(),))
        before = len(srv.requests)
        code, err = _run(args, capsys)
        assert code == 0 and sum(map(int, re.findall(r"(\d+) cached vectors failed the check", err))) == rows
        assert sum(len(b["input"]) for _, b, _ in srv.requests[before:]) == rows     # all re-embedded
        assert _recalls(out) == good
        before = len(srv.requests)
        code, err = _run(args, capsys)
        assert code == 0 and "failed the check" not in err and len(srv.requests) == before   # healed: no calls
    assert _recalls(out) == good
    path = cache_file(cache, f"openai:{srv.url}/v1|test-model", DIMS)
    with sqlite3.connect(path) as db:
        blobs = [row[0] for row in db.execute("SELECT vec FROM vectors")]
    assert all(np.isfinite(np.frombuffer(b, dtype=np.float32)).all() for b in blobs)


# --- concurrency ---------------------------------------------------------------------------------------------

def _slow(path, body):
    time.sleep(0.15)
    return 200, _reply(body)


def test_windows_are_sent_in_parallel_in_order_and_cached_right(tmp_path):
    texts = [f"text {i} " + "word " * (i % 9) for i in range(100)]      # 5 windows of 20
    with ScriptedServer(_slow) as srv:
        encoder = _encoder(srv.url, tmp_path, concurrency=8)
        got = encoder.documents(texts)
    assert len(srv.requests) == 5 and srv.max_in_flight >= 3       # requests overlapped at the server
    np.testing.assert_allclose(got, HASH.encode(texts), rtol=1e-6)
    cached = DiskCache(tmp_path, encoder.embedder.identity, DIMS).get_many(texts)
    np.testing.assert_allclose(np.stack(cached), HASH.encode(texts), rtol=1e-6)


def test_concurrency_one_is_sequential_and_env_sets_it(tmp_path, monkeypatch):
    with ScriptedServer(_slow) as srv:
        _encoder(srv.url, tmp_path, concurrency=1).documents(TEXTS)
        assert srv.max_in_flight == 1
    monkeypatch.setenv("MEMINI_EMBED_CONCURRENCY", "3")
    assert OpenAIEmbedder("http://h").concurrency == 3
    monkeypatch.setenv("MEMINI_EMBED_CONCURRENCY", "x")
    with pytest.raises(BenchError, match="MEMINI_EMBED_CONCURRENCY='x': not an integer"):
        OpenAIEmbedder("http://h")
    with pytest.raises(BenchError, match="-concurrency 0: must be at least 1"):
        OpenAIEmbedder("http://h", concurrency=0)


def test_a_bad_window_among_parallel_ones_caches_nothing(tmp_path):
    handler = Switchable("nan", fault_at=4)
    texts = [f"text {i}" for i in range(100)]
    with ScriptedServer(handler) as srv, pytest.raises(BenchError, match="NaN or infinite"):
        _encoder(srv.url, tmp_path, concurrency=8).documents(texts)
    assert _rows(tmp_path) == 0
