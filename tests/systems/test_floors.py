"""The floors: ``recent-k`` returns the group's latest items whatever the query, ``random`` draws uniformly with a
seed (its recall on LoCoMo matches the hypergeometric expectation), and both run as rows of a LoCoMo run."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from cli_run import run_cli

from memini_bench.core.dataset import Item
from memini_bench.evaluation.metrics import recall_any
from memini_bench.evaluation.runner import run_all
from memini_bench.systems.floors import RandomK, RecentK

T0 = datetime(2024, 1, 1)


def _items() -> list[Item]:
    # data set order is not time order; one undated item; a second group
    times = [5, 1, 3, None, 2, 4]
    out = [Item(id=f"a{i}", content=f"text {i}", group="a", time=None if t is None else T0 + timedelta(days=t))
           for i, t in enumerate(times)]
    return out + [Item(id="b0", content="other group", group="b", time=T0 + timedelta(days=99))]


def test_recent_k_returns_the_latest_items_whatever_the_query():
    system = RecentK()
    system.ingest(_items())
    # a3 has no time: it takes a2's (day 3) and follows it in data set order
    by_time = ["a0", "a5", "a3", "a2", "a4", "a1"]
    assert [h.ids[0] for h in system.recall("a", "anything", 4)] == by_time[:4]
    assert system.recall("a", "anything", 4) == system.recall("a", "something else entirely", 4)
    before = system.recall("a", "q", 10, now=T0 + timedelta(days=3, hours=1))
    assert [h.ids[0] for h in before] == ["a3", "a2", "a4", "a1"]
    assert [h.ids[0] for h in system.recall("b", "q", 5)] == ["b0"]
    assert [h.score for h in system.recall("a", "q", 3)] == [1.0, 0.5, 1 / 3]


def test_random_is_seeded_per_question_and_stays_in_the_group():
    one, two, other = RandomK(), RandomK(), RandomK(seed=7)
    for s in (one, two, other):
        s.ingest(_items())
    draws = [[h.ids[0] for h in s.recall("a", "q1", 4)] for s in (one, two, other)]
    assert draws[0] == draws[1] and len(set(draws[0])) == 4 and all(i.startswith("a") for i in draws[0])
    assert draws[0] != draws[2] or draws[0] != [h.ids[0] for h in other.recall("a", "q2", 4)]
    assert one.describe()["seed"] == 0 and other.describe()["seed"] == 7
    assert len(one.recall("a", "q", 50)) == 6


def test_random_recall_matches_the_hypergeometric_expectation(locomo):
    """P(recall_any@k) = 1 - C(n - g, k) / C(n, k) for g gold items among the group's n: the measured mean over
    LoCoMo's questions lies within 4 standard errors of the expected mean."""
    sizes: dict[str, int] = {}
    for item in locomo.items:
        sizes[item.group] = sizes.get(item.group, 0) + 1
    present = {(i.id, i.group) for i in locomo.items}
    k = 10
    (result,) = run_all([RandomK()], locomo, k)
    probs, hits = [], []
    for run in result.questions:
        q = run.question
        n, g = sizes[q.group], len({x for x in q.gold if (x, q.group) in present})
        probs.append(1 - math.comb(n - g, k) / math.comb(n, k))
        hits.append(recall_any(run, k))
    expected = sum(probs) / len(probs)
    se = math.sqrt(sum(p * (1 - p) for p in probs)) / len(probs)
    assert abs(sum(hits) / len(hits) - expected) < 4 * se


def test_floor_rows_in_a_locomo_run(locomo_path, capsys):
    code, out, err = run_cli(["-suite", "locomo", "-data", str(locomo_path), "-embedder", "hash", "-k", "5",
                              "-systems", "recent-k,random,hybrid", "-no-write", "-quiet"], capsys)
    assert code == 0, err
    for name in ("recent-k", "random", "memini-hybrid"):
        assert f"| {name} |" in out
