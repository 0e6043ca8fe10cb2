"""Anthropic's Messages API as a chat client (``MEMINI_LLM_PROVIDER=anthropic``), the same shape as ``llm.ChatClient``.

``POST {base}/v1/messages`` (``{base}/messages`` when the base already ends in ``/v1``; default base
``https://api.anthropic.com``) with the headers ``x-api-key: <key>``, ``anthropic-version: 2023-06-01`` and
``content-type: application/json``; the body ``{"model", "max_tokens", "temperature", "system" (only when
non-empty), "messages": [{"role": "user", "content": [{"type": "text", "text": <user>}]}]}``.

The reply's text is the concatenation of its ``content`` blocks of ``"type": "text"`` (other block types are
skipped; a reply with no text block is an error). Tokens: ``usage.input_tokens`` plus, when sent,
``usage.cache_creation_input_tokens`` and ``usage.cache_read_input_tokens`` (prompt), ``usage.output_tokens``
(completion). Errors: HTTP 429 (rate limit) and 529 (overloaded) are retried like 5xx, waiting the reply's
``retry-after`` when it sends one (``clients.http``); 400/401/403/404 end at once in one line that carries the
API's ``error.message``; a 200 body of ``"type": "error"`` is an error too.
"""

from __future__ import annotations

from dataclasses import dataclass

from memini_bench.clients.http import RETRY_STATUS, join_url, post_json
from memini_bench.clients.llm import ChatReply, _count
from memini_bench.errors import BenchError

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
RETRY = RETRY_STATUS | {529}


@dataclass(frozen=True)
class AnthropicClient:
    base_url: str = DEFAULT_BASE_URL
    model: str = ""
    api_key: str = ""
    timeout: float = 120.0
    max_tokens: int = 4096
    retries: int = 3
    deadline: float | None = None

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return join_url(base, "messages" if base.endswith("/v1") else "v1/messages")

    def complete(self, system: str, user: str, *, temperature: float = 0.0) -> str:
        return self.chat(system, user, temperature=temperature).content

    def chat(self, system: str, user: str, *, temperature: float = 0.0) -> ChatReply:
        """One message: the text of the reply's text blocks and its usage (module docstring)."""
        body: dict = {"model": self.model, "max_tokens": self.max_tokens, "temperature": temperature,
                      "messages": [{"role": "user", "content": [{"type": "text", "text": user}]}]}
        if system:
            body["system"] = system
        headers = {"x-api-key": self.api_key, "anthropic-version": API_VERSION}
        reply = post_json(self.url, body, headers=headers, timeout=self.timeout, deadline=self.deadline,
                          retries=self.retries, what="Anthropic API", retry_status=RETRY)
        if isinstance(reply, dict) and reply.get("type") == "error":
            error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
            raise BenchError(f"Anthropic API at {self.url} answered an error ({error.get('type', '?')}: "
                             f"{error.get('message', '')}); check the model name and API key")
        blocks = reply.get("content") if isinstance(reply, dict) else None
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)] if isinstance(blocks, list) else []
        if not texts:
            raise BenchError(f"Anthropic API at {self.url} sent no text content block; is it the Messages API?")
        usage = reply.get("usage")
        prompt = _count(usage, "input_tokens")
        if prompt is not None:
            prompt += sum(_count(usage, k) or 0 for k in ("cache_creation_input_tokens", "cache_read_input_tokens"))
        return ChatReply("".join(texts), prompt, _count(usage, "output_tokens"))
