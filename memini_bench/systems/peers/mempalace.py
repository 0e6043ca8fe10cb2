"""``mempalace`` and ``mempalace-hybrid``: MemPalace's published LongMemEval recipes on our items and vectors.

MemPalace (MemPalace/mempalace) reports LongMemEval-S R@5 96.6 for "raw" and 97.8 for "hybrid v1" with Chroma's
default all-MiniLM-L6-v2. Followed: ``benchmarks/longmemeval_bench.py`` (MemPalace/mempalace @
9b7cfc99, ``build_palace_and_retrieve`` and ``build_palace_and_retrieve_hybrid``) and ``benchmarks/HYBRID_MODE.md``.

- Documents: one per session, the session's *user* turns joined by ``"\\n"`` (a session without user turns is not
  indexed). Our items carry no roles, so an item's document is ``meta["user_text"]`` when its suite supplies it and
  the item text otherwise; ``describe()["documents"]`` says which (today no loader supplies it: LoCoMo's two
  speakers are both people, and the LongMemEval loader folds roles into the text; ``-session-doc user-only`` makes
  LongMemEval items exactly these documents, for every system of the run).
- Embedding: Chroma's default embedding function, all-MiniLM-L6-v2 truncated at 256 tokens. Here the run's encoder
  embeds each document cut at the end of its 254th word piece (256 with [CLS] and [SEP]) when the encoder is a
  sentence-transformers model with a tokenizer: the same vector a 256-token MiniLM gives, from the shared encoder
  and its cache. Other embedders get the whole document.
- Raw: ``collection.query(question, n_results=50)`` on a default collection, i.e. squared L2 distance (Chroma's
  default ``l2`` space; HYBRID_MODE.md calls it cosine, and with unit vectors it ranks the same), best first; the
  documents it did not return follow in corpus order. Score = -distance.
- Hybrid v1: the same 50 candidates; the question's keywords ``re.findall(r"\\b[a-z]{3,}\\b", q.lower())`` minus its
  49 stop words, repeats kept; ``overlap`` = the share of keywords found as substrings of the lower-cased document;
  ``fused = distance * (1 - 0.30 * overlap)``, ascending (stable); then the rest in corpus order.
  Score = -fused.

Departures: exact search where Chroma's HNSW is approximate (it is exact-like at these sizes; the ``chroma``
adapter measures the library itself), and the items' text is the suite's (its LoCoMo bench writes turns as
``speaker said, "text"``; its LoCoMo hybrid is another formula, not reproduced).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

import numpy as np

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.retrieval.keyword import top_k
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, require_encoder

CANDIDATES = 50
HYBRID_WEIGHT = 0.30
MAX_TOKENS = 256  # Chroma's default embedding function (ONNX all-MiniLM-L6-v2) truncates here
USER_TEXT = "user_text"
_KEYWORD = re.compile(r"\b[a-z]{3,}\b")
STOP_WORDS = frozenset("""what when where who how which did do was were have has had is are the a an my me i you your
their it its in on at to for of with by from ago last that this there about get got give gave buy bought made
make""".split())


def document_of(item: Item) -> str:
    """MemPalace's document for an item: its user turns when the suite supplies them, else its text."""
    return str(dict(item.meta).get(USER_TEXT, item.content))


def keywords(question: str) -> list[str]:
    """MemPalace v1's question keywords: 3+ letter ASCII words of the lower-cased question, stop words removed."""
    return [w for w in _KEYWORD.findall(question.lower()) if w not in STOP_WORDS]


def keyword_overlap(words: Sequence[str], document: str) -> float:
    """The share of ``words`` (repeats counted) that occur as substrings of the lower-cased document."""
    if not words:
        return 0.0
    lower = document.lower()
    return sum(1 for w in words if w in lower) / len(words)


class TokenCut:
    """Cuts texts at the end of their ``max_tokens - 2``-th word piece with a sentence-transformers model's own
    tokenizer (what truncation at ``max_tokens`` keeps), or passes them through when there is no tokenizer."""

    def __init__(self, encoder: TextEncoder, max_tokens: int = MAX_TOKENS) -> None:
        self.max_pieces = max_tokens - 2
        self.tokenizer = None
        location = getattr(encoder.embedder, "location", "")
        if location and Path(location).is_dir():
            from transformers import AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(location)

    @property
    def active(self) -> bool:
        return self.tokenizer is not None

    def __call__(self, texts: Sequence[str]) -> list[str]:
        if self.tokenizer is None:
            return list(texts)
        out = []
        for text in texts:
            offsets = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                                     truncation=False, verbose=False)["offset_mapping"]
            out.append(text if len(offsets) <= self.max_pieces else text[:offsets[self.max_pieces - 1][1]])
        return out


class MemPalaceSystem(PeerSystem):
    """MemPalace raw (``hybrid=False``) or hybrid v1 over each group's documents (see the module docstring)."""

    def __init__(self, encoder: TextEncoder, name: str = "mempalace", *, hybrid: bool = False) -> None:
        super().__init__(name, encoder)
        self.hybrid = hybrid
        self.documents: list[str] = []
        self.with_user_text = 0
        self.cut_active = False
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    def ingest(self, items: Sequence[Item]) -> None:
        assert self.encoder is not None
        self.keep_items(items)
        self.documents = [document_of(it) for it in self.items]
        self.with_user_text = sum(USER_TEXT in dict(it.meta) for it in self.items)
        cut = TokenCut(self.encoder)
        self.cut_active = cut.active
        self._vectors = np.asarray(self.encoder.documents(cut(self.documents)), dtype=np.float32)

    def _ranked(self, group: str, query: str, k: int) -> list[tuple[int, float]]:
        """(item index, distance or fused distance) best first: the candidates, then the rest in corpus order."""
        assert self.encoder is not None
        members = self.groups.of(group)
        diff = self._vectors[members] - np.asarray(self.encoder.query(query), dtype=np.float32)
        distance = np.einsum("ij,ij->i", diff, diff).astype(np.float64)
        local, best = top_k(np.arange(len(members)), -distance, min(CANDIDATES, len(members)))
        ranked = [(int(members[i]), -s) for i, s in zip(local.tolist(), best.tolist(), strict=True)]
        if self.hybrid:
            words = keywords(query)
            ranked = sorted(((i, d * (1.0 - HYBRID_WEIGHT * keyword_overlap(words, self.documents[i])))
                             for i, d in ranked), key=lambda pair: pair[1])
        if k > len(ranked):
            seen = {i for i, _ in ranked}
            ranked += [(int(i), float(distance[j])) for j, i in enumerate(members.tolist()) if i not in seen]
        return ranked[:k]

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        if k <= 0 or group not in self.groups.members:
            return []
        ranked = self._ranked(group, query, k)
        return self.hits(group, [i for i, _ in ranked], [-d for _, d in ranked], k)

    def describe(self) -> dict:
        info: dict[str, object] = {
            "recipe": "MemPalace benchmarks/longmemeval_bench.py " + ("hybrid v1" if self.hybrid else "raw"),
            "documents": (f"user turns (meta user_text) for {self.with_user_text} of {len(self.items)} items, the "
                          "item text for the rest" if self.with_user_text else
                          "item text (the suite supplies no roles, so not user turns only)"),
            "embed_max_tokens": MAX_TOKENS if self.cut_active else "the run's (no tokenizer to cut with)",
            "distance": "squared L2 (Chroma's default l2 space)", "candidates": CANDIDATES, "search": "exact",
            "dropped_other_group": self.dropped_other_group}
        if self.hybrid:
            info.update(fused="distance * (1 - 0.30 * keyword overlap)", hybrid_weight=HYBRID_WEIGHT,
                        keywords=r"\b[a-z]{3,}\b minus 49 stop words, substring match")
        return info


def make_raw(ctx: SystemContext) -> MemPalaceSystem:
    """``mempalace``: MemPalace raw (dense only)."""
    return MemPalaceSystem(require_encoder(ctx, "mempalace"), "mempalace")


def make_hybrid(ctx: SystemContext) -> MemPalaceSystem:
    """``mempalace-hybrid``: MemPalace hybrid v1 (dense top 50, keyword-overlap re-score)."""
    return MemPalaceSystem(require_encoder(ctx, "mempalace-hybrid"), "mempalace-hybrid", hybrid=True)
