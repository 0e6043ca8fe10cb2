"""``wordllama``: WordLlama's static token embeddings (``l2_supercat``), shipped inside the ``wordllama`` wheel, so
it runs offline and without torch.

A text's vector is the mean of its tokens' 256-d embeddings (WordLlama's own pooling, ``embed(norm=False)``),
then L2-normalized here (memini scores ``1/(1+L2)``, which ranks like cosine only for unit vectors). A text with
no token (the empty string) pools to zeros, which the harness refuses as a vector; it becomes ``e0`` instead, as
memini's hash embedder does. ``wordllama:DIM`` keeps the first DIM of the 256 dimensions (the model is trained
Matryoshka-style for 64 and 128 too). Texts are cut to 8000 characters, as memini's Batched client does.

The wheel's own loader looks for the tokenizer under ``wordllama/tokenizer/`` but ships it in
``wordllama/tokenizers/``, then tries to download it; we point its cache folder at the package folder and
disable downloads, so it finds both files in the wheel and never touches the network.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memini_bench.core.registry import missing_extra, require_extra
from memini_bench.errors import BenchError

CONFIG = "l2_supercat"
SHIPPED_DIMS = 256
TRUNCATIONS = (64, 128, 256)
MAX_CHARS = 8000


class WordLlamaEmbedder:
    """The ``wordllama`` embedder (``identity`` names the model, its dimensions and the normalization)."""

    max_chars = MAX_CHARS

    def __init__(self, dims: int = SHIPPED_DIMS, batch_size: int = 256) -> None:
        if dims not in TRUNCATIONS:
            raise BenchError(f"-embedder wordllama:{dims}: use one of {', '.join(map(str, TRUNCATIONS))} dimensions "
                             f"(the wheel ships the {SHIPPED_DIMS}-d weights)")
        self.dims = dims
        self.batch_size = batch_size
        self.identity = f"wordllama:{CONFIG}-{dims}d-l2norm"
        self._model = None

    @property
    def model(self):
        if self._model is None:
            self._model = load_model(self.dims)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        raw = np.asarray(self.model.embed(list(texts), norm=False, batch_size=self.batch_size), dtype=np.float64)
        raw = np.nan_to_num(raw, nan=0.0, posinf=0.0, neginf=0.0)
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        out = np.where(norms > 0, raw / np.where(norms > 0, norms, 1.0), 0.0)
        out[norms[:, 0] == 0, 0] = 1.0  # no token: e0
        return out.astype(np.float32)


def load_model(dims: int):
    """WordLlama's inference object from the files inside the installed wheel (no download)."""
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        raise missing_extra("-embedder wordllama", "wordllama", "wordllama") from None
    from pathlib import Path

    package = Path(wordllama.__file__).parent
    try:
        return WordLlama.load(config=CONFIG, dim=SHIPPED_DIMS, trunc_dim=None if dims == SHIPPED_DIMS else dims,
                              cache_dir=package, disable_download=True)
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise BenchError(f"-embedder wordllama: cannot load the {CONFIG} weights shipped in {package} "
                         f"({str(exc).splitlines()[0][:120]}); reinstall wordllama") from None


def make(settings, argument: str = "") -> WordLlamaEmbedder:
    """The embedder factory (``-embedder wordllama`` or ``wordllama:DIM``)."""
    if argument and not argument.isdigit():
        raise BenchError(f"-embedder wordllama:{argument}: the argument is a dimension count (64, 128 or 256)")
    require_extra("-embedder wordllama", "wordllama", "wordllama")  # before any work, not at the first text
    return WordLlamaEmbedder(int(argument) if argument else SHIPPED_DIMS, batch_size=max(settings.batch_size, 1))
