"""``list [TOPIC...]`` (flat form ``-list [TOPIC]``): every registered system, suite, embedder, executor and metric
(built-ins and installed plugins), one line each; a TOPIC prints one section (``list metrics``: each metric with its
formula). ``TOPICS`` maps each topic to the function that writes its lines, so a new topic is one entry;
``rows(topic)`` gives the same entries as rows, for other front ends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memini_bench.errors import BenchError
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import ListOptions


def _registry_lines(name: str) -> Callable[[], list[str]]:
    def lines() -> list[str]:
        from memini_bench.core import registry

        return getattr(registry, name).listing()

    return lines


def _metric_lines() -> list[str]:
    from memini_bench.core import metrics

    return metrics.listing_text().splitlines()[1:]


#: ``list TOPIC``: each topic's lines (``-list`` and ``list`` print every topic, in this order).
TOPICS: dict[str, Callable[[], list[str]]] = {
    "systems": _registry_lines("SYSTEMS"), "suites": _registry_lines("SUITES"),
    "embedders": _registry_lines("EMBEDDERS"), "executors": _registry_lines("EXECUTORS"), "metrics": _metric_lines,
}


def _check(topics: Sequence[str]) -> None:
    for topic in topics:
        if topic not in TOPICS:
            raise BenchError(f"list {topic}: no such topic; list one of {', '.join(TOPICS)} "
                             "(or list alone for everything)")


def rows(topic: str) -> list[dict[str, str]]:
    """One topic's entries as rows: a metric's row holds its spelling, parameters, formula, direction, ir_measures
    twin and citation (``core.metrics.listing``); another kind's its name, help, origin, extra and aliases
    (``core.registry.listing_rows``)."""
    from memini_bench.core import metrics, registry

    _check([topic])
    return metrics.listing() if topic == "metrics" else registry.listing_rows(topic)


def listing(topics: Sequence[str] = ()) -> str:
    """The sections of ``topics`` (all when empty), each its title line then one line per entry; the metrics'
    section starts with how a metric name is spelled."""
    from memini_bench.core import metrics

    _check(topics)
    out: list[str] = []
    for topic in topics or TOPICS:
        title = metrics.listing_text().splitlines()[0] if topic == "metrics" else f"{topic}:"
        out += [title, *TOPICS[topic]()]
    return "\n".join(out) + "\n"


@dataclass
class ListState(PlanState):
    """``list``'s plan state: the topics to list (none = every one)."""

    topics: tuple[str, ...] = ()


class ListMode(Mode):
    verb = "list"

    def __init__(self, topics: Sequence[str] = ()) -> None:
        self.topics = tuple(topics)

    def plan(self, opts: RunOptions) -> Plan:
        flat = opts.mode(ListOptions).list
        listing_topics = self.topics or ((flat,) if flat not in ("", "all") else ())
        _check(listing_topics)
        return Plan(self.verb, opts, state=ListState(topics=tuple(listing_topics)), reads_data=False,
                    notes=[f"topics: {', '.join(listing_topics or TOPICS)}"])

    def run(self, plan: Plan) -> Outcome:
        return Outcome(plan, 0, listing(plan.state.topics))
