"""The one switch between chat APIs: ``PROVIDERS`` maps a provider name to its client class.

The reader's provider is ``MEMINI_LLM_PROVIDER`` (or memini's own name for it, ``MEMINI_LLM_API``; both set and
different is an error), default ``openai``; the judge's is ``MEMINI_JUDGE_PROVIDER`` / ``MEMINI_JUDGE_API``, default
the reader's. A client is built from ``MEMINI_{LLM,JUDGE}_{BASE_URL,API_KEY,MODEL}``: an unset base URL or model takes
the provider's default when it has one (anthropic: ``https://api.anthropic.com``, no default model; openai: no
default URL, model gpt-4o-mini), else it is an error before any call. The judge takes each unset variable from the
reader when both use one provider, the API key only when the judge talks to the reader's own URL (a key is never
sent to another host).

Every client class has the fields ``base_url``, ``model``, ``api_key``, ``timeout``, ``max_tokens``, ``retries``,
``deadline`` and the methods ``chat(system, user, temperature=0.0) -> ChatReply`` and ``complete(...) -> str``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from memini_bench.clients.anthropic import DEFAULT_BASE_URL as ANTHROPIC_URL
from memini_bench.clients.anthropic import AnthropicClient
from memini_bench.clients.http import check_base_url
from memini_bench.clients.llm import DEFAULT_MODEL, SUPPORTED_APIS, ChatClient
from memini_bench.errors import BenchError


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    client: type
    default_url: str  # "" = must be given
    default_model: str  # "" = must be given
    url_hint: str


PROVIDERS = {
    "openai": Provider("openai", ChatClient, "", DEFAULT_MODEL, "an OpenAI-compatible /v1 endpoint"),
    "anthropic": Provider("anthropic", AnthropicClient, ANTHROPIC_URL, "", "Anthropic's API"),
}
Client = ChatClient | AnthropicClient


def provider_of(client: object) -> str:
    return next(p.name for p in PROVIDERS.values() if isinstance(client, p.client))


def _provider(role: str, default: str, only: tuple[str, ...] | None) -> Provider:
    given = {var: os.environ[var].strip().lower() for var in (f"MEMINI_{role}_PROVIDER", f"MEMINI_{role}_API")
             if os.environ.get(var, "").strip()}
    if len(set(given.values())) > 1:
        raise BenchError(f"MEMINI_{role}_PROVIDER and MEMINI_{role}_API disagree ({', '.join(given.values())}); "
                         "set one of them")
    var, name = next(iter(given.items()), ("", default))
    allowed = only or tuple(PROVIDERS)
    if name not in allowed:
        raw = os.environ.get(var, "")
        if only == ("openai",):
            raise BenchError(f"{var}={raw!r}: only the OpenAI-compatible chat API is supported; unset it or set it "
                             "to openai")
        raise BenchError(f"{var}={raw!r}: not a chat provider; use one of {', '.join(allowed)}")
    return PROVIDERS[name]


def chat_from_env(*, only: tuple[str, ...] | None = None, **overrides: object) -> Client:
    """The reader (``MEMINI_LLM_*``); ``only`` limits the providers a caller can serve."""
    p = _provider("LLM", "openai", only)
    base = os.environ.get("MEMINI_LLM_BASE_URL", "") or p.default_url
    if not base:
        raise BenchError(f"MEMINI_LLM_BASE_URL is not set; point it at {p.url_hint}")
    model = os.environ.get("MEMINI_LLM_MODEL") or p.default_model
    if not model:
        raise BenchError(f"MEMINI_LLM_MODEL is not set; name the {p.name} model to call")
    return p.client(base_url=check_base_url(base, "MEMINI_LLM_BASE_URL"), model=model,
                    api_key=os.environ.get("MEMINI_LLM_API_KEY", ""), **overrides)


def judge_from_env(reader: Client, **overrides: object) -> Client:
    """The judge: ``MEMINI_JUDGE_*`` over the reader's settings (module docstring)."""
    same_provider_default = provider_of(reader)
    p = _provider("JUDGE", same_provider_default, None)
    inherit = p.name == same_provider_default
    base = os.environ.get("MEMINI_JUDGE_BASE_URL") or (reader.base_url if inherit else p.default_url)
    if not base:
        raise BenchError(f"MEMINI_JUDGE_BASE_URL is not set; point it at {p.url_hint}")
    same_host = base.rstrip("/") == reader.base_url.rstrip("/")
    key = os.environ.get("MEMINI_JUDGE_API_KEY") or (reader.api_key if same_host else "")
    model = os.environ.get("MEMINI_JUDGE_MODEL") or (reader.model if inherit else p.default_model)
    if not model:
        raise BenchError(f"MEMINI_JUDGE_MODEL is not set; name the {p.name} model to judge with")
    return p.client(base_url=check_base_url(base, "MEMINI_JUDGE_BASE_URL"), model=model, api_key=key, **overrides)


def openai_chat_from_env(**overrides: object) -> ChatClient:
    """The OpenAI-compatible client of ``MEMINI_LLM_*`` (the reranker, the query rewrite and mem0 speak only
    that API; ``anthropic`` is refused with one line)."""
    return chat_from_env(only=SUPPORTED_APIS[1:], **overrides)
