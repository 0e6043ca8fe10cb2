"""Stale-vs-fresh harm (memini ``bench/contradiction_test.go → TestContradictionStaleVsFresh``, rebuilt on our
hybrid): an entrenched old fact against a fresh update that contradicts it, with and without invalidating the
stale fact.

Corpus, one group, per topic of ``data/contradiction-quads.json``'s ``stale_topics`` (T0 = 1.7e9 s):

- the old fact, semantic, dated T0 - 30 d;
- three episodic restatements of it ("Reminder from the weekly sync: <old>", ...), dated T0 - 28, 26, 24 d;
- the update, semantic, dated T0 (never recalled before the measurement);
- 10 episodic chatter lines about the subject, dated T0.

Entrenchment: memini reinforces through its real write and recall paths; we replay the recall part. On a store
holding only what existed then (old facts and restatements), each topic's query ("Catch me up on <subject>: what
is the current state?") is recalled at T0 - 20 d and T0 - 15 d (k 5, reserve 2, synchronous reinforcement); the
access counts this leaves are copied onto the full store. memini's corroboration also raised the old fact's
confidence; ours keeps confidence unset (1), so our old facts are entrenched by use only.

Measurement at now = T0, k 3 and 5, memini's hybrid (alpha 0.5, pool 50, semantic reserve 2, no reinforcement
during the measurement, so every condition sees the same counts). Per topic: the fresh update's rank and the
stale fact's rank in the window; *stale above fresh* = the stale fact is in the window and the fresh one is not,
or ranks lower. Conditions:

- baseline: no action;
- confidence x 0.5 / x 0.25: the stale fact's confidence set to that factor (memini's candidate downranks);
- valid_to (detector): the stale facts whose update the detector (``contradict.classify(update, old)``) calls an
  update are invalidated: ``ValidToBackend`` drops them from both legs before fusion, as memini's store filter
  drops a row whose ``valid_to`` has passed;
- valid_to (all): every stale fact invalidated (the ceiling).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta

import numpy as np

from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.studies.contradict import UPDATE, classify
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import HybridSystem, MeminiBackend

T0 = datetime.fromtimestamp(1_700_000_000, UTC)
DAY = timedelta(days=1)
GROUP = "stale-eval"
RESTATE_PREFIXES = ("Reminder from the weekly sync: ", "Raised again in planning, still holds: ",
                    "Confirmed while onboarding a new teammate: ")
ENTRENCH_DAYS = (-20, -15)
KS = (3, 5)
RESERVE = 2


@dataclass(frozen=True, slots=True)
class Topic:
    key: str
    subject: str
    old: str
    update: str


def query(subject: str) -> str:
    return f"Catch me up on {subject}: what is the current state?"


def chatter(t: Topic, j: int) -> str:
    return (f"During standup {j} we went back and forth on {t.subject}; opinions on {t.subject} still differ and "
            "nobody wrote anything down.")


def old_items(topics: Sequence[Topic]) -> list[Item]:
    """What the store holds before the updates: the old facts and their restatements."""
    out = [Item(f"{t.key}-old", t.old, GROUP, time=T0 - 30 * DAY) for t in topics]
    out += [Item(f"{t.key}-restate-{r}", prefix + t.old, GROUP, time=T0 + (-28 + 2 * r) * DAY, tier="episodic")
            for r, prefix in enumerate(RESTATE_PREFIXES) for t in topics]
    return out


def new_items(topics: Sequence[Topic]) -> list[Item]:
    out = [Item(f"{t.key}-new", t.update, GROUP, time=T0) for t in topics]
    out += [Item(f"{t.key}-ep-{j}", chatter(t, j), GROUP, time=T0, tier="episodic") for t in topics for j in range(10)]
    return out


class ValidToBackend(MeminiBackend):
    """A memini store whose legs skip invalidated items (``valid_to`` passed): each leg asks for ``k`` plus the
    number of invalidated items, drops them, and keeps the first ``k``: the same rows memini's store filter
    leaves, so fusion normalizes over the valid candidates only."""

    def __init__(self, encoder: TextEncoder | None, invalid: set[str], keyword_backend: str = "numpy") -> None:
        super().__init__(encoder, keyword_backend)
        self.invalid = invalid
        self._invalid_idx = np.zeros(0, dtype=np.int64)

    def ingest(self, items: Sequence[Item]) -> None:
        super().ingest(items)
        self._invalid_idx = np.array([i for i, it in enumerate(self.items) if it.id in self.invalid], dtype=np.int64)

    def _filtered(self, leg, group: str, query_text: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        ids, scores = leg(group, query_text, k + len(self._invalid_idx))
        keep = ~np.isin(ids, self._invalid_idx)
        return ids[keep][:k], scores[keep][:k]

    def vector_leg(self, group: str, query_text: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._filtered(super().vector_leg, group, query_text, k)

    def keyword_leg(self, group: str, query_text: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._filtered(super().keyword_leg, group, query_text, k)


def entrenched_access(encoder: TextEncoder, topics: Sequence[Topic]) -> dict[str, int]:
    """Access counts after the entrenching recalls on the then-store (module docstring)."""
    backend = MeminiBackend(encoder)
    system = HybridSystem(backend, HybridConfig(semantic_reserve=RESERVE, reinforce=True))
    system.ingest(old_items(topics))
    for day in ENTRENCH_DAYS:
        for t in topics:
            system.recall(GROUP, query(t.subject), 5, now=T0 + day * DAY)
    return {it.id: int(n) for it, n in zip(backend.items, backend.access.tolist(), strict=True) if n}


@dataclass(frozen=True, slots=True)
class Measure:
    condition: str
    k: int
    fresh_in_window: int
    stale_above_fresh: int
    both_in_window: int
    fresh_mean_rank: float
    topics: int


def measure(encoder: TextEncoder, topics: Sequence[Topic], access: dict[str, int], condition: str,
            confidence: float | None = None, invalid: set[str] | None = None) -> list[Measure]:
    items = old_items(topics) + new_items(topics)
    if confidence is not None:
        items = [replace(it, confidence=confidence) if it.id.endswith("-old") else it for it in items]
    backend = ValidToBackend(encoder, invalid or set())
    system = HybridSystem(backend, HybridConfig(semantic_reserve=RESERVE))
    system.ingest(items)
    backend.access[:] = [access.get(it.id, 0) for it in backend.items]
    out = []
    for k in KS:
        fresh = stale = both = 0
        ranks = []
        for t in topics:
            ids = [h.ids[0] for h in system.recall(GROUP, query(t.subject), k, now=T0)]
            old_rank = ids.index(f"{t.key}-old") + 1 if f"{t.key}-old" in ids else 0
            new_rank = ids.index(f"{t.key}-new") + 1 if f"{t.key}-new" in ids else 0
            fresh += new_rank > 0
            if new_rank:
                ranks.append(new_rank)
            stale += old_rank > 0 and (new_rank == 0 or old_rank < new_rank)
            both += old_rank > 0 and new_rank > 0
        out.append(Measure(condition, k, fresh, stale, both, sum(ranks) / len(ranks) if ranks else 0.0, len(topics)))
    return out


def study(encoder: TextEncoder, topics: Sequence[Topic]) -> dict:
    """Every condition at k 3 and 5, with the entrenchment achieved and the detector's verdicts."""
    access = entrenched_access(encoder, topics)
    detected = {f"{t.key}-old" for t in topics if classify(t.update, t.old).label == UPDATE}
    rows = measure(encoder, topics, access, "baseline")
    rows += measure(encoder, topics, access, "confidence x0.5", confidence=0.5)
    rows += measure(encoder, topics, access, "confidence x0.25", confidence=0.25)
    rows += measure(encoder, topics, access, "valid_to (detector)", invalid=detected)
    rows += measure(encoder, topics, access, "valid_to (all)", invalid={f"{t.key}-old" for t in topics})
    old_access = [access.get(f"{t.key}-old", 0) for t in topics]
    return {"topics": len(topics), "detected": len(detected), "old_fact_mean_access": sum(old_access) / len(topics),
            "rows": [asdict(r) for r in rows]}
