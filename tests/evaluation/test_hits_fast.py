"""``check_hits``' one-pass path for plain hit lists against its rule-by-rule check (``_check_hits``): on random
lists mixing plain hits with every kind of hostile one, both give the same ``Checked`` or the same one-line error."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from memini_bench.core.contract import Hit
from memini_bench.core.hooks import PluginError
from memini_bench.evaluation import hits as hits_module
from memini_bench.evaluation.hits import _check_hits, check_hits
from memini_bench.retrieval import kernels

GROUP_OF = {"a/1": "a", "a/2": "a", "a/3": "a", "b/1": "b"}


class StrId(str):
    pass


class SubHit(Hit):
    pass


def _plain(rng: random.Random) -> Hit:
    return Hit((rng.choice(["a/1", "a/2", "a/3"]),), rng.choice([0.5, 1.0, -2.0, 0.0, -0.0, 1e300]),
               rng.choice(["x", "y", ""]))


def _hostile(rng: random.Random) -> object:
    return rng.choice([
        Hit(("b/1",), 1.0, "x"), Hit(("zz",), 1.0, "x"), Hit(("a/1", "a/2"), 1.0, "x"), Hit(("a/1", "a/1"), 1.0, "x"),
        Hit((), 1.0, "x"), Hit(["a/1"], 1.0, "x"), Hit("a/1", 1.0, "x"), Hit((StrId("a/1"),), 1.0, "x"),
        Hit((1,), 1.0, "x"), Hit(("a/1",), math.nan, "x"), Hit(("a/1",), math.inf, "x"),
        Hit(("a/1",), -math.inf, "x"), Hit(("a/1",), True, "x"), Hit(("a/1",), 3, "x"),
        Hit(("a/1",), np.float64(0.25), "x"), Hit(("a/1",), np.float32(np.nan), "x"), Hit(("a/1",), "1", "x"),
        Hit(("a/1",), 1.0, None), Hit(("a/1",), 1.0, b"x"), Hit(("a/1",), 1.0, StrId("x")),
        SubHit(("a/1",), 1.0, "x"), ("a/1", 1.0, "x"), None, Hit(("a/1", "b/1"), 1.0, "x"),
    ])


def _outcome(fn, *args):
    try:
        return fn(*args)
    except PluginError as exc:
        return ("error", str(exc))


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("leaks", ["error", "count"])
def test_fast_path_equals_the_rules(leaks, compiled, monkeypatch):
    if compiled and kernels.KERNELS is None:
        pytest.skip("the C kernels are not built here")
    if not compiled:
        monkeypatch.setattr(kernels, "KERNELS", None)
    rng = random.Random(3)
    fast_taken = 0
    for case in range(4000):
        n = rng.randint(0, 6)
        hits = [_plain(rng) if rng.random() < 0.85 else _hostile(rng) for _ in range(n)]
        depth = rng.choice([n, n + 1, max(n - 1, 0), 10])
        container = rng.choice([list, list, list, tuple])
        value = container(hits)
        want = _outcome(_check_hits, "s", "question 'q'", "a", value, depth, GROUP_OF, leaks, "the largest K", False,
                           {})
        got = _outcome(check_hits, "s", "question 'q'", "a", value, depth, GROUP_OF, leaks)
        assert got == want and type(got) is type(want), (case, value)
        fast_taken += hits_module._plain_hits(hits, "a", GROUP_OF) is not None if container is list else 0
    assert fast_taken > 1000  # the one-pass path decided most plain lists


def test_non_lists_go_to_the_rules():
    for value in (None, {"a": 1}, iter([]), "a/1"):
        with pytest.raises(PluginError):
            check_hits("s", "question 'q'", "a", value, 10, GROUP_OF)


def test_long_lists_and_hits_with_an_empty_slot_give_what_the_rules_give():
    """Past the cached ``kept`` tuples (128 hits) the compiled path makes its own; a ``Hit`` whose slot was never
    set (made with ``object.__new__``) is left to the rules, which refuse it in one line."""
    group_of = {f"a/{i}": "a" for i in range(300)}
    hits = [Hit((f"a/{i}",), float(-i), f"text {i}") for i in range(200)]
    want = _check_hits("s", "question 'q'", "a", hits, 200, group_of, "error", "the largest K", False, {})
    got = check_hits("s", "question 'q'", "a", hits, 200, group_of)
    assert got == want and type(got) is type(want) and got.kept == tuple(range(200))
    hollow = object.__new__(Hit)
    with pytest.raises(PluginError):
        check_hits("s", "question 'q'", "a", [hits[0], hollow], 10, group_of)


class _BadHash(str):
    def __hash__(self):
        raise RuntimeError("no hash")


class _BadRepr(float):
    def __repr__(self):
        raise RuntimeError("no repr")


class _RaisingHit(Hit):
    @property
    def ids(self):
        raise RuntimeError("no ids")


@pytest.mark.parametrize("hit", [Hit((_BadHash("a/1"),), 1.0, "x"), Hit(("a/1",), 1.0, _BadHash("x")),
                                 Hit(("a/1",), _BadRepr("nan"), "x"), object.__new__(_RaisingHit)],
                         ids=["id-hash-raises", "content-hash-raises", "score-repr-raises", "field-raises"])
def test_a_hostile_hit_is_one_line_never_a_traceback(hit):
    with pytest.raises(PluginError, match=r"^system s: recall for question 'q' .*") as caught:
        check_hits("s", "question 'q'", "a", [hit], 10, GROUP_OF)
    assert "\n" not in str(caught.value)


@pytest.mark.skipif(kernels.KERNELS is None, reason="the C kernels are not built here")
def test_a_plain_lists_checked_record_is_left_out_of_the_cyclic_collector():
    """A run keeps one ``Checked`` per recall: the compiled path leaves it, its tuples and the hits' one-id tuples
    untracked by the cyclic collector (none can be in a cycle), so the collector does not run through them again
    and again as the run grows. The values are those of the rules."""
    import gc

    hits = [Hit((f"a/{i}",), float(i), f"text {i}") for i in range(1, 4)]
    group_of = {f"a/{i}": "a" for i in range(1, 4)}
    got = check_hits("s", "question 'q'", "a", hits, 10, group_of)
    assert got == _check_hits("s", "question 'q'", "a", hits, 10, group_of, "error", "the largest K", False, {})
    assert not any(gc.is_tracked(x) for x in (got, got.ids, got.scores, got.contents, *got.ids))
