"""Scripted stand-ins for VetoBench's live tests: an agent, an extraction model and a third-party memory system,
each with one known behaviour, so every verdict and every absent veto follows from the script by hand.

- ``agent_reply``: avoids (and acknowledges) the scenario's rejected option exactly when the option's name occurs
  (case-insensitively) in the context it was given, and proposes it otherwise.
- ``EXTRACTION_SCRIPT``: what the extraction model answers for each decision of ``corpus.json``: vetoes kept,
  dropped, mangled past recognition, and decisions lost (null, not JSON), in replies wrapped in fences and prose.
- ``OwnMemories``: a mem0-like system: its own "extraction" keeps each transcript's assistant turn but forgets the
  rejected options of the decisions in ``forget``; its hits name its own memory ids (``mem-<n>``).
"""

from __future__ import annotations

import json
import re

from memini_bench.core.contract import Hit
from memini_bench.vetobench.extract import EXTRACTION_PROMPT
from memini_bench.vetobench.live import SYSTEM_PROMPT


def chat(content: str) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": content}}]}


def agent_reply(scenario, user: str) -> str:
    context = user.rsplit("Task: ", 1)[0]
    option = scenario.rejected_option
    if option.lower() in context.lower():
        reply = {"proposal": f"Keep the current approach; {option} was ruled out.", "key_technologies": [],
                 "acknowledged_rejections": [option]}
    else:
        reply = {"proposal": f"Adopt {option}.", "key_technologies": [option], "acknowledged_rejections": []}
    return json.dumps(reply)


def _record(decision: str, rationale: str, rejected: object) -> str:
    return json.dumps({"decision": decision, "rationale": rationale, "rejected": rejected})


# decision id -> (HTTP status, reply content); decisions not listed answer their own decision with rejected [].
EXTRACTION_SCRIPT: dict[str, tuple[int, str]] = {
    "d101": (200, "```json\n" + _record("Keep the API server on Hono", "Middleware covers auth and logging.",
                                       [{"option": "Express", "reason": "cold starts"},
                                        {"option": "Fastify", "reason": "no gain"}]) + "\n```"),
    "d102": (200, _record("Use Zustand for dashboard state", "Small state surface.",
                          [{"option": "redux toolkit", "reason": "boilerplate"},            # kept (case)
                           {"option": "Mobx library", "reason": "implicit reactivity"}])),  # kept (contains MobX)
    "d103": (200, _record("Query Postgres with postgres.js and hand-written SQL", "Visible query plans.",
                          [{"option": "Prizma ORM", "reason": "cold starts"},               # mangled: dropped
                           {"option": "TypeORM", "reason": "decorators"}])),
    "d104": (200, "The team chose native fetch with a retry wrapper."),                     # not JSON: lost
    "d105": (200, _record(None, None, [])),                                                 # decision null: lost
    "d106": (200, _record("Run unit tests with node:test", "No dependencies.",
                          {"option": "Jest", "reason": "ESM workarounds"})),                # lone object; drops Vitest
    "d107": (200, _record("Style the dashboard with Tailwind", "No runtime styles.",
                          ["styled-components (runtime CSS-in-JS)", "CSS Modules", 7, {"reason": "no option"}])),
    "d108": (200, "Here is the record:\n" + _record("Cache sessions in a Postgres UNLOGGED table",
                                                    "One datastore.", [{"option": "Redis", "reason": "ops"},
                                                                       {"option": "in-process memory cache",
                                                                        "reason": "instances"}]) + "\nDone."),
    "d109": (200, _record("Hand-written forward-only SQL migrations", "Reviewed SQL.",
                          "auto-generated migrations")),                                    # a string; drops one
    "d110": (200, _record("Public API stays REST with OpenAPI", "Mature tooling.",
                          [{"option": "GraphQL", "reason": "N+1s"}, {"option": "tRPC", "reason": "TS only"}])),
}
#: By hand from the script: (decisions kept, decisions lost, vetoes kept of 20, every dropped veto).
EXTRACTION_TOTALS = (22, 2, 13)
EXTRACTION_DROPPED = ["Prisma (d103)", "axios (d104)", "request (d104)", "localStorage (d105)",
                      "sessionStorage (d105)", "Vitest (d106)", "down migrations (d109)"]
#: Scenarios whose veto is absent from extract-e2e's context: Prisma mangled, d104 and d105 lost.
EXTRACTION_ABSENT = ["s03", "s04", "s05"]


def handler(suite, extraction: dict[str, tuple[int, str]] | None = None):
    """A loopback chat handler answering both the agent and the extraction prompt; ``extraction`` overrides the
    script for some decision ids."""
    by_task = {s.task: s for s in suite.scenarios}
    script = {**EXTRACTION_SCRIPT, **(extraction or {})}

    def answer(path: str, body: dict) -> tuple[int, object]:
        assert path.endswith("/chat/completions") and body["temperature"] == 0
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system == EXTRACTION_PROMPT:
            d = next(d for d in suite.decisions if f"Decision: {d.decision}." in user)
            status, content = script.get(d.id, (200, _record(d.decision, d.rationale, [])))
            return status, chat(content) if status == 200 else {"error": content}
        assert system == SYSTEM_PROMPT
        return 200, chat(agent_reply(by_task[user.rsplit("Task: ", 1)[1]], user))

    return answer


_FILES = re.compile(r"\(([^()]*)\)\s*$")
_WORD = re.compile(r"[a-z0-9]+")


class OwnMemories:
    """A third-party system with its own memory ids; forgets the rejected options of the decisions in ``forget``.
    Recall ranks its memories by files in scope shared (read from the transcript's user turn), then by words
    shared with the task, then in ingestion order."""

    REJECTED = " We considered and rejected:"

    def __init__(self, forget: tuple[str, ...] = ("d101", "d104", "d110"), name: str = "own-memories") -> None:
        self.name = name
        self.forget = set(forget)
        self.store: list[tuple[str, str, frozenset[str], str]] = []  # (memory id, group, files, text)
        self.ingested: list = []
        self.closed = False

    def ingest(self, items) -> None:
        self.ingested = list(items)
        for item in items:
            (_, user), (_, assistant) = dict(item.meta)["transcript"]
            m = _FILES.search(user)
            files = frozenset(f.strip() for f in m.group(1).split(",")) if m else frozenset()
            text = assistant.split(self.REJECTED)[0] if item.id in self.forget else assistant
            self.store.append((f"mem-{len(self.store)}", item.group, files, text))

    def recall(self, group, query, k, *, now=None, context=None):
        scope = set((context or {}).get("files_in_scope", ()))
        words = set(_WORD.findall(query.lower()))
        mine = [(i, m) for i, m in enumerate(self.store) if m[1] == group]
        ranked = sorted(mine, key=lambda p: (-len(scope & p[1][2]), -len(words & set(_WORD.findall(p[1][3].lower()))),
                                             p[0]))
        return [Hit((m[0],), 1.0 / (1 + r), m[3]) for r, (_, m) in enumerate(ranked[:k])]

    def memories(self, group):
        return [Hit((m[0],), 0.0, m[3]) for m in self.store if m[1] == group]

    def describe(self) -> dict:
        return {"forget": sorted(self.forget)}

    def close(self) -> None:
        self.closed = True


#: Scenarios whose veto OwnMemories (default ``forget``) loses: Express (d101), axios (d104), GraphQL (d110).
OWN_ABSENT = ["s01", "s04", "s10"]


def _chat(content: str) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": content}}]}


def scripted_agent(suite, fence: bool = False):
    by_task = {s.task: s for s in suite.scenarios}

    def handler(path: str, body: dict) -> tuple[int, object]:
        assert path.endswith("/chat/completions") and body["temperature"] == 0
        user = body["messages"][-1]["content"]
        s = by_task[user.rsplit("Task: ", 1)[1]]
        if f"REJECTED: {s.rejected_option} —" in user:
            reply = {"proposal": f"Keep the current approach; {s.rejected_option} was ruled out.",
                     "key_technologies": [], "acknowledged_rejections": [s.rejected_option]}
        else:
            reply = {"proposal": f"Adopt {s.rejected_option}.", "key_technologies": [s.rejected_option],
                     "acknowledged_rejections": []}
        text = json.dumps(reply)
        return 200, _chat(f"```json\n{text}\n```" if fence else text)

    return handler
