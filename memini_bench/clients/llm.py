"""An OpenAI-compatible chat client driven by memini's variables: ``MEMINI_LLM_BASE_URL``, ``MEMINI_LLM_API_KEY``,
``MEMINI_LLM_MODEL`` (default gpt-4o-mini). ``POST {base}/chat/completions``, 120 s timeout per try, a deadline
of twice that per request across retries (``memini_bench.clients.http``), max_tokens 4096.
``MEMINI_LLM_API`` may be unset, empty or ``openai``; memini's other value, ``anthropic``, is not supported here
(a BenchError before any call).

``chat`` returns the reply text with the endpoint's token usage (``usage.prompt_tokens`` /
``usage.completion_tokens``) when it reports one. ``judge_from_env(reader)`` builds the judge from
``MEMINI_JUDGE_{API,BASE_URL,API_KEY,MODEL}``, each unset one taken from the reader (the API key only when the judge
talks to the reader's own URL, so a key is never sent to another host)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from memini_bench.clients.http import bearer, check_base_url, join_url, post_json
from memini_bench.errors import BenchError

DEFAULT_MODEL = "gpt-4o-mini"
SUPPORTED_APIS = ("", "openai")


@dataclass(frozen=True, slots=True)
class ChatReply:
    """One completion: the message text and the endpoint's token counts (None when it sent no ``usage``)."""

    content: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _count(usage: object, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@dataclass(frozen=True)
class ChatClient:
    base_url: str
    model: str = DEFAULT_MODEL
    api_key: str = ""
    timeout: float = 120.0
    max_tokens: int = 4096
    retries: int = 3
    deadline: float | None = None  # seconds per request across retries (None: twice the timeout)

    @classmethod
    def from_env(cls, **overrides: object) -> ChatClient:
        api = os.environ.get("MEMINI_LLM_API", "")
        if api.strip().lower() not in SUPPORTED_APIS:
            raise BenchError(f"MEMINI_LLM_API={api!r}: only the OpenAI-compatible chat API is supported; unset it "
                             "or set it to openai")
        base = os.environ.get("MEMINI_LLM_BASE_URL", "")
        if not base:
            raise BenchError("MEMINI_LLM_BASE_URL is not set; point it at an OpenAI-compatible /v1 endpoint")
        return cls(base_url=check_base_url(base, "MEMINI_LLM_BASE_URL"),
                   model=os.environ.get("MEMINI_LLM_MODEL") or DEFAULT_MODEL,
                   api_key=os.environ.get("MEMINI_LLM_API_KEY", ""), **overrides)

    @property
    def url(self) -> str:
        return join_url(self.base_url, "chat/completions")

    def complete(self, system: str, user: str, *, temperature: float = 0.0) -> str:
        """One chat completion; returns the assistant message text. A reply without one is a BenchError."""
        return self.chat(system, user, temperature=temperature).content

    def chat(self, system: str, user: str, *, temperature: float = 0.0) -> ChatReply:
        """One chat completion: the assistant message text and the reported usage (see ``ChatReply``)."""
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
        reply = post_json(self.url, {"model": self.model, "messages": messages, "temperature": temperature,
                                     "max_tokens": self.max_tokens},
                          headers=bearer(self.api_key), timeout=self.timeout, deadline=self.deadline,
                          retries=self.retries, what="LLM")
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise BenchError(f"LLM at {self.url} sent no choices[0].message.content; "
                             "is it OpenAI-compatible?") from None
        if not isinstance(content, str):
            raise BenchError(f"LLM at {self.url} sent a non-text message content")
        usage = reply.get("usage") if isinstance(reply, dict) else None
        return ChatReply(content, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))


def judge_from_env(reader: ChatClient, **overrides: object) -> ChatClient:
    """The judge client: ``MEMINI_JUDGE_*`` over the reader's settings (see the module docstring)."""
    api = os.environ.get("MEMINI_JUDGE_API", "")
    if api.strip().lower() not in SUPPORTED_APIS:
        raise BenchError(f"MEMINI_JUDGE_API={api!r}: only the OpenAI-compatible chat API is supported; unset it "
                         "or set it to openai")
    base = check_base_url(os.environ.get("MEMINI_JUDGE_BASE_URL") or reader.base_url, "MEMINI_JUDGE_BASE_URL")
    same_host = base.rstrip("/") == reader.base_url.rstrip("/")
    key = os.environ.get("MEMINI_JUDGE_API_KEY") or (reader.api_key if same_host else "")
    return ChatClient(base_url=base, model=os.environ.get("MEMINI_JUDGE_MODEL") or reader.model, api_key=key,
                      **overrides)
