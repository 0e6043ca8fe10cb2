"""``taosmd``, ``taosmd-rrf``, ``taosmd-bm25-rrf`` and ``taosmd-mem0``: taOSmd's ``VectorMemory`` (jaylfc/taosmd,
MIT) as a memory store, one SQLite store per group in the run's temp folder, searched with its own fusion modes.

taOSmd publishes "97.0% Recall@5 on LongMemEval-S" (all-MiniLM-L6-v2, 500 questions): its
``benchmarks/longmemeval_enhanced.py`` (``query_expand`` row; ``REPRODUCE-longmemeval.md``) embeds each session's
user turns joined and cut to 512 characters, and retrieves with ``vmem.search(query, limit=5, hybrid=True)``,
i.e. the ``boost`` fusion (its default); the 97.0 adds up to three entity keywords to the query, the plain
``hybrid_baseline`` row is 96.6.

- Store: ``VectorMemory(db_path=<temp folder>/group-<n>.db)``, one per group; every item goes in through its own
  ``add(text, metadata={"row": i})`` (its secret redaction, a JSON-encoded vector per row), so recall reads only the
  group's rows.
- Embedding: taOSmd's local sentence-transformers mode (``embed_mode="local"``) calls
  ``model.encode(text[:512])`` for documents and queries alike. Here its ``_local_model`` is the run's shared
  encoder (documents through ``documents``, questions through ``queries``), so taOSmd's own 512-character cut
  decides what is embedded and the vectors come from the run's model and cache (on MiniLM the same vector its
  local mode computes: 512 characters stay under MiniLM's token limit). No model is loaded by taOSmd.
- Search: ``search(query, limit=k, hybrid=True, fusion=<mode>)``, taOSmd's code unchanged:
  ``boost`` (``taosmd``): cosine + 0.3 x the share of the query's keywords (3+ characters, not in its 34 stop
  words) found as substrings; ``rrf``: RRF (k 60) of the cosine ranks and a keyword-presence ranking;
  ``bm25_rrf``: RRF (k 60) of the cosine ranks and bm25s BM25 (k1 1.5, b 0.75, no stemmer, no stop words);
  ``mem0_additive``: (cosine + sigmoid-normalised BM25 over spaCy lemmas) / 2. A query with no keyword is pure
  cosine in every mode (taOSmd's rule).

Speed: taOSmd's ``search`` re-reads every row of the store and ``json.loads`` every stored vector on every query
(about 0.3 CPU-seconds a question on a LoCoMo conversation here). While a taosmd system is open, its module's
``json`` is a ``MemoJSON`` that returns the value already decoded for an identical text: the same values, so the
same ranking, without the repeated decode. The recall latency measured here is therefore below taOSmd's own (the
SQLite read and numpy scoring remain); ``describe()["json_memo"]`` says so.

Departures: the items are the suite's (its LongMemEval recipe keeps user turns only and expands the query; neither
is reproduced). spaCy is not installed here, so ``mem0_additive`` lemmatises nothing (taOSmd's own fallback: the raw
text); ``describe()`` says so.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np
import taosmd  # noqa: F401  (first, so a missing package is named as the extra's)
from taosmd import vector_memory
from taosmd.vector_memory import VectorMemory

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import AsyncPeerSystem, library_version, require_encoder

FUSIONS = ("boost", "rrf", "bm25_rrf", "mem0_additive")
CUT = 512  # taOSmd's _embed_local: model.encode(text[:512])


class MemoJSON:
    """A stand-in for the ``json`` module inside ``taosmd.vector_memory``: ``loads`` of a text it has decoded before
    returns that value (callers only read it); everything else is ``json``'s own."""

    def __init__(self) -> None:
        self.memo: dict[str, object] = {}

    def loads(self, s, *args, **kwargs):
        if args or kwargs or not isinstance(s, str):
            return json.loads(s, *args, **kwargs)
        value = self.memo.get(s)
        if value is None:
            value = self.memo[s] = json.loads(s)
        return value

    def __getattr__(self, name: str):
        return getattr(json, name)


class RunModel:
    """Stands in for taOSmd's sentence-transformers model: ``encode(text)`` returns the run encoder's vector, as a
    document or as a query (``role``)."""

    def __init__(self, encoder: TextEncoder) -> None:
        self.encoder = encoder
        self.role = "document"

    def encode(self, text: str, convert_to_numpy: bool = True) -> np.ndarray:
        if self.role == "query":
            return np.asarray(self.encoder.query(text), dtype=np.float32)
        return np.asarray(self.encoder.documents([text])[0], dtype=np.float32)


class TaosmdSystem(AsyncPeerSystem):
    """taOSmd's VectorMemory, one store per group, searched with one of its fusion modes."""

    def __init__(self, name: str, fusion: str, encoder: TextEncoder) -> None:
        if fusion not in FUSIONS:
            raise ValueError(f"fusion {fusion!r}: use one of {FUSIONS}")
        super().__init__(name, encoder)
        self.fusion = fusion
        self.model = RunModel(encoder)
        self.stores: dict[str, VectorMemory] = {}

    def ingest(self, items: Sequence[Item]) -> None:
        self.keep_items(items)
        if not isinstance(vector_memory.json, MemoJSON):
            vector_memory.json = MemoJSON()
        assert self.encoder is not None
        self.encoder.documents([it.content[:CUT] for it in self.items])  # one batch; add() then reads the memo
        self.model.role = "document"
        with self.store_writes():
            for n, (group, members) in enumerate(self.groups.members.items()):
                self.stores[group] = self._run(self._fill(str(self.workdir() / f"group-{n}.db"), members))

    async def _fill(self, path: str, members: np.ndarray) -> VectorMemory:
        store = VectorMemory(db_path=path, embed_mode="qmd")  # "qmd" only so init() loads no model ...
        await store.init()
        store._embed_mode, store._local_model = "local", self.model  # ... then its local mode, on the run's model
        for i in members:
            await store.add(self.items[int(i)].content, metadata={"row": int(i)})
        return store

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        store = self.stores.get(group)
        if k <= 0 or store is None:
            return []
        self.model.role = "query"
        with contextlib.redirect_stderr(io.StringIO()):  # bm25s draws progress bars on every query
            found = self._run(store.search(query, limit=k, hybrid=True, fusion=self.fusion))
        rows = [int(r["metadata"]["row"]) for r in found]
        scores = [float(r.get("rrf_score", r["similarity"])) for r in found]
        return self.hits(group, rows, scores, k)

    def describe(self) -> dict:
        out: dict[str, object] = {
            "library": "taosmd", "version": library_version("taosmd"), "fusion": self.fusion, "hybrid": True,
            "store": "VectorMemory, one SQLite file per group in the run's temp folder",
            "embedding": f"its local mode (model.encode(text[:{CUT}])) on the run's encoder"}
        if self.fusion in ("rrf", "bm25_rrf"):
            out["rrf_k"] = 60
        if self.fusion in ("bm25_rrf", "mem0_additive"):
            out["bm25"] = "bm25s, k1 1.5, b 0.75, no stemmer, no stop words"
        if self.fusion == "mem0_additive":
            out["lemmatizer"] = ("spaCy en_core_web_sm" if importlib.util.find_spec("spacy") else
                                 "none: spaCy is not installed (taOSmd's fallback: the raw text)")
        out["json_memo"] = ("taOSmd's json.loads of stored rows memoised (same values and ranking; recall latency "
                            "below taOSmd's own)")
        out["dropped_other_group"] = self.dropped_other_group
        return out

    def close(self) -> None:
        for store in self.stores.values():
            self._run(store.close())
        self.stores = {}
        if isinstance(vector_memory.json, MemoJSON):
            vector_memory.json = json  # back to taOSmd's own (another open taosmd system re-installs a fresh memo)
        super().close()


def _make(name: str, fusion: str):
    def make(ctx: SystemContext) -> TaosmdSystem:
        return TaosmdSystem(name, fusion, require_encoder(ctx, name))

    make.__doc__ = f"``{name}``: taOSmd VectorMemory, hybrid search with fusion {fusion!r}."
    return make


make = _make("taosmd", "boost")
make_rrf = _make("taosmd-rrf", "rrf")
make_bm25_rrf = _make("taosmd-bm25-rrf", "bm25_rrf")
make_mem0 = _make("taosmd-mem0", "mem0_additive")
