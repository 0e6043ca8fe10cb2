"""A small fixture with known answers for the peer store adapters' tests (LanceDB, Qdrant, Chroma, mem0).

Three groups. Every text has a hand-set 4-d unit vector (``peers_fixture.TableEmbedder``), so the vector answers
are known exactly: ``exact_ranking`` (numpy, L2 inside the group; on unit vectors the cosine order) is the oracle.
The texts are chosen for the full-text answers: "running cats" stems to run + cat (matching ``g1/run`` on both
terms and ``g1/cold`` on "cat") but, unstemmed, matches only ``g1/run`` ("cats"). Group ``g2`` holds the best
match of every g1 query (``g2/cats`` has the query's very vector and every query word), so a leak across groups
shows. ``o'brien`` has a quote in its name. ``g1/talk`` has a negative cosine to ``CAT_QUERY`` (mem0 never
returns it).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from cli_opts import cli_options
from netguard import NetGuard
from peers_fixture import TableEmbedder

from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


ITEMS = (
    Item("g1/run", "Caroline runs a support group for cats.", group="g1"),
    Item("g1/paint", "Melanie painted a sunrise over the lake.", group="g1"),
    Item("g1/cold", "The weather was cold and the cat slept.", group="g1"),
    Item("g1/talk", "They talked about nothing at all.", group="g1"),
    Item("g2/cats", "Running cats: the cats support group of running cats.", group="g2"),
    Item("g2/sun", "Another sunrise painting by the lake.", group="g2"),
    Item("obrien/cat", "A cat lives in Dublin.", group="o'brien"),
)
CAT_QUERY = "Who runs the cat support group?"
SUN_QUERY = "Who painted the sunrise?"
TEXT_QUERY = "running cats"
STOPWORD_QUERY = "the and of"
PADDED_QUERY = "  What did Melanie paint?  "  # its stripped form has no vector in the table
VECTORS: dict[str, np.ndarray] = {
    ITEMS[0].content: unit(0.9, 0.3, 0.1, 0.0),
    ITEMS[1].content: unit(0.1, 0.9, 0.3, 0.2),
    ITEMS[2].content: unit(0.5, 0.45, 0.55, 0.5),
    ITEMS[3].content: unit(-0.4, 0.2, 0.8, 0.3),
    ITEMS[4].content: unit(1.0, 0.0, 0.0, 0.0),
    ITEMS[5].content: unit(0.0, 1.0, 0.0, 0.0),
    ITEMS[6].content: unit(0.95, 0.1, 0.1, 0.1),
    CAT_QUERY: unit(1.0, 0.0, 0.0, 0.0),
    SUN_QUERY: unit(0.0, 1.0, 0.0, 0.0),
    TEXT_QUERY: unit(0.8, 0.1, 0.5, 0.1),
    STOPWORD_QUERY: unit(0.2, 0.3, 0.4, 0.5),
    PADDED_QUERY: unit(0.05, 1.0, 0.1, 0.0),
}
QUERIES = (CAT_QUERY, SUN_QUERY, TEXT_QUERY, STOPWORD_QUERY)
GROUPS = ("g1", "g2", "o'brien")


class LenientTableEmbedder(TableEmbedder):
    """``peers_fixture.TableEmbedder`` that gives a text outside the table a deterministic vector from its hash and
    records it in ``unknown`` (mem0's LLM extraction embeds texts of its own making)."""

    def __init__(self, table: Mapping[str, Sequence[float]]) -> None:
        super().__init__(table)
        self.unknown: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        for text in texts:
            if text not in self.table:
                self.unknown.append(text)
                seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
                self.table[text] = unit(*np.random.default_rng(seed).normal(size=self.dims))
        return super().encode(texts)


def fixture_context(table: Mapping[str, Sequence[float]] | None = None, *,
                    lenient: bool = False) -> tuple[SystemContext, TableEmbedder]:
    """A run context whose shared encoder serves ``table`` (default ``VECTORS``), without a disk cache; a text
    outside the table is a KeyError unless ``lenient``."""
    embedder = (LenientTableEmbedder if lenient else TableEmbedder)(dict(VECTORS if table is None else table))
    return cli_options().context(lambda: TextEncoder(embedder)), embedder


def members(group: str) -> list[Item]:
    return [it for it in ITEMS if it.group == group]


def exact_ranking(group: str, query: str) -> list[str]:
    """The oracle: the group's item ids by L2 distance to the query's vector, nearest first."""
    group_items = members(group)
    distances = [float(np.linalg.norm(VECTORS[it.content] - VECTORS[query])) for it in group_items]
    return [group_items[i].id for i in np.argsort(distances, kind="stable")]


def cosine(item_id: str, query: str) -> float:
    item = next(it for it in ITEMS if it.id == item_id)
    return float(VECTORS[item.content] @ VECTORS[query])


@dataclass
class Offline:
    """What a peer test module runs under: the socket guard and an empty stand-in home folder."""

    guard: NetGuard
    home: Path
    systems: dict = field(default_factory=dict)

    def home_entries(self) -> list[str]:
        return sorted(str(p.relative_to(self.home)) for p in self.home.rglob("*"))


@contextmanager
def offline(home: Path) -> Iterator[Offline]:
    """Run the block under ``NetGuard`` with ``HOME`` pointing at the empty folder ``home``."""
    with NetGuard() as guard, pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        yield Offline(guard, home)
    shutil.rmtree(home, ignore_errors=True)


@contextmanager
def ingested(home: Path, names: Sequence[str]) -> Iterator[Offline]:
    """The registered systems ``names`` built on the fixture's context and ingested once, under ``offline(home)``
    (``env.systems`` by name); every one is closed afterwards."""
    from memini_bench.core.registry import SYSTEMS

    with offline(home) as env:
        ctx, _ = fixture_context()
        env.systems = {name: SYSTEMS.get(name)(ctx) for name in names}
        try:
            for system in env.systems.values():
                system.ingest(ITEMS)
            yield env
        finally:
            for system in env.systems.values():
                system.close()


def ids_of(hits) -> list[str]:
    """The single item id of each hit (adapters that store one memory per item)."""
    assert all(len(h.ids) == 1 for h in hits)
    return [h.ids[0] for h in hits]
