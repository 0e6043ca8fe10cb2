"""The Anthropic Messages API client against a loopback server: headers, content blocks, usage, 429 / 529 with
retry-after, one-line errors, and the provider switch."""

from __future__ import annotations

import pytest
from loopback import ScriptedServer

from memini_bench.clients.anthropic import API_VERSION, AnthropicClient
from memini_bench.clients.llm import ChatReply
from memini_bench.clients.providers import chat_from_env, judge_from_env, openai_chat_from_env
from memini_bench.errors import BenchError


def message(text="Porto", usage=None, blocks=None):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "end_turn",
            "content": blocks if blocks is not None else [{"type": "text", "text": text}],
            "usage": usage if usage is not None else {"input_tokens": 12, "output_tokens": 3}}


def test_request_shape_headers_and_reply():
    with ScriptedServer(lambda path, body: (200, message())) as srv:
        client = AnthropicClient(srv.url, model="claude-test", api_key="sk-test", retries=0, max_tokens=64)
        assert client.chat("be brief", "Where?") == ChatReply("Porto", 12, 3)
        (path, body, headers), = srv.requests
    headers = {k.lower(): v for k, v in headers.items()}
    assert path == "/v1/messages"
    assert headers["x-api-key"] == "sk-test" and headers["anthropic-version"] == API_VERSION
    assert "authorization" not in headers and headers["content-type"] == "application/json"
    assert body == {"model": "claude-test", "max_tokens": 64, "temperature": 0.0, "system": "be brief",
                    "messages": [{"role": "user", "content": [{"type": "text", "text": "Where?"}]}]}


def test_a_v1_base_url_and_no_system():
    with ScriptedServer(lambda path, body: (200, message())) as srv:
        AnthropicClient(srv.url + "/v1", model="m", retries=0).chat("", "u")
        (path, body, _), = srv.requests
    assert path == "/v1/messages" and "system" not in body


def test_text_blocks_are_joined_and_cache_tokens_count_as_input():
    blocks = [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Por"}, {"type": "text", "text": "to"}]
    usage = {"input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 7,
             "output_tokens": 2}
    with ScriptedServer(lambda path, body: (200, message(blocks=blocks, usage=usage))) as srv:
        assert AnthropicClient(srv.url, model="m", retries=0).chat("", "u") == ChatReply("Porto", 112, 2)
    with ScriptedServer(lambda path, body: (200, message(usage={}))) as srv:
        assert AnthropicClient(srv.url, model="m", retries=0).chat("", "u") == ChatReply("Porto", None, None)


def _sequence(*replies):
    it = iter(replies)
    return lambda path, body: next(it)


def test_429_and_529_are_retried_and_retry_after_is_honoured():
    rate = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    script = _sequence((429, rate, {"retry-after": "1.2"}), (529, overloaded), (200, message()))
    with ScriptedServer(script) as srv:
        client = AnthropicClient(srv.url, model="m", retries=3, timeout=60)
        assert client.chat("", "u").content == "Porto"
        gaps = srv.gaps()
    # the server's retry-after (longer than the backoff's first 0.5 s step: the client waits the longer of the two)
    assert len(gaps) == 2 and gaps[0] >= 1.15


def test_529_past_the_retries_is_one_line():
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with ScriptedServer(lambda path, body: (529, overloaded)) as srv:
        with pytest.raises(BenchError) as exc:
            AnthropicClient(srv.url, model="m", retries=1, timeout=60).chat("", "u")
        assert len(srv.requests) == 2
    assert "HTTP 529" in str(exc.value) and "Overloaded" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("status, kind", [(401, "authentication_error"), (400, "invalid_request_error"),
                                          (404, "not_found_error")])
def test_client_errors_end_at_once(status, kind):
    reply = {"type": "error", "error": {"type": kind, "message": "model: claude-nope"}}
    with ScriptedServer(lambda path, body: (status, reply)) as srv:
        with pytest.raises(BenchError) as exc:
            AnthropicClient(srv.url, model="claude-nope", retries=3).chat("", "u")
        assert len(srv.requests) == 1
    assert f"HTTP {status}" in str(exc.value) and kind in str(exc.value)


@pytest.mark.parametrize("reply, why", [
    ({"type": "error", "error": {"type": "api_error", "message": "boom"}}, "api_error: boom"),
    (message(blocks=[{"type": "tool_use", "id": "t", "name": "x", "input": {}}]), "no text content block"),
    ({"choices": [{"message": {"content": "an OpenAI reply"}}]}, "no text content block"),
])
def test_malformed_replies_are_one_line(reply, why):
    with ScriptedServer(lambda path, body: (200, reply)) as srv:
        with pytest.raises(BenchError, match=why):
            AnthropicClient(srv.url, model="m", retries=0).chat("", "u")


@pytest.fixture
def clean_env(monkeypatch):
    for role in ("LLM", "JUDGE"):
        for var in ("PROVIDER", "API", "BASE_URL", "API_KEY", "MODEL"):
            monkeypatch.delenv(f"MEMINI_{role}_{var}", raising=False)
    return monkeypatch


def test_provider_switch(clean_env):
    clean_env.setenv("MEMINI_LLM_PROVIDER", "anthropic")
    with pytest.raises(BenchError, match="MEMINI_LLM_MODEL is not set"):
        chat_from_env()
    clean_env.setenv("MEMINI_LLM_MODEL", "claude-x")
    clean_env.setenv("MEMINI_LLM_API_KEY", "k")
    reader = chat_from_env(retries=0)
    assert reader == AnthropicClient(model="claude-x", api_key="k", retries=0)
    assert judge_from_env(reader) == AnthropicClient(model="claude-x", api_key="k")  # same host: the key follows
    clean_env.setenv("MEMINI_LLM_API", "openai")
    with pytest.raises(BenchError, match="disagree"):
        chat_from_env()
    clean_env.setenv("MEMINI_LLM_API", "anthropic")
    # the OpenAI-only callers (reranker, rewrite, mem0) still refuse it in one line
    with pytest.raises(BenchError, match="only the OpenAI-compatible chat API"):
        openai_chat_from_env()


def as_anthropic(openai_handler):
    """An Anthropic-shaped server around a scripted OpenAI-compatible handler (the same replies)."""
    def handler(path, body):
        assert path == "/v1/messages"
        user = "".join(b["text"] for b in body["messages"][-1]["content"])
        messages = ([{"role": "system", "content": body["system"]}] if "system" in body else []) + [
            {"role": "user", "content": user}]
        status, reply = openai_handler("/v1/chat/completions", {**body, "messages": messages})[:2]
        text = reply["choices"][0]["message"]["content"]
        return status, message(text, usage={"input_tokens": len(user.split()), "output_tokens": len(text.split())})
    return handler


def test_vetobench_live_agent_runs_on_anthropic(clean_env, tmp_path, capsys):
    from conftest import shared
    from veto_scripts import scripted_agent

    from memini_bench.cli import main
    from memini_bench.loaders.vetobench import read_suites

    fixtures = shared("vetobench")
    suite = read_suites(fixtures)[0]
    with ScriptedServer(as_anthropic(scripted_agent(suite))) as srv:
        clean_env.setenv("MEMINI_LLM_PROVIDER", "anthropic")
        clean_env.setenv("MEMINI_LLM_BASE_URL", srv.url)
        clean_env.setenv("MEMINI_LLM_MODEL", "claude-scripted")
        clean_env.setenv("MEMINI_LLM_API_KEY", "sk-loopback")
        with pytest.raises(SystemExit) as exc:
            main(["-suite", "vetobench", "-data", str(fixtures / "corpus.json"), "-veto-embedders", "hash",
                  "-out", str(tmp_path), "-live", "-archive", str(tmp_path / "live.json"),
                  "-veto-conditions", "none,flatfile"])
        out, err = capsys.readouterr()
        keys = [{k.lower(): v for k, v in h.items()}["x-api-key"] for _, _, h in srv.requests]
        assert keys and set(keys) == {"sk-loopback"}
    assert exc.value.code == 0, err
    assert "| none | 1 | 100% | 0% |" in out and "| flatfile | 1 | 0% | 100% |" in out
