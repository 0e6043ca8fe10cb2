"""Generate the built-in correction suite (``memini_bench/data/corrections.json``) from a seed.

    python cmd/make_corrections.py [--seed N] [--groups N] [--out PATH]

Deterministic: the same seed, group count and this file give the same bytes (``tests/loaders/test_corrections.py``
regenerates the committed file and compares). Each group (history) is a few people with a few facts each (an
employer, a city, a car ...), every fact following one of the scenarios below, plus distractor writes (chatter
about the same people); its writes are dated over about a year and interleaved in time order. Scenarios:

- ``stable``: stated (and maybe restated); ``changed``: stated, changed (and maybe the new value restated);
- ``reverted``: stated, changed, changed back; ``changed-twice``: three values in turn;
- ``deleted``: stated (maybe changed), then forgotten.

Questions: a ``current`` question for every fact with a value at the end, a ``forgotten`` one for every forgotten
fact, an ``as-of`` one for each fact that changed, asked in the middle of an earlier value's time (the schema and
what each kind scores: ``memini_bench/loaders/corrections.py``, docs/temporal.md).
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

SEED = 20261205
GROUPS = 24
OUT = Path(__file__).resolve().parents[1] / "memini_bench" / "data" / "corrections.json"

FIRST = ["Maya", "Omar", "Lena", "Ravi", "Sofia", "Tomas", "Aiko", "Bruno", "Chloe", "Dmitri", "Elena", "Farid",
         "Grace", "Hugo", "Ines", "Jonas", "Kira", "Liam", "Mira", "Nadia", "Oscar", "Priya", "Quinn", "Rosa"]
LAST = ["Chen", "Haddad", "Novak", "Iyer", "Rossi", "Berg", "Tanaka", "Silva", "Martin", "Volkov", "Costa", "Aziz",
        "Okafor", "Lindqvist", "Moreau", "Weber", "Sato", "Byrne", "Kowalski", "Petrov", "Nguyen", "Ortiz"]

# attribute: (values, first statement, change statement, restatement, question, as-of question)
ATTRIBUTES: dict[str, tuple[list[str], str, str, str, str, str]] = {
    "employer": (["Acme Robotics", "Globex", "Initech", "Hooli", "Vandelay Imports", "Stark Logistics",
                  "Wayne Biotech", "Umbrella Health", "Soylent Foods", "Cyberdyne Labs"],
                 "{name} works at {value} as an engineer.",
                 "{name} left the old job and now works at {value}.",
                 "{name} is still at {value} and likes the team there.",
                 "Where does {name} work?", "Where did {name} work in {month}?"),
    "city": (["Lisbon", "Toronto", "Osaka", "Nairobi", "Denver", "Krakow", "Melbourne", "Utrecht", "Austin",
              "Valparaiso"],
             "{name} lives in {value}.",
             "{name} moved house and now lives in {value}.",
             "{name} says {value} still feels like home.",
             "Which city does {name} live in?", "Which city did {name} live in during {month}?"),
    "car": (["a blue Volvo estate", "a red Mazda hatchback", "a white Tesla Model 3", "a green Subaru Outback",
             "a grey Honda Civic", "a black Ford Ranger", "a silver Toyota Prius", "a yellow Fiat 500"],
            "{name} drives {value}.",
            "{name} sold the old car and now drives {value}.",
            "{name} took {value} on another road trip.",
            "What car does {name} drive?", "What car did {name} drive in {month}?"),
    "diet": (["vegetarian", "vegan", "pescatarian", "gluten-free", "keto", "dairy-free"],
             "{name} follows a {value} diet.",
             "{name} switched diets and is now {value}.",
             "{name} is sticking with being {value}.",
             "What diet does {name} follow?", "What diet did {name} follow in {month}?"),
    "gym": (["Iron Temple", "Peak Climbing", "Riverside Pool", "CrossBox", "Yoga Loft", "Titan Fitness"],
            "{name} trains at {value} three times a week.",
            "{name} cancelled the old membership and joined {value}.",
            "{name} renewed the membership at {value}.",
            "Which gym does {name} go to?", "Which gym did {name} go to in {month}?"),
    "phone": (["555-0142", "555-0187", "555-0113", "555-0199", "555-0166", "555-0128", "555-0151", "555-0175"],
              "{name}'s phone number is {value}.",
              "{name} got a new phone number: {value}.",
              "{name} confirmed the phone number is {value}.",
              "What is {name}'s phone number?", "What was {name}'s phone number in {month}?"),
    "manager": (["Hannah Cole", "Victor Lam", "Greta Holm", "Samuel Obi", "Alice Ward", "Pedro Ruiz"],
                "{name} reports to {value}.",
                "After the reorg {name} reports to {value}.",
                "{name} had a good one-on-one with {value}, the manager.",
                "Who is {name}'s manager?", "Who was {name}'s manager in {month}?"),
}
CHATTER = ["{name} went hiking on Saturday and saw a fox.", "{name} is reading a novel about a lighthouse keeper.",
           "{name} baked sourdough bread for the first time.", "{name} watched the football final with friends.",
           "{name} is learning to play the cello.", "{name} caught a cold after the rainy weekend.",
           "{name} recommended a podcast about space history.", "{name} planted tomatoes on the balcony.",
           "{name} is planning a trip to visit family next month.", "{name} fixed the kitchen tap without help."]
SCENARIOS = ("stable", "changed", "reverted", "changed-twice", "deleted")
PEOPLE, FACTS, CHATS = 3, 3, 4


def _month(t: datetime) -> str:
    return t.strftime("%B %Y")


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _fact_events(rng: random.Random, scenario: str, values: list[str], start: datetime) -> list[tuple]:
    """(time, op, value) of one fact's scenario: op is state, change, restate or forget."""
    chosen = rng.sample(values, 3)
    t = start
    events: list[tuple] = []

    def step(op: str, value: str | None) -> None:
        nonlocal t
        events.append((t, op, value))
        t += timedelta(days=rng.randint(20, 70), hours=rng.randint(0, 10))

    step("state", chosen[0])
    if scenario == "stable":
        if rng.random() < 0.6:
            step("restate", chosen[0])
    elif scenario == "changed":
        step("change", chosen[1])
        if rng.random() < 0.5:
            step("restate", chosen[1])
    elif scenario == "reverted":
        step("change", chosen[1])
        step("change", chosen[0])
    elif scenario == "changed-twice":
        step("change", chosen[1])
        step("change", chosen[2])
    else:
        if rng.random() < 0.5:
            step("change", chosen[1])
        step("forget", None)
    return events


def _group(rng: random.Random, g: int) -> dict:
    group = f"h{g:02d}"
    names = [f"{a} {b}" for a, b in zip(rng.sample(FIRST, PEOPLE), rng.sample(LAST, PEOPLE), strict=True)]
    base = datetime(2024, 1, 8, 9, 0, tzinfo=UTC) + timedelta(days=rng.randint(0, 60))
    raw: list[tuple] = []  # (time, order, kind, payload)
    facts: list[tuple[str, str, str, list[tuple]]] = []
    for name in names:
        for attr in rng.sample(sorted(ATTRIBUTES), FACTS):
            scenario = rng.choice(SCENARIOS)
            fact = f"{name.split()[0].lower()}/{attr}"
            events = _fact_events(rng, scenario, ATTRIBUTES[attr][0], base + timedelta(days=rng.randint(0, 40)))
            facts.append((fact, name, attr, events))
            raw += [(t, len(raw), fact, name, attr, op, value) for t, op, value in events]
        for text in rng.sample(CHATTER, CHATS):
            raw.append((base + timedelta(days=rng.randint(0, 300), hours=rng.randint(0, 23)), len(raw), "", name,
                        "", "chat", text))
    raw.sort(key=lambda e: (e[0], e[1]))
    out_events: list[dict] = []
    for n, (t, _, fact, name, attr, op, value) in enumerate(raw):
        if op == "forget":
            out_events.append({"forget": fact, "time": _iso(t)})
            continue
        wid = f"{group}-w{n:03d}"
        if op == "chat":
            out_events.append({"id": wid, "time": _iso(t), "fact": f"{name.split()[0].lower()}/chat{n}",
                               "value": "said", "text": value.format(name=name)})
            continue
        template = {"state": 1, "change": 2, "restate": 3}[op]
        out_events.append({"id": wid, "time": _iso(t), "fact": fact, "value": value,
                           "text": ATTRIBUTES[attr][template].format(name=name, value=value)})
    questions: list[dict] = []
    for fact, name, attr, events in facts:
        q = ATTRIBUTES[attr]
        qid = f"{group}-{fact.replace('/', '-')}"
        if events[-1][1] == "forget":
            questions.append({"id": f"{qid}-forgotten", "kind": "forgotten", "fact": fact,
                              "query": q[4].format(name=name)})
            continue
        questions.append({"id": f"{qid}-current", "kind": "current", "fact": fact, "query": q[4].format(name=name)})
        changes = [i for i, e in enumerate(events) if e[1] == "change"]
        if changes:
            i = changes[-1]
            start, end = events[i - 1][0], events[i][0]  # the value before the last change held from start to end
            while i > 1 and events[i - 1][1] == "restate":
                start, i = events[i - 2][0], i - 1
            at = start + (end - start) / 2
            questions.append({"id": f"{qid}-asof", "kind": "as-of", "fact": fact, "at": _iso(at),
                              "query": q[5].format(name=name, month=_month(at))})
    return {"group": group, "events": out_events, "questions": questions}


def generate(seed: int = SEED, groups: int = GROUPS) -> dict:
    rng = random.Random(seed)
    return {"name": "corrections",
            "generator": {"script": "cmd/make_corrections.py", "seed": seed, "groups": groups},
            "histories": [_group(rng, g) for g in range(groups)]}


def render(doc: dict) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--groups", type=int, default=GROUPS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.write_text(render(generate(args.seed, args.groups)), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
