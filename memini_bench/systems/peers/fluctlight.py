"""``fluctlightdb`` and ``fluctlightdb-maxsim``: FluctlightDB (voxmastery/FluctlightDB, MIT or Apache-2.0), its
native Rust engine (``fluctlightdb-native``) in the CHORUS lane, one in-memory brain per group.

FluctlightDB publishes LoCoMo "mean evidence recall" at turn level, MiniLM: @5 72.6 (72.58), @10 80.0, @150 96.8
(``benchmarks/results/locomo-mpnet-engine-2026-07-15.json``, ``comparison_minilm_engine``; the README's table),
"honest raw, no neighbour expansion": the engine's late-interaction path, ``chorus_imprint_maxsim_batch`` with
per-token MiniLM vectors of each turn and BM25 over the turn with two neighbouring turns on each side, recalled by
``chorus_recall_maxsim_batch`` (token MaxSim fused with BM25, ``w_bm`` 0.7), salience 0.62
(``benchmarks/locomo_engine_maxsim.py``). The metric is the fraction of a question's gold turns in the top k,
averaged (recall_frac here), not recall_any.

- ``fluctlightdb``: ``FluctlightBrain.connect_chorus()`` (in memory; no path, nothing written),
  ``chorus_imprint_batch`` of ``{memory_id, content, context, semantic_vector, salience 0.6}`` with the run's
  document vectors (its ``benchmarks/chorus_bench.py``), recalled by ``chorus_recall(query, limit=k,
  semantic_vector=<the run's query vector>)``: its phase-field lane on the run's pooled vectors.
- ``fluctlightdb-maxsim``: the published path: ``chorus_imprint_maxsim_batch(ids, contents, ids, tokens, counts,
  dim, 0.62)`` and ``chorus_recall_maxsim_batch(queries, tokens, counts, dim, k, 0.7)``, with per-token vectors
  from the run's own sentence-transformers model (``encode(..., output_value="token_embeddings")``, each token
  L2-normalised, texts cut at 800 characters for items and 400 for questions as its bench does). Token vectors are
  not in the run's cache: they are computed for this system (a second pass of the model). The BM25 side reads the
  item's own text (its bench adds two neighbouring turns to each; the harness gives no order between items).

The engine can return one memory twice for one query (``chorus_recall`` did on LoCoMo turn level); the repeat is
dropped (the first place kept) and counted in ``describe()["repeats_dropped"]``.

``connect_chorus`` sets its ``FLUCTLIGHT_*`` switches in ``os.environ`` (they steer the native engine); they stay
set for the rest of the process, and ``describe()`` records them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime

import fluctlightdb  # noqa: F401  (first, so a missing package is named as the extra's)
import fluctlightdb_native  # noqa: F401  (the native wheel: without it the extra is missing)
import numpy as np
from fluctlightdb.brain import FluctlightBrain

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.systems.context import SystemContext
from memini_bench.systems.peers.common import PeerSystem, library_version, require_encoder

SALIENCE = 0.6  # chorus_bench.py
MAXSIM_SALIENCE = 0.62  # locomo_engine_maxsim.py
W_BM = 0.7  # locomo_engine_maxsim.py --w-bm default
ITEM_CHARS, QUERY_CHARS = 800, 400


def _switches() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("FLUCTLIGHT_")}


class FluctlightSystem(PeerSystem):
    """One CHORUS brain per group: pooled run vectors (``maxsim`` False) or token vectors with BM25 (True)."""

    def __init__(self, name: str, encoder: TextEncoder, *, maxsim: bool) -> None:
        super().__init__(name, encoder)
        self.maxsim = maxsim
        self.brains: dict[str, FluctlightBrain] = {}
        self.repeats_dropped = 0
        self._tokens: dict[str, np.ndarray] = {}

    def _token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's per-token vectors from the run's sentence-transformers model, L2-normalised per token."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._tokens]
        if missing:
            model = getattr(self.encoder.embedder, "model", None)
            if model is None or not hasattr(model, "encode"):
                raise BenchError(f"-systems {self.name}: needs a sentence-transformers embedder for its token "
                                 "vectors (-embedder minilm, mpnet or st:PATH)")
            out = model.encode(missing, output_value="token_embeddings", show_progress_bar=False,
                               convert_to_numpy=False)
            for text, mat in zip(missing, out, strict=True):
                m = np.asarray(mat.float().cpu().numpy() if hasattr(mat, "cpu") else mat, dtype=np.float32)
                self._tokens[text] = m / (np.linalg.norm(m, axis=1, keepdims=True) + 1e-9)
        return [self._tokens[t] for t in texts]

    @staticmethod
    def _flat(mats: Sequence[np.ndarray]) -> tuple[list[float], list[int], int]:
        dim = int(mats[0].shape[1]) if mats else 0
        return np.concatenate([m.ravel() for m in mats]).tolist() if mats else [], [len(m) for m in mats], dim

    def ingest(self, items: Sequence[Item]) -> None:
        self.keep_items(items)
        assert self.encoder is not None
        contents = [it.content for it in self.items]
        if not self.maxsim:
            vectors = np.asarray(self.encoder.documents(contents), dtype=np.float32)
        for group, members in self.groups.members.items():
            brain = FluctlightBrain.connect_chorus()
            ids = [str(int(i)) for i in members]
            if self.maxsim:
                flat, counts, dim = self._flat(self._token_vectors([contents[int(i)][:ITEM_CHARS] for i in members]))
                brain._brain.chorus_imprint_maxsim_batch(ids, [contents[int(i)] for i in members], ids, flat, counts,
                                                         dim, MAXSIM_SALIENCE)
            else:
                brain.chorus_imprint_batch([{"memory_id": m, "content": contents[int(i)], "context": m,
                                             "semantic_vector": vectors[int(i)].tolist(), "salience": SALIENCE}
                                            for m, i in zip(ids, members, strict=True)])
            self.brains[group] = brain

    def prepare(self, queries: Sequence[str]) -> None:
        if self.maxsim:
            self._token_vectors([q.strip()[:QUERY_CHARS] for q in queries])
        else:
            super().prepare(queries)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        brain = self.brains.get(group)
        if k <= 0 or brain is None:
            return []
        if self.maxsim:
            cue = query.strip()[:QUERY_CHARS]
            if not cue:
                return []
            flat, counts, dim = self._flat(self._token_vectors([cue]))
            found = brain._brain.chorus_recall_maxsim_batch([cue], flat, counts, dim, k, W_BM)[0]
        else:
            vector = np.asarray(self.encoder.query(query), dtype=np.float32).tolist()
            found = brain.chorus_recall(query, limit=k, semantic_vector=vector)
        rows, scores = [], []
        for memory_id, score in found:  # the engine can return one memory twice (seen on LoCoMo): keep the first
            if int(memory_id) in rows:
                self.repeats_dropped += 1
                continue
            rows.append(int(memory_id))
            scores.append(float(score))
        return self.hits(group, rows, scores, k)

    def describe(self) -> dict:
        out: dict[str, object] = {"library": "fluctlightdb", "version": library_version("fluctlightdb"),
                                  "native": library_version("fluctlightdb-native"),
                                  "brain": "connect_chorus(), in memory, one per group", "env": _switches()}
        if self.maxsim:
            out.update(imprint="chorus_imprint_maxsim_batch (token vectors of the run's model, item text cut at "
                       f"{ITEM_CHARS} chars; BM25 over the item text)", salience=MAXSIM_SALIENCE,
                       recall=f"chorus_recall_maxsim_batch, w_bm {W_BM}, query cut at {QUERY_CHARS} chars")
        else:
            out.update(imprint="chorus_imprint_batch with the run's document vectors", salience=SALIENCE,
                       recall="chorus_recall(query, limit=k, semantic_vector=the run's query vector)")
        out["repeats_dropped"] = self.repeats_dropped  # a memory the engine returned twice for one query
        out["dropped_other_group"] = self.dropped_other_group
        return out

    def close(self) -> None:
        self.brains = {}
        self._tokens = {}
        super().close()


def make(ctx: SystemContext) -> FluctlightSystem:
    """``fluctlightdb``: the CHORUS lane on the run's pooled vectors."""
    return FluctlightSystem("fluctlightdb", require_encoder(ctx, "fluctlightdb"), maxsim=False)


def make_maxsim(ctx: SystemContext) -> FluctlightSystem:
    """``fluctlightdb-maxsim``: its published LoCoMo path, token MaxSim + BM25 in the native engine."""
    return FluctlightSystem("fluctlightdb-maxsim", require_encoder(ctx, "fluctlightdb-maxsim"), maxsim=True)
