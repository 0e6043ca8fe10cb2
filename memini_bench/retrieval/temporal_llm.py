"""The with-LLM anchor extractor (``-temporal-extractor llm``): an LLM reads the query and says which time it names.

Behind the same interface as the regex extractors (``(query, now) -> Anchor | None``, ``retrieval.temporal``): one
chat completion per distinct ``(query, now date)`` through ``clients.llm.ChatClient`` (``MEMINI_LLM_BASE_URL``,
``MEMINI_LLM_API_KEY``, ``MEMINI_LLM_MODEL``), temperature 0, cached in memory for the run (a query asked again,
as in a sweep's cells or the re-rank mode's five strategies, costs nothing). Without ``now`` there is no "today"
to count from: no call, no anchor (the boost needs ``now`` anyway).

The prompt (``SYSTEM``, then ``Today: YYYY-MM-DD (Weekday)`` and ``Question: ...``) asks for JSON only:
``{"days_ago": N, "tolerance_days": T}``, N whole days before today, T days either side, or ``{"days_ago": null}``
when the question names no time. The reply is read tolerantly (code fences stripped, the first ``{...}`` object
taken); N must be an integer in [-36500, 36500] (negative: after today) and T in [0, 3650] (an integer-valued
float such as ``7.0`` counts).
A reply that cannot be read that way gives no anchor and is counted (``unusable``, with the first such reply kept
in ``describe()``), so a run says how many queries the LLM failed on instead of scoring them silently. A failed
request (HTTP error, timeout) ends the run with ``ChatClient``'s one-line error.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from memini_bench.clients.llm import ChatClient
from memini_bench.retrieval.temporal import Anchor

SYSTEM = (
    "You find the time a question refers to. Reply with one JSON object and nothing else: "
    '{"days_ago": N, "tolerance_days": T}, where N is how many whole days before today the thing the question '
    "asks about happened and T how many days either side of that it may be (1 for an exact day, about 3 for a "
    "week, 7 to 15 for a month, 30 or more for a season or year). When the question names no time at all, reply "
    '{"days_ago": null}.')
MAX_DAYS, MAX_TOLERANCE = 36500, 3650
_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*|\s*```\s*$")
_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)


def user_prompt(query: str, now: datetime) -> str:
    return f"Today: {now:%Y-%m-%d} ({now:%A})\nQuestion: {query}"


def _whole(value: object, low: int, high: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    n = int(value)
    return n if low <= n <= high else None


def parse_anchor(reply: str) -> tuple[bool, Anchor | None]:
    """``(readable, anchor)`` of one reply: ``(True, None)`` for ``{"days_ago": null}``, ``(False, None)`` for a
    reply that is not such an object."""
    text = _FENCE.sub("", reply.strip())
    match = _OBJECT.search(text)
    if match is None:
        return False, None
    try:
        obj = json.loads(match.group(0))
    except ValueError:
        return False, None
    if not isinstance(obj, dict) or "days_ago" not in obj:
        return False, None
    if obj["days_ago"] is None:
        return True, None
    days = _whole(obj["days_ago"], -MAX_DAYS, MAX_DAYS)
    tolerance = _whole(obj.get("tolerance_days"), 0, MAX_TOLERANCE)
    if days is None or tolerance is None:
        return False, None
    return True, Anchor(days, tolerance)


class LLMAnchorExtractor:
    """``(query, now) -> Anchor | None`` through one cached chat completion per distinct ``(query, now date)``."""

    def __init__(self, chat: ChatClient) -> None:
        self.chat = chat
        self._cache: dict[tuple[str, str], Anchor | None] = {}
        self.calls = 0
        self.unusable = 0
        self.first_unusable = ""

    def __call__(self, query: str, now: datetime | None) -> Anchor | None:
        if now is None:
            return None
        key = (query, now.date().isoformat())
        if key in self._cache:
            return self._cache[key]
        self.calls += 1
        reply = self.chat.complete(SYSTEM, user_prompt(query, now))
        readable, anchor = parse_anchor(reply)
        if not readable:
            self.unusable += 1
            self.first_unusable = self.first_unusable or reply[:200]
        self._cache[key] = anchor
        return anchor

    def describe(self) -> dict[str, object]:
        """What a results config records: the model and endpoint (never the key), calls and unusable replies."""
        out: dict[str, object] = {"model": self.chat.model, "base_url": self.chat.base_url, "calls": self.calls,
                                  "unusable_replies": self.unusable}
        if self.first_unusable:
            out["first_unusable_reply"] = self.first_unusable
        return out

    def note(self) -> str:
        """A line for the run's output when some replies were unusable, else ""."""
        if not self.unusable:
            return ""
        return (f"temporal extractor llm: {self.unusable} of {self.calls} LLM replies were not a days_ago/"
                f"tolerance_days object (no anchor for those queries); first: {self.first_unusable!r}")


def from_env() -> LLMAnchorExtractor:
    """The extractor over ``MEMINI_LLM_*`` (``clients.providers.openai_chat_from_env``; a missing base URL is a
    one-line error)."""
    from memini_bench.clients.providers import openai_chat_from_env

    return LLMAnchorExtractor(openai_chat_from_env())
