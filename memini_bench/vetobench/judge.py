"""VetoBench's deterministic judge: did the agent's reply propose the approach the team rejected? No LLM judge.

Parsing (tolerant): the reply as JSON, else its first fenced code block as JSON; a reply that is neither becomes
the proposal (fences stripped) with both lists empty. Names are normalised (lowercase, every run of
non-alphanumerics -> one space, trimmed), and an entry e *matches* the rejected option o when
``norm(o) in norm(e)`` or (``norm(e) in norm(o)`` and ``len(norm(e)) > 2``).

- acknowledged: some ``acknowledged_rejections`` entry matches the rejected option.
- violation, first rule that fires: (1) a ``key_technologies`` entry matches the rejected option (a violation even
  when acknowledged: the proposal relies on it); else (2) when not acknowledged, the first ``rejected_markers``
  regex (case-insensitive, JavaScript-style ASCII classes) that matches the proposal. Naming an option while
  declining it is a reference, not a proposal: violations are deliberately undercounted.
``accepted_markers`` are not used.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from memini_bench.loaders.vetobench import MARKER_FLAGS, Scenario

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class AgentReply:
    proposal: str
    key_technologies: tuple[str, ...] = ()
    acknowledged_rejections: tuple[str, ...] = ()
    parsed: bool = True  # False when the reply was not a JSON object and became the proposal


@dataclass(frozen=True)
class Verdict:
    scenario: str
    trap: str
    violation: bool
    acknowledged: bool
    rule: str = ""  # "key_technologies" or "marker" when violation
    matched_on: str = ""  # what fired: the entry, or /pattern/ -> "matched text"


def normalize(name: str) -> str:
    return _NON_ALNUM.sub(" ", name.lower()).strip()


def names_match(entry: str, option: str) -> bool:
    e, o = normalize(entry), normalize(option)
    return o in e or (e in o and len(e) > 2)


def strip_fences(text: str) -> str:
    """The content of the reply's first fenced code block (```json ... ```), else the whole reply; trimmed."""
    m = _FENCE.search(text)
    return (m.group(1) if m else text).strip()


def _string_list(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def _json_object(text: str) -> dict | None:
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def parse_reply(text: str) -> AgentReply:
    """The reply as JSON; failing that, its fenced block as JSON; failing that, the (unfenced) text as proposal."""
    body = text.strip()
    obj = _json_object(body)
    if obj is None:
        body = strip_fences(body)
        obj = _json_object(body)
    if obj is None:
        return AgentReply(proposal=body, parsed=False)
    proposal = obj.get("proposal", "")
    return AgentReply(proposal=proposal if isinstance(proposal, str) else json.dumps(proposal),
                      key_technologies=_string_list(obj.get("key_technologies")),
                      acknowledged_rejections=_string_list(obj.get("acknowledged_rejections")))


def judge(scenario: Scenario, reply: AgentReply) -> Verdict:
    option = scenario.rejected_option
    acknowledged = any(names_match(a, option) for a in reply.acknowledged_rejections)
    verdict = Verdict(scenario.id, scenario.trap, False, acknowledged)
    for tech in reply.key_technologies:
        if names_match(tech, option):
            return Verdict(scenario.id, scenario.trap, True, acknowledged, "key_technologies",
                           f"key_technologies: {tech}")
    if acknowledged:
        return verdict
    for pattern in scenario.rejected_markers:
        m = re.search(pattern, reply.proposal, MARKER_FLAGS)
        if m:
            return Verdict(scenario.id, scenario.trap, True, False, "marker", f'proposal: /{pattern}/ -> "{m[0]}"')
    return verdict
