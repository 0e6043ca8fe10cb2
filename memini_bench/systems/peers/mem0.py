"""``mem0``: mem0 OSS (mem0ai's ``Memory``, its Qdrant store in local mode) as a memory over the run's vectors.

How it runs. One ``Memory`` per system, configured as mem0's docs describe, with every piece kept on this machine:

- Vector store: mem0's ``qdrant`` provider on a local-mode ``QdrantClient(":memory:")`` (mem0's own qdrant code:
  one collection, cosine, each group a mem0 ``user_id`` (``g<n>``, the n-th group: mem0 refuses empty or
  spaced ids), searched with ``filters={"user_id": ...}``). Local mode filters payloads point by point in
  Python, which dominates mem0's recall latency at LoCoMo size (hundreds of ms a query). History: mem0's SQLite
  history in memory. On disk, each write was an fsync'ed SQLite commit (~60 ms an item here), which is the disk,
  not mem0, so nothing is persisted.
- Embedder: ``RunEmbedder``, a mem0 ``EmbeddingBase`` serving the run's shared encoder: ``"add"``/``"update"``
  texts as documents, ``"search"`` texts as queries (cached vectors; the run's max tokens, not the 256 of mem0's
  sentence-transformers default). mem0's own embedding models never run. mem0 strips the query before embedding
  it; the embedder maps the stripped text back to the question, so the query vector is the one every system uses.
- Search: ``search(query, top_k=k, filters=..., threshold=0.0)``. mem0's default threshold 0.1 drops hits of
  cosine below 0.1; mem0 refuses a negative threshold, so a hit of negative cosine is never returned (a group
  with fewer than k non-negative matches returns fewer: 3 of LoCoMo's 1,981 session-level questions, MiniLM).
  mem0 fetches ``max(4k, 60)`` semantic candidates and adds a BM25 leg and an entity boost when it can; both need
  a model fetched on first use (fastembed's ``Qdrant/bm25``, spaCy's ``en_core_web_sm``), which offline mem0
  skips with a log warning. Here both legs are pinned off before any use, so nothing is ever fetched and the
  ranking is semantic only: ``score = cosine`` (``(semantic + 0 + 0) / 1``). Ranking by cosine on unit vectors
  is memini-vector's ``1/(1+L2)`` order.
- Writes: ``add([{"role": "user", "content": item}], user_id=..., metadata={"memini_items": [item id]},
  infer=False)``, one memory per item; a hit's ids come back from that metadata.

With ``MEMINI_LLM_BASE_URL`` set (and ``MEMINI_LLM_MODEL``, ``MEMINI_LLM_API_KEY`` as for the other LLM modes),
the system is ``mem0-infer`` (a row of its own, so a table never mixes the two): ``infer=True``, so mem0's own
LLM extraction (its additive prompt, one chat call per ``add``) decides what becomes a memory. Items go in as in
mem0's LoCoMo evaluation (mem0ai/mem0 ``evaluation/src/memzero/add.py``, ``batch_size`` 2): consecutive turns of
one group two at a time; each extracted memory carries the ids of the items of its ``add`` call, so a hit stands
for every item it was extracted from (``Hit.ids``). Unlike that script, each turn is added once, under the group's
user id, not once per speaker's perspective.

Home folder and telemetry. mem0 reads ``MEM0_DIR`` and ``MEM0_TELEMETRY`` when first imported and writes
``config.json`` (an anonymous user id) there; this module imports it with ``MEM0_DIR`` set to a temporary folder
of the process (removed at exit) and ``MEM0_TELEMETRY=False``, then pins mem0's telemetry flags off in case it was
imported before. A full or unwritable temp folder (making that folder, mem0's import, ``workdir()``, building
``Memory``) is one line naming the folder and the fix, as for the other peers (``PeerSystem.store_writes``).
Importing mem0 anywhere *before* this module still writes ``~/.mem0``: code that only asks whether mem0 is installed
uses ``importlib.util.find_spec("mem0")``. ``OPENROUTER_API_KEY`` (which would send mem0's LLM calls to
openrouter.ai) is hidden while the LLM client is built. ``memories(group)`` lists what mem0 holds for a group
(VetoBench's optional ``MemoryListing`` hook).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime

import numpy as np

from memini_bench.errors import BenchError
from memini_bench.systems.peers.common import PeerSystem, folder_fix, library_version, require_encoder, store_failure


@contextmanager
def _environment(**values: str | None) -> Iterator[None]:
    """Set (or, for None, remove) environment variables for the block, restoring them afterwards."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _home() -> str:
    """``MEM0_HOME``: a temporary folder of this process for mem0's ``config.json``; a full or unwritable temp
    folder is one line naming it (raised while the registry imports this module, which passes a BenchError on)."""
    try:
        return tempfile.mkdtemp(prefix="memini-bench-mem0-home-")
    except OSError as exc:
        raise BenchError(f"mem0: {folder_fix(tempfile.gettempdir(), exc)}") from None


MEM0_HOME = _home()
atexit.register(shutil.rmtree, MEM0_HOME, True)
try:
    with _environment(MEM0_DIR=MEM0_HOME, MEM0_TELEMETRY="False"):
        import mem0  # noqa: F401  (a missing mem0ai is the registry's one-line "needs the mem0 extra")
        from mem0 import Memory
        from mem0.configs.base import MemoryConfig
        from mem0.embeddings.base import EmbeddingBase
        from mem0.memory import main as mem0_main
        from mem0.memory import telemetry as mem0_telemetry
        from mem0.utils import spacy_models
        from qdrant_client import QdrantClient
except OSError as exc:  # mem0 makes MEM0_DIR and writes config.json there on import
    if not store_failure(exc):
        raise
    raise BenchError(f"mem0: {folder_fix(MEM0_HOME, exc)}") from None

from memini_bench.clients.llm import ChatClient  # noqa: E402
from memini_bench.clients.providers import openai_chat_from_env  # noqa: E402
from memini_bench.core.contract import Hit, superseded  # noqa: E402
from memini_bench.core.dataset import Item  # noqa: E402
from memini_bench.embed.encoder import TextEncoder  # noqa: E402
from memini_bench.systems.context import SystemContext  # noqa: E402

ITEMS_KEY = "memini_items"  # the metadata key holding a memory's source item ids
INFER_BATCH = 2  # items per add() with infer=True (mem0's evaluation/src/memzero/add.py)
THRESHOLD = 0.0
OFFLINE_URL = "http://127.0.0.1:9/v1"  # a closed loopback port: the LLM mem0 insists on, never called offline
OFFLINE_KEY = "offline-unused"


def _pin_offline() -> None:
    """Telemetry off, and mem0's model-backed BM25 and entity legs off before any use (nothing downloads)."""
    mem0_main.MEM0_TELEMETRY = False
    mem0_telemetry.MEM0_TELEMETRY = False
    spacy_models._load_failed_full = True
    spacy_models._load_failed_lemma = True


class RunEmbedder(EmbeddingBase):
    """mem0's embedder interface over the run's encoder: documents for add/update, queries for search."""

    def __init__(self, encoder: TextEncoder) -> None:
        super().__init__(None)
        self.encoder = encoder
        self.config.embedding_dims = encoder.dims
        self.question = ""  # the question being recalled (mem0 embeds it stripped)

    def _query_text(self, text: str) -> str:
        return self.question if self.question and text == self.question.strip() else text

    def embed(self, text, memory_action=None):
        if memory_action == "search":
            return np.asarray(self.encoder.query(self._query_text(text)), dtype=np.float32).tolist()
        return np.asarray(self.encoder.documents([text])[0], dtype=np.float32).tolist()

    def embed_batch(self, texts, memory_action="add"):
        if memory_action == "search":
            return [self.embed(t, "search") for t in texts]
        return np.asarray(self.encoder.documents(list(texts)), dtype=np.float32).tolist()


def infer_batches(items: Sequence[Item], size: int = INFER_BATCH) -> list[list[int]]:
    """Item indices in ``add()`` calls: consecutive items of one group (and session, where set), ``size`` at most."""
    batches: list[list[int]] = []
    for i, item in enumerate(items):
        last = batches[-1] if batches else None
        if last and len(last) < size and (items[last[0]].group, items[last[0]].session) == (item.group, item.session):
            last.append(i)
        else:
            batches.append([i])
    return batches


class Mem0System(PeerSystem):
    """mem0's ``Memory`` on an in-memory local Qdrant, the run's encoder, threshold 0 (see the module docstring).
    Writes over time: each ingest adds, ``update`` is mem0's ``Memory.update``, ``forget`` its ``Memory.delete``."""

    incremental_ingest = True

    def __init__(self, name: str, encoder: TextEncoder, llm: ChatClient | None = None) -> None:
        super().__init__(name, encoder)
        self.llm = llm
        self.embedder = RunEmbedder(encoder)
        self.memory: Memory | None = None
        self.client: QdrantClient | None = None
        self.user_ids: dict[str, str] = {}
        self.index_of: dict[str, int] = {}
        self.memory_ids: dict[str, list[str]] = {}  # item id -> the mem0 memories standing for it
        self.memory_count = 0  # memories mem0 stored (one per item, or what its extraction kept)

    @property
    def infer(self) -> bool:
        return self.llm is not None

    def _build(self) -> Memory:
        _pin_offline()
        assert self.encoder is not None
        folder = str(self.workdir())  # a full or unwritable temp folder: one line naming it
        self.client = QdrantClient(location=":memory:")
        llm = {"api_key": OFFLINE_KEY, "openai_base_url": OFFLINE_URL}
        if self.llm is not None:
            llm = {"model": self.llm.model, "api_key": self.llm.api_key or OFFLINE_KEY,
                   "openai_base_url": self.llm.base_url}
        config = MemoryConfig(
            vector_store={"provider": "qdrant", "config": {"collection_name": "memini", "client": self.client,
                                                           "path": folder,
                                                           "embedding_model_dims": self.encoder.dims}},
            llm={"provider": "openai", "config": llm},
            embedder={"provider": "openai", "config": {"api_key": OFFLINE_KEY, "openai_base_url": OFFLINE_URL,
                                                       "embedding_dims": self.encoder.dims}},
            history_db_path=":memory:")
        with self.store_writes(), _environment(OPENROUTER_API_KEY=None), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # local Qdrant: "payload indexes have no effect"
            memory = Memory(config)
        memory.embedding_model = self.embedder  # the run's vectors, never mem0's own model
        memory.vector_store._bm25_encoder = False  # mem0's sentinel for "tried, unavailable": no fastembed load
        return memory

    def ingest(self, items: Sequence[Item]) -> None:
        """Add the items not added before (each call adds: writes over time), one ``add`` per item (per batch of a
        group's consecutive items under ``infer``)."""
        added = self.add_items(items)
        if not added:
            return
        self.index_of.update((self.items[i].id, i) for i in added)
        for it in (self.items[i] for i in added):
            self.user_ids.setdefault(it.group, f"g{len(self.user_ids)}")
        assert self.encoder is not None
        self.encoder.documents([self.items[i].content for i in added])  # every item vector, once, before mem0 asks
        if self.memory is None:
            self.memory = self._build()
        new = [self.items[i] for i in added]
        for batch in infer_batches(new, INFER_BATCH if self.infer else 1):
            self._add([added[i] for i in batch])

    def _add(self, batch: list[int]) -> None:
        assert self.memory is not None
        first = self.items[batch[0]]
        messages = [{"role": "user", "content": self.items[i].content} for i in batch]
        try:
            added = self.memory.add(messages, user_id=self.user_ids[first.group], infer=self.infer,
                                    metadata={ITEMS_KEY: [self.items[i].id for i in batch]})
        except Exception as exc:
            if not self.infer:
                raise
            raise BenchError(f"mem0-infer: mem0's LLM extraction at {self.llm.base_url if self.llm else ''} "
                             f"failed ({type(exc).__name__}: {exc}); check MEMINI_LLM_BASE_URL and "
                             "MEMINI_LLM_MODEL") from None
        results = added.get("results", [])
        self.memory_count += len(results)
        for memory in results:
            if memory.get("id"):
                for i in batch:
                    self.memory_ids.setdefault(self.items[i].id, []).append(memory["id"])

    def forget(self, item_id: str) -> None:
        """``Memory.delete`` of every memory standing for the item (none left: a no-op)."""
        assert self.memory is not None, "ingest first"
        for memory_id in self.memory_ids.pop(item_id, []):
            if self.memory.vector_store.get(vector_id=memory_id) is not None:
                self.memory.delete(memory_id)
                self.memory_count -= 1

    def update(self, item: Item) -> None:
        """``Memory.update`` of the memory holding the first superseded item: its text becomes the correction's
        and its metadata names the correction's id; the other superseded items' memories are deleted. With no
        memory left to update, the correction is added."""
        assert self.memory is not None, "ingest first"
        old = [i for i in superseded(item) if self.memory_ids.get(i)]
        if not old or self.infer or item.id in self.index_of:
            self.ingest((item,))
            for gone in old:
                self.forget(gone)
            return
        index = self.add_items((item,))[0]
        self.index_of[item.id] = index
        self.encoder.documents([item.content])  # type: ignore[union-attr]
        target = self.memory_ids.pop(old[0])[0]
        self.memory.update(target, text=item.content, metadata={ITEMS_KEY: [item.id]})
        self.memory_ids[item.id] = [target]
        for gone in old:
            self.forget(gone)

    def _hit(self, memory: dict, group: str) -> Hit | None:
        """The memory as a Hit of its source items, None (counted) when any of them is not in ``group``."""
        ids = tuple((memory.get("metadata") or {}).get(ITEMS_KEY, ()))
        if not ids or any(i not in self.index_of or self.items[self.index_of[i]].group != group for i in ids):
            self.dropped_other_group += 1
            return None
        return Hit(ids, float(memory.get("score") or 0.0), memory["memory"])

    def memories(self, group: str) -> list[Hit]:
        """Every memory mem0 holds for ``group`` (VetoBench's optional ``MemoryListing`` hook), score 0."""
        user_id = self.user_ids.get(group)
        if user_id is None or self.memory is None:
            return []
        listed = self.memory.get_all(filters={"user_id": user_id}, top_k=max(1, self.memory_count))["results"]
        return [hit for memory in listed if (hit := self._hit({**memory, "score": 0.0}, group)) is not None]

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        user_id = self.user_ids.get(group)
        if user_id is None or k <= 0 or not query.strip():
            return []  # mem0 refuses an empty query
        assert self.memory is not None, "ingest first"
        self.embedder.question = query
        try:
            found = self.memory.search(query, top_k=k, filters={"user_id": user_id}, threshold=THRESHOLD)
        finally:
            self.embedder.question = ""
        hits = [self._hit(memory, group) for memory in found["results"]]
        return [hit for hit in hits if hit is not None][:k]

    def describe(self) -> dict:
        out: dict[str, object] = {
            "library": "mem0ai", "version": library_version("mem0ai"),
            "qdrant_client_version": library_version("qdrant-client"), "infer": self.infer,
            "vector_store": "mem0 qdrant provider on QdrantClient(':memory:') (local mode), one collection, "
                            "group = user_id filter, cosine",
            "history_db": ":memory:", "embedder": "the run's encoder (add/update: documents, search: queries)",
            "search": "semantic only (BM25 and entity legs pinned off: their models are downloads)",
            "threshold": THRESHOLD, "candidates": "max(4k, 60)", "memories": self.memory_count,
            "dropped_other_group": self.dropped_other_group}
        if self.llm is not None:
            out.update({"llm_model": self.llm.model, "llm_base_url": self.llm.base_url,
                        "items_per_add": INFER_BATCH, "extraction": "mem0's additive extraction prompt"})
        return out

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None
        if self.client is not None:
            self.client.close()
            self.client = None
        super().close()


def make(ctx: SystemContext) -> Mem0System:
    """``mem0`` (``infer=False``), or ``mem0-infer`` (mem0's LLM extraction) when ``MEMINI_LLM_BASE_URL`` is set."""
    encoder = require_encoder(ctx, "mem0")
    if os.environ.get("MEMINI_LLM_BASE_URL"):
        return Mem0System("mem0-infer", encoder, openai_chat_from_env())
    return Mem0System("mem0", encoder)
