"""The scoring protocols each suite declares, by name, and the caption a table states them in.

A protocol is what a number is "out of": which questions count and what a hit is. Published figures differ on it
(LongMemEval over 500 questions, or the 470 answerable ones, or turn-level retrieval scored by session), so every
table states it and every results file records it (``config["protocol"]``). It follows from the suite and its
loader settings alone, which the results identity already holds, so it adds nothing to the identity.

- LongMemEval: ``all-500`` (every question, the abstention ones included: ``-abstention include``),
  ``answerable-470`` (the abstention questions left out: ``-abstention exclude``, the default), ``official``
  (its own retrieval code: user-turn items, gold the ``has_answer`` turns, session scores from the turn ranking,
  abstention left out: ``-granularity turn``).
- LoCoMo: ``turn`` (one item per dialogue turn; ``-unit observation`` and ``summary`` name their unit instead),
  ``session`` (``-suite locomo-sessions``); both without the evidence-less questions, which the loaders skip (they
  are on the known-bad list).

``memini-bench run -protocol time-ordered`` (LoCoMo, LongMemEval; ``modes.time_ordered``) writes the items in time
order and asks each question at its own time; its results record the suite's protocol with ``+time-ordered``.

``depth_notes`` warns when a K reaches the number of candidates of a group: a LoCoMo conversation has 19 to 32
sessions, so session-level recall@50 is 100% by construction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memini_bench.core.dataset import Dataset

#: Every declared protocol, per suite, with one line saying what it is.
PROTOCOLS: dict[str, dict[str, str]] = {
    "longmemeval": {
        "all-500": "every question, abstention ones included (-abstention include)",
        "answerable-470": "abstention questions left out (-abstention exclude)",
        "official": "user-turn items, gold the has_answer turns, session scores from the turn ranking "
                    "(-granularity turn)",
    },
    "locomo": {
        "turn": "one item per dialogue turn, evidence-less questions skipped",
        "observation": "one item per observation (-unit observation), evidence-less questions skipped",
        "summary": "one item per session summary (-unit summary), evidence-less questions skipped",
    },
    "locomo-sessions": {"session": "one item per session, evidence-less questions skipped"},
}


def protocol_of(suite: str, options: object) -> str:
    """The protocol a suite's load settings (``loaders.LoadOptions``) select; "" for a suite with none."""
    if suite == "longmemeval":
        if getattr(options, "granularity", "session") == "turn":
            return "official"
        return "all-500" if getattr(options, "abstention", "exclude") == "include" else "answerable-470"
    if suite == "locomo":
        return getattr(options, "unit", "turn")
    if suite == "locomo-sessions":
        return "session"
    return ""


def depth_notes(ds: Dataset, ks: Sequence[int]) -> list[str]:
    """A note per K that is at least the number of items of some question's group (recall there is trivially
    full)."""
    sizes = Counter(item.group for item in ds.items)
    groups = {q.group for q in ds.questions}
    if not groups:
        return []
    smallest = min(sizes.get(g, 0) for g in groups)
    return [f"K={k} is at least the {smallest} items of the smallest group: recall@{k} is trivially 100% there"
            for k in sorted(ks) if k >= smallest]


def caption(ds: Dataset, suite: str, options: object, known_bad: str = "") -> str:
    """``N questions; protocol P; <known-bad status>`` for a table's header."""
    parts = [f"{len(ds.questions)} questions"]
    protocol = protocol_of(suite, options)
    if protocol:
        parts.append(f"protocol {protocol}")
    if known_bad:
        parts.append(known_bad)
    return "; ".join(parts)
