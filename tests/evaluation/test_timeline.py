"""Writes over time through the harness (evaluation.timeline, the corrections scores, -protocol time-ordered): a
store that deletes never resurrects a forgotten write and one that cannot delete does, counted as not honoured; a
correction without the update hook is stored beside the old value; an item from after the question's time is a
leak, refused or counted like a group leak; the time-ordered cuts are where the data puts them (hand-worked)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest
from cli_run import run_cli

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Dataset, Item, Question
from memini_bench.core.hooks import PluginError
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.errors import BenchError
from memini_bench.evaluation import corrections as scoring
from memini_bench.evaluation.hits import RunGuardOptions
from memini_bench.evaluation.timeline import Ask, check_incremental, run_guarded
from memini_bench.loaders.corrections import parse_histories, timeline
from memini_bench.modes.time_ordered import cuts, steps_of
from memini_bench.systems.floors import RecentK
from memini_bench.systems.memini import memini_systems

DOC = {"name": "t", "histories": [{"group": "g", "events": [
    {"id": "w1", "time": "2024-01-01T00:00:00Z", "fact": "city", "value": "Lisbon", "text": "I live in Lisbon."},
    {"id": "n1", "time": "2024-01-02T00:00:00Z", "fact": "car", "value": "Volvo", "text": "I drive a Volvo."},
    {"id": "w2", "time": "2024-03-01T00:00:00Z", "fact": "city", "value": "Osaka", "text": "I live in Osaka now."},
    {"forget": "car", "time": "2024-04-01T00:00:00Z"}],
    "questions": [
        {"id": "q-now", "kind": "current", "fact": "city", "query": "Where do I live?"},
        {"id": "q-car", "kind": "forgotten", "fact": "car", "query": "What car do I drive?"},
        {"id": "q-jan", "kind": "as-of", "fact": "city", "query": "Where did I live?", "at": "2024-02-01T00:00:00Z"}]}]}


def _replay(systems, doc=DOC, guard=None):
    ds = parse_histories(copy.deepcopy(doc), "t.json")
    return run_guarded(systems, ds, [*timeline(ds), Ask(ds.questions, lambda q: 10)], guard)


def _score(replayed, kind: str, family: str) -> float:
    rows = scoring.scores(replayed, 5, 200, 0)
    return next(s.mean for s in rows if s.kind == kind and s.metric.split("@")[0] == family)


def test_a_store_that_deletes_never_resurrects_and_one_that_cannot_does():
    keyword = memini_systems(TextEncoder(HashEmbedder(16)))[2]
    forgets, floor = _replay([keyword, RecentK()])
    assert (forgets.forgets_honoured, forgets.forgets_unhonoured) == (1, 0)
    assert (floor.forgets_honoured, floor.forgets_unhonoured) == (0, 1)
    assert _score(forgets, "forgotten", "resurrection") == 0.0
    assert _score(floor, "forgotten", "resurrection") == 1.0
    # memini's update replaced Lisbon: no stale value left, and nothing to answer "as of February" with
    assert (forgets.updates_native, floor.updates_fallback) == (1, 1)
    assert _score(forgets, "current", "recall_any") == 1.0 and _score(forgets, "current", "stale_above") == 0.0
    assert _score(forgets, "as-of", "recall_any") == 0.0
    # recent-k kept both: the stale Lisbon is older, so Osaka leads; as of February it leaves Osaka out
    assert _score(floor, "current", "stale_above") == 0.0 and _score(floor, "as-of", "recall_any") == 1.0


class Sticky:
    """Keeps its first value and never lets go: it returns the superseded Lisbon first (a stale value on top)."""

    name = "sticky"
    incremental_ingest = True

    def __init__(self) -> None:
        self.items: list[Item] = []

    def ingest(self, items):
        self.items += items

    def recall(self, group, query, k, *, now=None, context=None):
        return [Hit((it.id,), 1.0, it.content) for it in self.items if it.group == group][:k]


def test_a_stale_value_above_the_current_one_is_counted():
    (sticky,) = _replay([Sticky()])
    assert _score(sticky, "current", "stale_above") == 1.0
    assert _score(sticky, "current", "recall_any") == 1.0


def test_a_system_that_replaces_on_each_ingest_is_refused_before_any_work():
    class Once:
        name = "once"

        def ingest(self, items): ...

        def recall(self, group, query, k, *, now=None, context=None):
            return []

    with pytest.raises(BenchError, match="once does not declare incremental_ingest"):
        check_incremental([Once()], "-suite corrections")


T = [datetime(2024, 1, d, tzinfo=UTC) for d in range(1, 6)]
ITEMS = (Item("a1", "x", "A", T[0]), Item("a2", "y", "A", T[0]), Item("a3", "z", "A", T[2]), Item("a4", "w", "A", T[3]),
         Item("b1", "x", "B", T[1]), Item("b2", "y", "B", T[4]))
QS = (Question("qa", "x?", ("a1",), "A", now=T[3]), Question("qb", "y?", ("a3",), "A", now=T[3]),
      Question("qc", "z?", ("b1",), "B", now=T[4]))


def test_locomo_cuts_after_the_session_of_the_latest_evidence_and_longmemeval_at_its_date():
    ds = Dataset("d", ITEMS, QS)
    cut, when, _ = cuts(ds, "locomo")
    assert cut == {"qa": 2, "qb": 3, "qc": 1}  # a1's session is a1, a2 (one time)
    assert when == {"qa": T[0], "qb": T[2], "qc": T[1]}
    cut, when, _ = cuts(ds, "longmemeval")
    assert cut == {"qa": 4, "qb": 4, "qc": 2} and when["qa"] == T[3]
    steps, asked = steps_of(ds, "locomo", 5)
    order = [("W", [i.id for i in s.items]) if hasattr(s, "items") else ("Q", [q.id for q in s.questions])
             for s in steps]
    assert order == [("W", ["a1", "a2"]), ("Q", ["qa"]), ("W", ["b1"]), ("Q", ["qc"]), ("W", ["a3"]), ("Q", ["qb"]),
                     ("W", ["a4", "b2"])]


class Peeker:
    """Knows the whole data set up front and returns its group's latest item: a leak from the future."""

    name = "peeker"
    incremental_ingest = True

    def ingest(self, items): ...

    def recall(self, group, query, k, *, now=None, context=None):
        latest = [it for it in ITEMS if it.group == group][-1]
        return [Hit((latest.id,), 1.0, latest.content)]


def test_an_item_from_after_the_question_is_a_leak_refused_or_counted():
    ds = Dataset("d", ITEMS, QS)
    steps, _ = steps_of(ds, "locomo", 5)
    with pytest.raises(PluginError, match="written after the question's time"):
        run_guarded([Peeker()], ds, steps, None)
    (counted,) = run_guarded([Peeker()], ds, steps, RunGuardOptions(leaks="count"))
    assert counted.leaked == 3 and all(not r.ranked_ids for r in counted.runs)


def test_the_cli_prints_every_kind_per_system(capsys):
    code, out, err = run_cli(["run", "-suite", "corrections", "-systems", "keyword,recent-k", "-k", "5", "-limit",
                              "40", "-no-write", "-quiet", "-resamples", "200"], capsys)
    assert code == 0, err
    assert "current recall_any@5" in out and "forgotten resurrection" in out and "as-of recall_any@5" in out
    assert "paired" in out
    board = out.split("\n\n## ")[0]  # the scores table, before the paired tests
    rows = {line.split("|")[1].strip(): line for line in board.splitlines() if line.startswith("| memini-keyword")
            or line.startswith("| recent-k")}
    assert rows["memini-keyword"].split("|")[4].strip().startswith("0.0%")
    assert rows["recent-k"].split("|")[4].strip().startswith("100.0%")


@pytest.mark.parametrize("args", [["-suite", "sample", "-protocol", "time-ordered"],
                                  ["-suite", "corrections", "-poison", "3"]])
def test_writes_over_time_refuse_what_they_do_not_use(args, capsys):
    code, _, err = run_cli(["run", *args, "-systems", "keyword", "-no-write", "-quiet"], capsys)
    assert code == 2 and ("-protocol" in err or "-poison" in err)
