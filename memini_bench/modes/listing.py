"""``list [TOPIC...]`` (flat form ``-list``): every registered system, suite, embedder and executor (built-ins and
installed plugins), one line each; a TOPIC prints one section. ``TOPICS`` maps each topic to the function that
writes its lines, so a new topic (``metrics``) is one entry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memini_bench.core.settings import setting
from memini_bench.errors import BenchError
from memini_bench.modes.base import Mode, Outcome, Plan
from memini_bench.modes.options import RunOptions

NAME = "-list"
SUMMARY = "every registered system, suite, embedder and executor"


@dataclass(frozen=True)
class ListOptions:
    list: bool = setting("list", False, "Print every registered system, suite and embedder (plugins included), "
                         "one line each, and exit.")


OPTIONS = ListOptions
USES: tuple = ()


def _registry_lines(name: str) -> Callable[[], list[str]]:
    def lines() -> list[str]:
        from memini_bench.core import registry

        return getattr(registry, name).listing()

    return lines


#: ``list TOPIC``: each topic's lines (``-list`` and ``list`` print every topic, in this order).
TOPICS: dict[str, Callable[[], list[str]]] = {
    "systems": _registry_lines("SYSTEMS"), "suites": _registry_lines("SUITES"),
    "embedders": _registry_lines("EMBEDDERS"), "executors": _registry_lines("EXECUTORS"),
}


def listing(topics: Sequence[str] = ()) -> str:
    """The sections of ``topics`` (all when empty), each its title line then one line per entry."""
    for topic in topics:
        if topic not in TOPICS:
            raise BenchError(f"list {topic}: no such topic; use one of {', '.join(TOPICS)}")
    out: list[str] = []
    for topic in topics or TOPICS:
        out += [f"{topic}:", *TOPICS[topic]()]
    return "\n".join(out) + "\n"


class ListMode(Mode):
    verb = "list"
    implied = {"list": True}
    unused = frozenset({"suite", "data"})

    def __init__(self, topics: Sequence[str] = ()) -> None:
        self.topics = tuple(topics)

    def plan(self, opts: RunOptions) -> Plan:
        listing_topics = self.topics
        for topic in listing_topics:
            if topic not in TOPICS:
                raise BenchError(f"list {topic}: no such topic; use one of {', '.join(TOPICS)}")
        return Plan(self.verb, opts, state={"topics": listing_topics}, reads_data=False,
                    notes=[f"topics: {', '.join(listing_topics or TOPICS)}"])

    def run(self, plan: Plan) -> Outcome:
        return Outcome(plan, 0, {"markdown": listing(plan.state["topics"])})
