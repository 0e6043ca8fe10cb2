"""The HTTP client's limits against real loopback servers: the per-try timeout (MEMINI_EMBED_TIMEOUT), the total
deadline across retries, Retry-After (bounded), a trickling reply, and errors stating tries and total time; the
same limits for the embedding, rerank and LLM clients."""

from __future__ import annotations

import email.utils
import re
import socket
import threading
import time

import pytest
from loopback import ScriptedServer

from memini_bench.clients.http import env_seconds, post_json, retry_after_seconds
from memini_bench.clients.llm import ChatClient
from memini_bench.embed.openai import OpenAIEmbedder
from memini_bench.errors import BenchError
from memini_bench.rerankers import Candidate
from memini_bench.rerankers.crossencoder import HttpCrossEncoder

OK = {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}


def _hang(path, body):
    time.sleep(1.5)
    return 200, OK


def _tries(message: str) -> int:
    return int(re.search(r"failed after (\d+) tr", message).group(1))


def _timed(call):
    start = time.monotonic()
    with pytest.raises(BenchError) as exc:
        call()
    return time.monotonic() - start, str(exc.value)


def test_hung_server_fails_at_the_deadline_not_after_every_retry():
    """7 tries x 60 s used to be 7.4 minutes; now the deadline (2 x timeout by default) ends it."""
    with ScriptedServer(_hang) as srv:
        _, message = _timed(lambda: post_json(srv.url, {}, timeout=0.2, retries=6, backoff=0.01))
    assert _tries(message) in (1, 2)  # 2, or 1 when a busy machine spent the deadline in the first
    assert re.search(r"failed after \d tr(?:y|ies) in \d+\.\d+ s \(timeout 0\.2 s per try, deadline 0\.4 s\): "
                     r"no reply within \d+\.\d+ s", message), message    # the 2nd try gets what is left
    assert "\n" not in message


def test_explicit_deadline_bounds_fast_failures_too():
    with ScriptedServer(lambda p, b: (503, {"error": "busy"})) as srv:
        _, message = _timed(lambda: post_json(srv.url, {}, timeout=5, deadline=0.5, retries=100,
                                                    backoff=0.05))
    tries = _tries(message)
    assert 1 <= tries < 10 and len(srv.requests) == tries  # not 101: the deadline ended the retries
    assert "deadline 0.5 s" in message and "HTTP 503" in message


def test_retry_after_seconds_is_honoured():
    calls = []

    def limited(path, body):
        calls.append(time.monotonic())
        return (429, {"error": "slow down"}, {"Retry-After": "0.4"}) if len(calls) == 1 else (200, OK)

    with ScriptedServer(limited) as srv:
        assert post_json(srv.url, {}, timeout=30, backoff=0.01) == OK   # 30 s: room on a busy machine
    assert len(calls) == 2 and calls[1] - calls[0] >= 0.4              # not the 0.01 s backoff


def test_retry_after_is_bounded_and_never_waits_past_the_deadline():
    def limited(path, body):
        return 503, {}, {"Retry-After": "3600"}

    with ScriptedServer(limited) as srv:
        # a deadline of 3 s holds the 6 tries 0.2 s apart with room to spare on a busy machine (each try's own
        # bound, 10 s, never ends one: the server answers at once)
        _, message = _timed(lambda: post_json(srv.url, {}, timeout=10, deadline=3, retries=5,
                                                    backoff=0.01, max_retry_after=0.2))
        gaps = srv.gaps()
    assert len(gaps) >= 2 and all(0.2 <= g < 60 for g in gaps)          # 3600 s capped at 0.2 s (60 s: a hang guard)
    assert _tries(message) == len(gaps) + 1
    with ScriptedServer(limited) as srv:
        _, message = _timed(lambda: post_json(srv.url, {}, timeout=10, retries=5))   # cap 60 s > deadline 20 s
    assert _tries(message) == 1
    assert "the server's Retry-After wait of 60 s before the next try would pass the 20 s deadline" in message


def test_a_negative_or_zero_retry_after_never_retries_faster_than_the_backoff():
    """``Retry-After: -5`` once gave 7 tries in 0.09 s; the wait is now at least backoff * 2**(n-1)."""
    for header in ("-5", "0"):
        def limited(path, body, header=header):
            return 503, {}, {"Retry-After": header}

        with ScriptedServer(limited) as srv:
            _, message = _timed(lambda: post_json(srv.url, {}, timeout=30, deadline=60, retries=3, backoff=0.1))
            gaps = srv.gaps()
        assert _tries(message) == 4 and len(gaps) == 3
        for n, gap in enumerate(gaps):
            assert gap >= 0.1 * 2 ** n * 0.95, (header, gaps)


def test_a_url_that_is_not_http_is_refused_before_any_try():
    """A ``file:///`` base URL was retried for 24 s; ``http://[::1`` ended in a traceback."""
    for url, why in (("file:///tmp/embeddings", "not an http(s) URL"), ("http://[::1/v1", "not a valid URL"),
                     ("http://h:99999/v1", "not a valid URL")):
        _, message = _timed(lambda url=url: post_json(url, {}, timeout=5, retries=6))
        assert why in message and "\n" not in message and "failed after" not in message  # no try made


def test_retry_after_header_forms():
    now = 1_700_000_000.0
    assert retry_after_seconds("7") == 7.0 and retry_after_seconds(" 0.5 ") == 0.5
    assert retry_after_seconds(email.utils.formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30.0)
    assert retry_after_seconds(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert retry_after_seconds("-5") is None  # delta-seconds is non-negative: unreadable, so the backoff applies
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("nan") is None and retry_after_seconds("inf") is None


def test_a_trickling_reply_is_cut_at_the_try_timeout():
    """A server that sends one byte every 50 ms never trips the socket's per-read timeout; the try still ends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def trickle():
        while not stop.is_set():
            try:
                listener.settimeout(0.2)
                conn, _ = listener.accept()
            except OSError:
                continue
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n")
            try:
                for _ in range(200):
                    conn.sendall(b" ")
                    time.sleep(0.05)
            except OSError:
                pass
            conn.close()

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        _, message = _timed(lambda: post_json(url, {}, timeout=0.3, retries=0))
    finally:
        stop.set()
    assert "no reply within 0.3 s" in message
    listener.close()


def test_embedder_timeout_from_env_and_argument(monkeypatch):
    with ScriptedServer(_hang) as srv:
        monkeypatch.setenv("MEMINI_EMBED_TIMEOUT", "0.2")
        embedder = OpenAIEmbedder(srv.url, "m", dims=2, backoff=0.01)
        assert embedder.timeout == 0.2
        _, message = _timed(lambda: embedder.encode(["x"]))
        assert _tries(message) in (1, 2) and "set MEMINI_EMBED_TIMEOUT (or -embed-timeout)" in message
        assert OpenAIEmbedder(srv.url, timeout=0.3).timeout == 0.3        # the argument (-embed-timeout) wins
    monkeypatch.delenv("MEMINI_EMBED_TIMEOUT")
    assert OpenAIEmbedder("http://h").timeout == 60.0


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "nan", "inf"])
def test_bad_timeout_values_are_one_line(monkeypatch, raw):
    monkeypatch.setenv("MEMINI_EMBED_TIMEOUT", raw)
    with pytest.raises(BenchError, match="MEMINI_EMBED_TIMEOUT") as exc:
        OpenAIEmbedder("http://h")
    assert "\n" not in str(exc.value)


def test_bad_timeout_argument_and_env_helper(monkeypatch):
    with pytest.raises(BenchError, match="-embed-timeout 0: must be a positive number of seconds"):
        OpenAIEmbedder("http://h", timeout=0)
    monkeypatch.setenv("SOME_TIMEOUT", " 2.5 ")
    assert env_seconds("SOME_TIMEOUT", 9) == 2.5
    monkeypatch.setenv("SOME_TIMEOUT", "")
    assert env_seconds("SOME_TIMEOUT", 9) == 9


CANDS = [Candidate("a", "alpha"), Candidate("b", "beta")]


@pytest.mark.parametrize("client", ["rerank", "llm"])
def test_rerank_and_llm_clients_share_the_deadline(client):
    with ScriptedServer(_hang) as srv:
        if client == "rerank":
            call = lambda: HttpCrossEncoder(srv.url, timeout=0.2, retries=5).rerank("q", CANDS)  # noqa: E731
        else:
            call = lambda: ChatClient(srv.url, timeout=0.2, retries=5).complete("", "q")  # noqa: E731
        _, message = _timed(call)
    # their default backoff (0.5 s) leaves no room for a second try inside the 0.4 s deadline
    assert _tries(message) == 1 and "deadline 0.4 s" in message
    assert "the backoff wait of 0.5 s before the next try would pass the 0.4 s deadline" in message


def test_llm_honours_retry_after():
    calls = []

    def limited(path, body):
        calls.append(time.monotonic())
        if len(calls) == 1:
            return 429, {}, {"Retry-After": "0.3"}
        return 200, {"choices": [{"message": {"content": "2, 1"}}]}

    with ScriptedServer(limited) as srv:
        assert ChatClient(srv.url, timeout=30).complete("", "q") == "2, 1"
    assert calls[1] - calls[0] >= 0.3
