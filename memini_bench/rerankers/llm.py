"""The LLM reranker (memini ``internal/rerank/llm.go``): one chat completion over a numbered candidate list.

Prompt: memini's system message (``SYSTEM``) and the user message

    Question: <query>

    Candidates:
    [1] <content cut to 300 bytes>
    [2] ...

    Most relevant candidate numbers (comma-separated, most relevant first):

Each candidate is cut to 300 UTF-8 bytes on a character boundary, with ``…`` appended when cut. The reply is
read for every run of digits: a 1-based candidate number, out-of-range numbers and repeats ignored; candidates
the reply does not list follow in their original order ("none" keeps the original order). With <= 1 candidate no
call is made. Timeouts and server errors come from ``ChatClient`` (one clear line). Replies that named no
candidate are counted (``unranked``) and reported (``note``): a model that never ranks gives a row equal to the
baseline, which the run then says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memini_bench.clients.llm import ChatClient
from memini_bench.rerankers import Candidate

MAX_CANDIDATE_BYTES = 300
SYSTEM = ("You re-rank candidate memories by how well each one helps answer the user's question. Output ONLY "
          'candidate numbers, most relevant first, comma-separated (e.g. "3, 1, 7"). Include only candidates '
          "that are genuinely relevant; omit the rest. If none are relevant, output the single word none.")
_NUMBER = re.compile(r"[0-9]+")


def truncate_bytes(text: str, limit: int = MAX_CANDIDATE_BYTES) -> str:
    """At most ``limit`` UTF-8 bytes, cut on a character boundary, plus ``…`` when cut (memini's truncate)."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", "ignore") + "…"


def prompt(query: str, candidates: Sequence[Candidate]) -> str:
    lines = [f"Question: {query}", "", "Candidates:"]
    lines += [f"[{n}] {truncate_bytes(c.content)}" for n, c in enumerate(candidates, 1)]
    return "\n".join(lines) + "\n\nMost relevant candidate numbers (comma-separated, most relevant first):"


def apply_order(reply: str, candidates: Sequence[Candidate]) -> list[str]:
    """Candidate ids in the reply's order (1-based numbers), then the unlisted ones in input order."""
    seen: dict[int, None] = {}
    for token in _NUMBER.findall(reply):
        n = int(token)
        if 1 <= n <= len(candidates):
            seen.setdefault(n - 1, None)
    return [candidates[i].id for i in seen] + [c.id for i, c in enumerate(candidates) if i not in seen]


class LLMReranker:
    name = "llm-rerank"

    def __init__(self, chat: ChatClient) -> None:
        self.chat = chat
        self.calls = 0      # completions asked for
        self.unranked = 0   # replies that named no candidate number (the original order was kept)

    def load(self) -> None:
        """Nothing to load (the endpoint does the work)."""

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[str]:
        if len(candidates) <= 1:
            return [c.id for c in candidates]
        reply = self.chat.complete(SYSTEM, prompt(query, candidates))
        self.calls += 1
        if not any(1 <= int(t) <= len(candidates) for t in _NUMBER.findall(reply)):
            self.unranked += 1
        return apply_order(reply, candidates)

    def note(self) -> str:
        """A note when replies named no candidate (their questions keep the baseline order), else ""."""
        if not self.unranked:
            return ""
        return (f"llm-rerank: {self.unranked} of {self.calls} replies named no candidate number (\"none\" or no "
                f"ranking at all); those questions keep the hybrid's order, so the row is the baseline's there"
                + ("; every reply did: is the model following the prompt?" if self.unranked == self.calls else ""))
