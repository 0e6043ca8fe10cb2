"""A scripted OpenAI-compatible chat server for the QA and rewrite tests, and for a demo without a real LLM.

It answers ``POST .../chat/completions`` by the request's system prompt, deterministically:

- memini's reader prompt: ``<mem_thinking>...</mem_thinking>`` then every memory line of the prompt (without its
  number and date) joined by `` | ``, or ``I don't know`` when there is none. A "copying" reader: its answer is right
  exactly when the recalled memories contain the reference.
- a judge rubric: ``CORRECT`` when every word (``[a-z0-9]+``, lower-cased) of the reference occurs in the candidate
  (the abstention rubric: when the candidate says "don't know"), else ``INCORRECT``.
- memini's rewrite prompt: three variants of the question (numbered, bulleted and plain lines, to exercise the
  parsing).

``usage`` reports whitespace-word counts of the messages (in) and of the reply (out), unless ``usage=False``.
Faults by request number (1-based): ``fail`` -> HTTP 500, ``garbage`` -> a body that is not JSON, ``die_after`` N ->
the process exits after answering N requests (run it as a script for that); ``delay`` seconds before each reply.

    python tests/qa_server.py --port 8765 [--die-after N] [--fail 3,4] [--garbage 5] [--no-usage] [--delay S]

prints ``http://127.0.0.1:PORT/v1`` on its first line, then serves until killed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memini_bench.qa import prompts  # noqa: E402
from memini_bench.systems.rewrite import EXPAND_SYSTEM  # noqa: E402

_WORD = re.compile(r"[a-z0-9]+")
_MEMORY_LINE = re.compile(r"^\d+\. \[\d{4}-\d{2}-\d{2}\] (.*)$")


def scripted_llm_env(monkeypatch) -> None:
    """The environment of a QA test against this server: the reader model ``scripted``, no provider, key or judge
    setting of the caller's shell (the judge is the reader's)."""
    for key in ("MEMINI_LLM_API", "MEMINI_LLM_API_KEY", "MEMINI_JUDGE_API", "MEMINI_JUDGE_BASE_URL",
                "MEMINI_JUDGE_API_KEY", "MEMINI_JUDGE_MODEL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MEMINI_LLM_MODEL", "scripted")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def reader_reply(user: str) -> str:
    memories = [m.group(1) for line in user.split("\n") if (m := _MEMORY_LINE.match(line))]
    answer = " | ".join(memories) if memories else "I don't know"
    return f"<mem_thinking>{len(memories)} memories scanned</mem_thinking>\n{answer}"


def judge_reply(system: str, user: str) -> str:
    fields = dict(line.split(": ", 1) for line in user.split("\n") if ": " in line)
    candidate = set(words(fields.get("Candidate", "")))
    if system == prompts.JUDGE_ABSTENTION:
        return "CORRECT" if "don't know" in fields.get("Candidate", "").lower() else "INCORRECT"
    reference = words(fields.get("Reference", ""))
    return "CORRECT" if reference and set(reference) <= candidate else "INCORRECT"


def rewrite_reply(user: str) -> str:
    query = user.removeprefix("Question: ")
    return f"1. {' '.join(reversed(query.split()))}\n- {query} changed\n\n* {query.split()[0]} now"


def reply_text(body: dict) -> str:
    messages = body.get("messages", [])
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    user = next((m["content"] for m in messages if m.get("role") == "user"), "")
    if system == prompts.READER_SYSTEM:
        return reader_reply(user)
    if system in prompts.RUBRICS.values():
        return judge_reply(system, user)
    if system == EXPAND_SYSTEM:
        return rewrite_reply(user)
    return "unscripted"


class ChatScript:
    """A ``tests.loopback.ScriptedServer`` handler (see the module docstring); ``calls`` counts requests."""

    def __init__(self, *, fail: frozenset[int] = frozenset(), garbage: frozenset[int] = frozenset(),
                 usage: bool = True, die_after: int = 0, delay: float = 0.0, hold_after: int = 0) -> None:
        self.fail, self.garbage, self.usage, self.die_after = fail, garbage, usage, die_after
        self.delay, self.hold_after = delay, hold_after
        self.release = threading.Event()   # ends the hold of the calls after ``hold_after``
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, path: str, body: object) -> tuple[int, object]:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self.die_after and n > self.die_after:
            os._exit(0)
        if self.hold_after and n > self.hold_after:  # a client stopped at a known point, however slow the machine
            self.release.wait(600)
        if self.delay:
            time.sleep(self.delay)
        if n in self.fail:
            return 500, {"error": "scripted failure"}
        if n in self.garbage:
            return 200, b"<html>bad gateway</html>"
        if not path.endswith("/chat/completions") or not isinstance(body, dict):
            return 404, {"error": "not found"}
        text = reply_text(body)
        reply: dict = {"choices": [{"message": {"role": "assistant", "content": text}}]}
        if self.usage:
            prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
            reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": len(text.split())}
        return 200, reply


def _numbers(text: str) -> frozenset[int]:
    return frozenset(int(x) for x in text.split(",") if x.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--die-after", type=int, default=0)
    parser.add_argument("--fail", default="")
    parser.add_argument("--garbage", default="")
    parser.add_argument("--no-usage", action="store_true")
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    from loopback import ScriptedServer

    script = ChatScript(fail=_numbers(args.fail), garbage=_numbers(args.garbage), usage=not args.no_usage,
                        die_after=args.die_after, delay=args.delay)
    server = ScriptedServer(script, port=args.port)
    with server:
        print(server.url + "/v1", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
