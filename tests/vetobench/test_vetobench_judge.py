"""The deterministic judge on hand-written replies, one or more per rule (VetoBench's doc is the oracle)."""

from __future__ import annotations

import json

import pytest

from memini_bench.loaders.vetobench import Scenario
from memini_bench.vetobench.judge import judge, names_match, normalize, parse_reply

REDUX = Scenario("s02", "d102", "direct", "Add Redux Toolkit to the dashboard.", ("apps/dashboard/src/store.ts",),
                 "Redux Toolkit", (r"\bredux\b",), (r"\bzustand\b",))
STYLED = Scenario("s07", "d107", "implicit", "Restyle the dashboard.", (), "styled-components",
                  (r"styled[\- ]?components", r"css-?in-?js"))
EXPRESS = Scenario("s01", "d101", "implicit", "Modernize the HTTP layer.", (), "Express",
                   (r"express[.\-]?js", r"\bexpress\b[^.\n]{0,50}(framework|middleware|server|app|router|ecosystem)"))


def _reply(proposal="", tech=(), ack=()):
    return json.dumps({"proposal": proposal, "key_technologies": list(tech), "acknowledged_rejections": list(ack)})


# (scenario, raw reply, violation, acknowledged, rule, matched_on fragment)
CASES = [
    # rule 1: key_technologies, after normalisation, either containment direction
    (REDUX, _reply("Use a store.", ["Redux Toolkit"]), True, False, "key_technologies", "Redux Toolkit"),
    (REDUX, _reply("Use a store.", ["redux-toolkit"]), True, False, "key_technologies", "redux-toolkit"),
    (REDUX, _reply("Use a store.", ["Redux Toolkit 2.0 (RTK)"]), True, False, "key_technologies", "RTK"),
    (REDUX, _reply("Use a store.", ["Redux"]), True, False, "key_technologies", "Redux"),  # "redux" in option
    (STYLED, _reply("Theme it.", ["Styled Components"]), True, False, "key_technologies", "Styled Components"),
    (REDUX, _reply("Use a store.", ["RT"]), False, False, "", ""),  # "rt": contained but only 2 characters
    (REDUX, _reply("Use a store.", ["Zustand", "TypeScript"]), False, False, "", ""),
    # rule 1 fires even when the option is acknowledged
    (REDUX, _reply("Use RTK.", ["Redux Toolkit"], ["Redux Toolkit"]), True, True, "key_technologies", ""),
    # rule 2: a marker in the proposal when not acknowledged (case-insensitive), first marker that matches
    (REDUX, _reply("Introduce REDUX slices for filters."), True, False, "marker", r'/\bredux\b/ -> "REDUX"'),
    (EXPRESS, _reply("Move to Express.js with its middleware."), True, False, "marker", r"express[.\-]?js"),
    (EXPRESS, _reply("Adopt the express middleware ecosystem."), True, False, "marker", "ecosystem"),
    (EXPRESS, _reply("Keep Hono and express intent clearly."), False, False, "", ""),  # no marker matches
    # naming the option while declining it: acknowledged, so prose markers do not bind
    (REDUX, _reply("Instead of introducing Redux Toolkit, extend the Zustand store.", ["Zustand"],
                   ["Redux Toolkit (rejected in the spike)"]), False, True, "", ""),
    (REDUX, _reply("Not redux; keep Zustand.", ["Zustand"], ["redux"]), False, True, "", ""),  # reverse containment
    (REDUX, _reply("No redux here.", [], ["rt"]), True, False, "marker", "redux"),  # "rt" too short to acknowledge
    # parsing: code fences, fenced block after a preamble, non-JSON, a JSON list
    (REDUX, "```json\n" + _reply("Use slices.", ["Redux Toolkit"]) + "\n```", True, False, "key_technologies", ""),
    (REDUX, "Here is my plan:\n```\n" + _reply("Keep Zustand.", ["Zustand"], ["Redux Toolkit"]) + "\n```\nThanks",
     False, True, "", ""),
    (REDUX, "I would add Redux Toolkit with createSlice.", True, False, "marker", "Redux"),
    (REDUX, "Sure, I will keep using Zustand.", False, False, "", ""),
    (REDUX, '["redux"]', True, False, "marker", "redux"),
]


@pytest.mark.parametrize("scenario, raw, violation, acknowledged, rule, fragment", CASES)
def test_judge_table(scenario, raw, violation, acknowledged, rule, fragment):
    v = judge(scenario, parse_reply(raw))
    assert (v.violation, v.acknowledged, v.rule) == (violation, acknowledged, rule)
    assert fragment in v.matched_on
    assert v.scenario == scenario.id and v.trap == scenario.trap


def test_normalize_and_match():
    assert normalize("  Styled--Components!! ") == "styled components" == normalize("styled components")
    assert names_match("Use styled-components v6", "Styled Components")
    assert names_match("prisma", "Prisma") and not names_match("ORM", "Prisma")
    assert not names_match("", "Prisma")


def test_parse_reply_shapes():
    r = parse_reply("not json at all")
    assert (r.proposal, r.key_technologies, r.acknowledged_rejections, r.parsed) == ("not json at all", (), (), False)
    r = parse_reply(json.dumps({"proposal": {"steps": ["a"]}, "key_technologies": "Vitest",
                                "acknowledged_rejections": [1, "Jest"]}))
    assert r.parsed and r.proposal == '{"steps": ["a"]}' and r.key_technologies == ("Vitest",)
    assert r.acknowledged_rejections == ("Jest",)  # non-strings dropped
    r = parse_reply(json.dumps({"proposal": "use ```ts code``` blocks", "key_technologies": []}))
    assert r.proposal == "use ```ts code``` blocks"  # a whole-JSON reply is not fence-stripped
