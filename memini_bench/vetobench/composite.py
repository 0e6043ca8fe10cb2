"""VetoBench's five-signal composite scorer (RoBrain's retrieval), as a System: ``veto-composite``.

For a task (the query) with files in scope F at time ``now`` (the suite's ``as_of``), each decision d scores

    0.32 * cos(embed(task), embed(d.decision + " " + d.rationale))       semantic
  + 0.27 * min(1, |{f in F : f in d.files_affected}| / |F|)   (0 if F empty)   file overlap
  + 0.18 * 0.5 ** (clamp(age_days(d.created_at -> now), 0, 3650) / 30)   recency, 30-day half-life
  + 0.13 * d.historical_relevance
  + 0.10 * (1 if d.reviewed_at is set else 0)                           approval

and decisions are ranked by score, descending, ties in corpus order (a stable sort). The default embedder is the
doc's 64-dim hashed bag of tokens (``fnv64``: ``embed.hashing.VetoHashEmbedder``); any ``Embedder`` can replace
it (cosine is computed explicitly, 0 for a zero vector).

The files in scope come with each question's ``context`` (``recall(..., context={"files_in_scope": ...})``):
``veto-composite`` uses them (the agent is editing those files), ``veto-composite-nofiles`` ignores them
(semantic + recency + relevance + approval only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import numpy as np

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import build_embedder
from memini_bench.embed.hashing import VetoHashEmbedder  # noqa: F401  (re-exported: the doc's embedder)
from memini_bench.errors import BenchError
from memini_bench.loaders.vetobench import Decision, decision_of
from memini_bench.systems.context import SystemContext
from memini_bench.vetobench.defaults import COMPOSITE_EMBEDDER, DEFAULT_FILES, VETO_FILES

HALF_LIFE_DAYS = 30.0
MAX_AGE_DAYS = 3650.0
FILES_KNOWN = "veto-composite"
NO_FILES = "veto-composite-nofiles"


def default_encoder() -> TextEncoder:
    """An encoder over the doc's embedder (``fnv64``, no prefixes); the mode builds one per run and shares it."""
    return TextEncoder(build_embedder(COMPOSITE_EMBEDDER))


@dataclass(frozen=True)
class VetoWeights:
    """The published weights of the five signals (they sum to 1)."""

    semantic: float = 0.32
    files: float = 0.27
    recency: float = 0.18
    relevance: float = 0.13
    approval: float = 0.10


def file_overlap(scope: Sequence[str], affected: Iterable[str]) -> float:
    """Share of the files in scope that the decision touched, capped at 1; 0 with no files in scope."""
    if not scope:
        return 0.0
    touched = set(affected)
    return min(1.0, sum(1 for f in scope if f in touched) / len(scope))


def recency(age_days: np.ndarray) -> np.ndarray:
    """``0.5 ** (clamp(age_days, 0, 3650) / 30)``."""
    return 0.5 ** (np.clip(age_days, 0.0, MAX_AGE_DAYS) / HALF_LIFE_DAYS)


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


class VetoCompositeSystem:
    """The five-signal scorer over the ingested decisions (items carrying ``meta["decision"]``)."""

    def __init__(self, encoder: TextEncoder | None = None, *, name: str = FILES_KNOWN, use_files: bool = True,
                 weights: VetoWeights = VetoWeights()) -> None:
        self.name = name
        self.encoder = encoder or default_encoder()
        self.use_files = use_files
        self.weights = weights
        self.items: tuple[Item, ...] = ()
        self.decisions: tuple[Decision, ...] = ()

    def ingest(self, items: Sequence[Item]) -> None:
        for item in items:
            if not isinstance(dict(item.meta).get("decision"), Decision):
                raise BenchError(f"{self.name} ranks VetoBench decisions; item {item.id!r} is not one "
                                 "(use -suite vetobench)")
        self.items = tuple(items)
        self.decisions = tuple(decision_of(it) for it in self.items)
        self._groups = np.array([it.group for it in self.items], dtype=object)
        self._docs = _unit_rows(self.encoder.documents([d.text for d in self.decisions]))
        self._created = np.array([d.created_at.timestamp() for d in self.decisions], dtype=np.float64)
        self._relevance = np.array([d.historical_relevance for d in self.decisions], dtype=np.float64)
        self._approval = np.array([d.reviewed_at is not None for d in self.decisions], dtype=np.float64)

    def signals(self, group: str, query: str, files: Sequence[str], now: datetime) -> tuple[np.ndarray, dict]:
        """The item indices of ``group`` and each signal's values for them (before weighting)."""
        idx = np.flatnonzero(self._groups == group)
        q = _unit_rows(self.encoder.query(query))
        age_days = (now.timestamp() - self._created[idx]) / 86400.0
        return idx, {
            "semantic": self._docs[idx] @ q,
            "files": np.array([file_overlap(files, self.decisions[i].files_affected) for i in idx.tolist()]),
            "recency": recency(age_days),
            "relevance": self._relevance[idx],
            "approval": self._approval[idx],
        }

    def ranked(self, group: str, query: str, files: Sequence[str], now: datetime) -> tuple[np.ndarray, np.ndarray]:
        """Every decision of ``group`` by composite score, descending (stable): (item indices, scores)."""
        idx, sig = self.signals(group, query, files, now)
        w = self.weights
        scores = (w.semantic * sig["semantic"] + w.files * sig["files"] + w.recency * sig["recency"]
                  + w.relevance * sig["relevance"] + w.approval * sig["approval"])
        order = np.argsort(-scores, kind="stable")
        return idx[order], scores[order]

    def describe(self) -> dict:
        return {"weights": asdict(self.weights), "use_files": self.use_files,
                "embedder": self.encoder.embedder.identity}

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        files = tuple((context or {}).get("files_in_scope", ())) if self.use_files else ()
        idx, scores = self.ranked(group, query, files, now or datetime.now(UTC))
        return [Hit((self.items[i].id,), float(s), self.items[i].content)
                for i, s in zip(idx[:k].tolist(), scores[:k].tolist(), strict=True)]


def veto_composite_systems(encoder: TextEncoder | None = None, files: str = DEFAULT_FILES) -> list[VetoCompositeSystem]:
    """``veto-composite`` (files known: each scenario's files in scope) and/or ``veto-composite-nofiles``;
    ``files`` is ``known``, ``none`` or ``both``. Both share one encoder (each text embedded once); pass the run's
    encoder to share it across suites and corpus sizes too."""
    if files not in VETO_FILES:
        raise BenchError(f"-veto-files {files!r}: use {', '.join(VETO_FILES)}")
    encoder = encoder or default_encoder()
    systems = []
    if files in ("known", "both"):
        systems.append(VetoCompositeSystem(encoder, name=FILES_KNOWN))
    if files in ("none", "both"):
        systems.append(VetoCompositeSystem(encoder, name=NO_FILES, use_files=False))
    return systems


COMPOSITE_ENCODER_KEY = "veto-composite-encoder"


def _composite_encoder(ctx: SystemContext) -> TextEncoder:
    """The run's composite encoder (a mode stores it under COMPOSITE_ENCODER_KEY; else the doc's fnv64)."""
    encoder = ctx.shared(COMPOSITE_ENCODER_KEY, default_encoder)
    assert isinstance(encoder, TextEncoder)
    return encoder


def make_files_known(ctx: SystemContext) -> VetoCompositeSystem:
    """veto-composite: the five signals with the question's files in scope."""
    return VetoCompositeSystem(_composite_encoder(ctx), name=FILES_KNOWN)


def make_no_files(ctx: SystemContext) -> VetoCompositeSystem:
    """veto-composite-nofiles: the five signals without files."""
    return VetoCompositeSystem(_composite_encoder(ctx), name=NO_FILES, use_files=False)
