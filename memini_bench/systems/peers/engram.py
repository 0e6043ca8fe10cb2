"""``engram-search``: Engram (Nitin-Gupta1109/engram, PyPI ``engram-search``, MIT), its own document builder and
retrieval pipeline over the run's shared vectors, without its cross-encoder reranker.

Engram publishes R@5 98.4 on LongMemEval-S (500 questions) and 93.9 on LoCoMo at session level (1,982 questions),
both with bge-large-en-v1.5 (1024-d) and, for LoCoMo, ``--mode rerank`` (its bge-reranker-v2-m3 cross-encoder over
the top 20). Neither bge model is available here (no Hugging Face access), so this adapter runs the run's embedder
(MiniLM by default) and no reranker (``use_reranker=False``, its ``hybrid`` mode): the published figures are not
what it measures, and ``describe()`` says so.

- Documents (``engram.ingestion.parser.session_to_documents``, unchanged): each item is one Engram "session"; its
  lines are its turns (a line opening with ``user:`` / ``assistant:`` starts a turn of that role, as LongMemEval
  items are written; any other line is a turn of role ``user``, LoCoMo's ``Speaker: text`` lines, so Engram's
  preference and topic patterns read every speaker). ``include_assistant=True`` (its LoCoMo bench's default): turns
  in overlapping chunks of 6 (overlap 1), plus a synthetic preference document and a topic document per item. Every
  document maps back to its item; the item's date is the documents' ``timestamp`` metadata (its temporal boost).
  The suite's text already carries the date and speaker names, so no timestamp prefix or speaker injection is added.
- Embedding: ``Embedder.encode_documents``'s rule on the run's encoder: a document longer than 4 characters per
  model token (the run's token limit) is cut into chunks of that length (overlap 200) whose vectors are averaged;
  every vector is L2-normalised; queries through the encoder's ``queries`` (no bge query prefix: not a bge model).
- Retrieval (``engram.retrieval.pipeline.RetrievalPipeline.search``, unchanged): cosine over every document of the
  group, Engram's BM25 (k1 1.5, b 0.75, its tokenizer and stop words, IDF over the group's documents), person-name,
  quoted-phrase and temporal (question date = the run's ``now``) boost rankings, all fused by RRF (k 60). The fused
  document list becomes items in rank order, each item once.

The pipeline re-indexes BM25 on every query (``score_query_against_docs``); here the index is built once per group
and reused, which returns the same scores.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime

import engram  # noqa: F401  (first, so a missing package is named as the extra's)
import numpy as np
from engram.backends.base import Document
from engram.ingestion.parser import session_to_documents
from engram.retrieval.embedder import Embedder
from engram.retrieval.pipeline import RetrievalPipeline
from engram.retrieval.sparse import BM25

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, library_version, require_encoder

CHUNK_TURNS = 6
CHARS_PER_TOKEN = 4  # Embedder.encode_documents: max_chars = max_seq_length * 4
CHUNK_OVERLAP = 200
_ROLE = re.compile(r"^(user|assistant): ?(.*)$", re.DOTALL)


def turns_of(text: str) -> list[dict[str, str]]:
    """An item's turns: ``user:`` / ``assistant:`` lines open a turn of that role (later lines without a role join
    it); other lines are turns of role ``user``."""
    turns: list[dict[str, str]] = []
    roles_seen = False
    for line in text.splitlines():
        if not line.strip():
            continue
        tagged = _ROLE.match(line)
        if tagged:
            roles_seen = True
            turns.append({"role": tagged.group(1), "content": tagged.group(2)})
        elif roles_seen and turns:
            turns[-1]["content"] += "\n" + line
        else:
            turns.append({"role": "user", "content": line})
    return turns


class RunEmbedder:
    """Engram's ``Embedder`` interface on the run's encoder (normalised vectors, its long-document rule)."""

    def __init__(self, encoder: TextEncoder) -> None:
        self.encoder = encoder
        max_tokens = getattr(encoder.embedder, "max_tokens", None)
        self.max_chars = int(max_tokens) * CHARS_PER_TOKEN if max_tokens else None

    @staticmethod
    def _unit(m: np.ndarray) -> np.ndarray:
        m = np.asarray(m, dtype=np.float32)
        norms = np.linalg.norm(m, axis=-1, keepdims=True)
        return m / np.where(norms > 0, norms, 1.0)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Each text's vector; a text over ``max_chars`` is the normalised mean of its chunks' vectors."""
        pieces = [[t] if self.max_chars is None or len(t) <= self.max_chars else
                  Embedder._chunk_text(t, self.max_chars, overlap=CHUNK_OVERLAP) for t in texts]
        flat = self._unit(self.encoder.documents([p for ps in pieces for p in ps]))
        out, at = [], 0
        for ps in pieces:
            out.append(flat[at] if len(ps) == 1 else self._unit(flat[at:at + len(ps)].mean(axis=0)))
            at += len(ps)
        return np.stack(out) if out else np.zeros((0, self.encoder.dims), np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return self._unit(self.encoder.query(text))


class GroupBM25(BM25):
    """Engram's BM25, indexed once per document list instead of on every query (same scores)."""

    def score_query_against_docs(self, query: str, documents: list[str]) -> list[float]:
        if documents != getattr(self, "_texts", None):
            self._texts = list(documents)
            self.index(documents)
        return self.score(query)


class EngramSystem(PeerSystem):
    """Engram's documents and hybrid RRF pipeline (no reranker), one document set and BM25 index per group."""

    def __init__(self, name: str, encoder: TextEncoder) -> None:
        super().__init__(name, encoder)
        self.embedder = RunEmbedder(encoder)
        self.docs: dict[str, list[Document]] = {}
        self.pipelines: dict[str, RetrievalPipeline] = {}
        self.row_of: dict[str, int] = {}
        self.n_docs = 0

    def _documents(self, i: int, item: Item) -> list[dict]:
        docs = session_to_documents(turns_of(item.content), session_id=f"i{i}", timestamp="",
                                    include_assistant=True, generate_preference_doc=True,
                                    generate_topic_doc=True, chunk_max_turns=CHUNK_TURNS, speaker_names=None)
        stamp = item.time.strftime("%Y/%m/%d") if item.time else ""
        for d in docs:
            d["metadata"]["timestamp"] = stamp
            self.row_of[d["id"]] = i
        return docs

    def ingest(self, items: Sequence[Item]) -> None:
        self.keep_items(items)
        raw = [(self.items[i].group, d) for i in range(len(self.items)) for d in self._documents(i, self.items[i])]
        vectors = self.embedder.encode_documents([d["text"] for _, d in raw])
        for (group, d), v in zip(raw, vectors, strict=True):
            self.docs.setdefault(group, []).append(Document(id=d["id"], text=d["text"], embedding=v,
                                                            metadata=d["metadata"]))
        for group in self.docs:
            pipeline = RetrievalPipeline(embedder=self.embedder, reranker=None, use_reranker=False, dense_top_k=50)
            pipeline._bm25 = GroupBM25()
            self.pipelines[group] = pipeline
        self.n_docs = len(raw)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        docs = self.docs.get(group)
        if k <= 0 or not docs:
            return []
        found = self.pipelines[group].search(query, docs, top_k=len(docs),
                                             question_date=now.strftime("%Y/%m/%d") if now else None)
        rows: list[int] = []
        scores: list[float] = []
        for doc in found:
            row = self.row_of[doc.id]
            if row not in rows:
                rows.append(row)
                scores.append(float(doc.score))
        return self.hits(group, rows, scores, k)

    def describe(self) -> dict:
        return {"library": "engram-search", "version": library_version("engram-search"),
                "pipeline": "RetrievalPipeline.search: dense cosine + BM25 + name/phrase/temporal boosts, RRF k 60",
                "reranker": "none (use_reranker=False; its published figures use bge-reranker-v2-m3)",
                "embedder": "the run's encoder; its published figures use bge-large-en-v1.5 (1024-d), not "
                            "available offline here",
                "documents": {"builder": "session_to_documents, one session per item", "include_assistant": True,
                              "chunk_max_turns": CHUNK_TURNS, "chunk_overlap_turns": 1, "preference_doc": True,
                              "topic_doc": True, "count": self.n_docs},
                "long_document_rule": (f"chunks of {self.embedder.max_chars} chars (overlap {CHUNK_OVERLAP}), mean"
                                       if self.embedder.max_chars else "none (the embedder has no token limit)"),
                "bm25": {"k1": 1.5, "b": 0.75}, "dropped_other_group": self.dropped_other_group}


def make(ctx: SystemContext) -> EngramSystem:
    """``engram-search``: Engram's documents and hybrid pipeline, no reranker, on the run's vectors."""
    return EngramSystem("engram-search", require_encoder(ctx, "engram-search"))
