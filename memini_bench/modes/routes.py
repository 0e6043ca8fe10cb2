"""The flat, Go-style form's one mapping table: which verb ``memini-bench -suite ... [FLAGS]`` (no verb) runs.

``FLAT_ROUTES`` is read top to bottom; the first row whose flags are given (with a value that asks for the mode:
``-qa``, a non-empty ``-sweep SPEC``) names the verb, and the last row, ``run``, takes everything else. The same
table checks a verb typed out: ``memini-bench study gates -vec-gate 0.3 -rerank-url URL`` is refused, since those
flags are the rerank tier's (row 5 before row 6), as they are in the flat form. ``memini-bench --help`` prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memini_bench.errors import BenchError
from memini_bench.modes.specs import (
    EntityBridgeOptions,
    GateOptions,
    ListOptions,
    MultihopOptions,
    QAOptions,
    RerankOptions,
    RerankTierOptions,
    ScoreOptions,
    SignificanceOptions,
    SweepOptions,
    VetoOptions,
    cross_encoder_configured,
)


@dataclass(frozen=True)
class Route:
    verb: str
    flags: str                        # the flags, as --help shows them
    picks: Callable[[object], bool]   # RunOptions -> whether these flags are given


def _mode_value(cls: type, name: str) -> Callable[[object], bool]:
    def picks(opts) -> bool:
        return bool(getattr(opts.mode(cls), name))

    return picks


def _tier(opts) -> bool:
    return bool(opts.mode(RerankTierOptions).llm_rerank or cross_encoder_configured(opts))


def _vetobench(opts) -> bool:
    return opts.suite == "vetobench" or _mode_value(VetoOptions, "veto_summary")(opts)


FLAT_ROUTES: tuple[Route, ...] = (
    Route("list", "-list", _mode_value(ListOptions, "list")),
    Route("compare", "-compare FILES", _mode_value(SignificanceOptions, "compare")),
    Route("score", "-run FILE", _mode_value(ScoreOptions, "run")),
    Route("study rerank", "-rerank", _mode_value(RerankOptions, "rerank")),
    Route("study gates", "-rerank-gate", _mode_value(GateOptions, "rerank_gate")),
    Route("study rerank-tier", "-rerank-url, -rerank-model or -llm-rerank", _tier),
    Route("study gates", "-vec-gate", _mode_value(GateOptions, "vec_gate")),
    Route("vetobench", "-suite vetobench or -veto-summary", _vetobench),
    Route("qa", "-qa", _mode_value(QAOptions, "qa")),
    Route("sweep", "-sweep SPEC", _mode_value(SweepOptions, "sweep")),
    Route("study multihop", "-multihop", _mode_value(MultihopOptions, "multihop")),
    Route("study entity-bridge", "-entity-bridge", _mode_value(EntityBridgeOptions, "entity_bridge")),
    Route("run", "none of the above", lambda opts: True),
)


def route(opts) -> str:
    """The verb the flat form runs for ``opts``: the first row of ``FLAT_ROUTES`` that picks it."""
    return next(r.verb for r in FLAT_ROUTES if r.picks(opts))


def check_verb(verb: str, opts) -> None:
    """A verb typed out runs only with the flags that route to it (see the module docstring)."""
    routed = route(opts)
    if routed == verb:
        return
    needs = " or ".join(r.flags for r in FLAT_ROUTES if r.verb == verb)
    if routed == "run":
        raise BenchError(f"{verb}: give {needs} (see memini-bench {verb} --help)")
    raise BenchError(f"{verb}: these flags are memini-bench {routed}'s; run that verb, or drop the flags it takes")
