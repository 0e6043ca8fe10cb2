"""The fact-history loader (``-suite corrections``): the committed suite is what its generator makes from its seed;
what each write is and each question's ids follow from the history (hand-worked cases); bad files are one line
naming the place and the fix; a hypothesis fuzz holds every mutated file to that contract, downstream included
(the timeline replayed through real systems and scored)."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest
from corrections_replay import replay_scored
from fuzz_strategies import mutated, serialized, time_limit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.core.contract import SUPERSEDES
from memini_bench.errors import BenchError
from memini_bench.loaders.corrections import (
    CORRECTIONS_PATH,
    Forget,
    Update,
    Write,
    load_corrections,
    meta_of,
    parse_histories,
    timeline,
)

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("make_corrections", ROOT / "cmd" / "make_corrections.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_suite_is_its_generators_output_from_its_seed():
    gen = _generator()
    committed = CORRECTIONS_PATH.read_text(encoding="utf-8")
    doc = json.loads(committed)
    assert doc["generator"] == {"script": "cmd/make_corrections.py", "seed": gen.SEED, "groups": gen.GROUPS}
    assert gen.render(gen.generate(gen.SEED, gen.GROUPS)) == committed
    assert gen.render(gen.generate(gen.SEED + 1, 2)) != gen.render(gen.generate(gen.SEED, 2))


def test_the_committed_suite_has_every_kind_and_every_scenario():
    ds = load_corrections()
    kinds = {q.category for q in ds.questions}
    assert kinds == {"current", "forgotten", "as-of"}
    steps = timeline(ds)
    assert {type(s) for s in steps} == {Write, Update, Forget}
    reverts = [q for q in ds.questions if q.category == "current" and len(q.gold) > 1
               and meta_of(q.meta, "stale")]
    assert reverts, "a reverted value: its first and last writes both hold the current value"
    assert len(ds.items) < 2000 and len(ds.questions) < 1000  # small enough for CI


DOC = {"name": "mine", "histories": [{"group": "g", "events": [
    {"id": "w1", "time": "2024-01-01T00:00:00Z", "fact": "city", "value": "Lisbon", "text": "I live in Lisbon."},
    {"id": "w2", "time": "2024-02-01T00:00:00Z", "fact": "city", "value": "Lisbon", "text": "Still in Lisbon."},
    {"id": "n1", "time": "2024-02-15T00:00:00Z", "fact": "car", "value": "Volvo", "text": "I drive a Volvo."},
    {"id": "w3", "time": "2024-03-01T00:00:00Z", "fact": "city", "value": "Osaka", "text": "I moved to Osaka."},
    {"id": "w4", "time": "2024-04-01T00:00:00Z", "fact": "city", "value": "Lisbon", "text": "Back in Lisbon."},
    {"forget": "car", "time": "2024-05-01T00:00:00Z"}],
    "questions": [
        {"id": "q-now", "kind": "current", "fact": "city", "query": "Where do I live?"},
        {"id": "q-car", "kind": "forgotten", "fact": "car", "query": "What do I drive?"},
        {"id": "q-march", "kind": "as-of", "fact": "city", "query": "Where did I live in March?",
         "at": "2024-03-15T00:00:00Z"},
        {"id": "q-jan", "kind": "as-of", "fact": "city", "query": "Where did I live in January?",
         "at": "2024-01-20T00:00:00Z"}]}]}


def test_what_each_write_is_and_each_questions_ids_follow_from_the_history():
    ds = parse_histories(copy.deepcopy(DOC), "mine.json")
    items = {it.id: it for it in ds.items}
    assert meta_of(items["w2"].meta, SUPERSEDES) is None  # a restatement
    assert meta_of(items["w3"].meta, SUPERSEDES) == ("w1", "w2")  # a change supersedes the live writes
    assert meta_of(items["w4"].meta, SUPERSEDES) == ("w3",)  # a revert
    assert meta_of(items["n1"].meta, "forgotten_at") is not None
    q = {q.id: q for q in ds.questions}
    assert q["q-now"].gold == ("w1", "w2", "w4") and meta_of(q["q-now"].meta, "stale") == ("w3",)
    assert q["q-car"].gold == ("n1",)
    assert q["q-march"].gold == ("w3",) and meta_of(q["q-march"].meta, "stale") == ("w1", "w2", "w4")
    assert q["q-jan"].gold == ("w1",)  # w2, w4 hold the value too but came after
    assert q["q-march"].now.month == 3 and q["q-now"].now.month == 5  # asked after the history
    steps = timeline(ds)
    assert [type(s).__name__ for s in steps] == ["Write", "Update", "Update", "Forget"]
    assert [it.id for it in steps[0].items] == ["w1", "w2", "n1"] and steps[3].ids == ("n1",)


@pytest.mark.parametrize(("change", "expected"), [
    (lambda d: d["histories"][0]["events"][1].update(time="2023-01-01T00:00:00Z"), "events[1].time: 2023"),
    (lambda d: d["histories"][0]["events"].append({"forget": "pet", "time": "2025-01-01T00:00:00Z"}),
     "fact 'pet' has no value to forget"),
    (lambda d: d["histories"][0]["questions"][0].update(fact="car"), "fact 'car' is forgotten"),
    (lambda d: d["histories"][0]["questions"][1].update(fact="city"), "a forgotten question needs"),
    (lambda d: d["histories"][0]["questions"][2].update(at="2023-01-01T00:00:00Z"), "has no value at"),
    (lambda d: d["histories"][0]["questions"][0].update(kind="past"), "not a question kind"),
    (lambda d: d["histories"][0]["questions"][0].update(at="2024-01-01T00:00:00Z"), "only an as-of question"),
    (lambda d: d["histories"][0]["events"][1].update(id="w1"), "duplicate id 'w1'"),
    (lambda d: d["histories"].append(copy.deepcopy(d["histories"][0])), "duplicate id"),
    (lambda d: d["histories"][0]["events"].clear(), "events[0]"),
])
def test_a_bad_history_is_one_line_naming_the_place_and_the_fix(change, expected):
    doc = copy.deepcopy(DOC)
    change(doc)
    with pytest.raises(BenchError) as err:
        parse_histories(doc, "mine.json")
    message = str(err.value)
    assert message.startswith("mine.json") and "\n" not in message
    if expected != "events[0]":
        assert expected in message, message


def _event(draw_id: int, fact: str, value: str, day: int) -> dict:
    return {"id": f"w{draw_id}", "time": f"2024-01-{day:02d}T00:00:00Z", "fact": fact, "value": value,
            "text": f"{fact} is {value}"}


@st.composite
def history_docs(draw) -> dict:
    """A valid fact-history document: a few facts written, changed and forgotten, and questions of each kind."""
    histories = []
    n = 0
    for g in range(draw(st.integers(1, 2))):
        events, questions, day = [], [], 1
        for fact in ("city", "car")[:draw(st.integers(1, 2))]:
            for value in draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3)):
                events.append(_event(n, fact, value, day))
                n, day = n + 1, day + 1
            if draw(st.booleans()):
                events.append({"forget": fact, "time": f"2024-01-{day:02d}T00:00:00Z"})
                day += 1
                questions.append({"id": f"q{n}", "kind": "forgotten", "fact": fact, "query": f"{fact}?"})
            else:
                questions.append({"id": f"q{n}", "kind": "current", "fact": fact, "query": f"{fact} now?"})
                questions.append({"id": f"q{n}b", "kind": "as-of", "fact": fact, "query": f"{fact} then?",
                                  "at": "2024-01-01T12:00:00Z"})
            n += 1
        histories.append({"group": f"g{g}", "events": events, "questions": questions})
    return {"name": "fuzz", "histories": histories}


FAST = settings(max_examples=60, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FAST
@given(data=st.data())
def test_fuzz_a_fact_history_file_loads_and_replays_or_is_one_line(data, tmp_path_factory):
    """Any mutated file: a Dataset (then replayed through memini-keyword and recent-k, scored) or one BenchError
    line; nothing else raised, no hang."""
    raw = data.draw(serialized(data.draw(mutated(history_docs()))))
    path = tmp_path_factory.mktemp("fuzz") / "histories.json"
    path.write_bytes(raw)
    with time_limit(300):
        try:
            ds = load_corrections(str(path))
        except BenchError as exc:
            assert str(exc) and "\n" not in str(exc)
            return
        replay_scored(ds)
