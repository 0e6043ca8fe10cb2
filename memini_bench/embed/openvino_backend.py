"""OpenVINO as the runtime of a local sentence-transformers model (``-embed-backend openvino``; extra ``openvino``).

The loaded model's Hugging Face transformer and its sentence-transformers head are traced together into one
OpenVINO graph (``openvino.convert_model`` on an example batch; batch size and sequence length stay dynamic):
for token states ``h_t`` and attention mask ``m_t``, ``v = u / ||u||`` with ``u = sum_t m_t h_t / max(sum_t m_t,
1e-9)``, exactly the ``Pooling(mean)`` + ``Normalize`` modules of all-MiniLM-L6-v2. Only that pipeline
(``Transformer -> Pooling(mean) [-> Normalize]``) is converted; any other is a BenchError naming
``-embed-backend torch``. Texts go through the model's own ``preprocess`` (its tokenizer, its max_seq_length,
padding to each batch's longest), longest first in batches of ``batch_size``, as ``SentenceTransformer.encode``.

The graph is compiled for the CPU with ``INFERENCE_PRECISION_HINT`` ``f32`` or ``bf16`` and the single-stream
``LATENCY`` hint. bf16 needs ``BF16`` among the CPU plugin's ``OPTIMIZATION_CAPABILITIES`` (``bf16_problem``).
Every call into OpenVINO runs under ``core.sigstack.kept()``: its CPU plugin points the thread's alternate signal
stack at memory it frees later, which turned the next signal (a ``-recall-timeout`` alarm, a Ctrl-C) into a SIGSEGV.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from memini_bench.core import sigstack
from memini_bench.errors import BenchError

EXTRA_HINT = "pip install 'memini-bench[openvino]' (or openvino==2026.4.1)"
HINTS = {"fp32": "f32", "bf16": "bf16"}


def require_openvino():
    """The ``openvino`` module, or a one-line BenchError naming the extra."""
    try:
        import openvino
    except ImportError:
        raise BenchError(f"-embed-backend openvino: the openvino package is not installed; {EXTRA_HINT}") from None
    return openvino


def bf16_problem() -> str | None:
    """Why OpenVINO's CPU plugin cannot run bf16 here (it lists no ``BF16`` capability), or None when it can."""
    openvino = require_openvino()
    with sigstack.kept():
        capabilities = openvino.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return None if "BF16" in capabilities else "OpenVINO lists no bf16 on this CPU"


def _check_pipeline(model, name: str) -> None:
    kinds = [type(module).__name__ for module in model]
    pooling = getattr(model[1], "pooling_mode", None) if len(kinds) > 1 else None
    if kinds[:2] != ["Transformer", "Pooling"] or pooling != "mean" or kinds[2:] not in ([], ["Normalize"]):
        raise BenchError(f"-embed-backend openvino: {name} is {' -> '.join(kinds)} (pooling {pooling!r}); only "
                         "Transformer -> Pooling(mean) [-> Normalize] is supported; use -embed-backend torch")


def _head(transformer, normalize: bool):
    import torch

    class MeanPooled(torch.nn.Module):
        """The transformer, mean pooling over the attention mask and (when the model has it) L2 normalisation."""

        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            states = self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids)[0]
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            mean = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1) if normalize else mean

    return MeanPooled().eval()


class OpenVINOEncoder:
    """``encode(texts) -> float32 (n, dims)`` for a loaded SentenceTransformer, run by OpenVINO at ``precision``."""

    def __init__(self, model, *, precision: str, batch_size: int, name: str) -> None:
        openvino = require_openvino()
        import torch

        _check_pipeline(model, name)
        self.model = model
        self.batch_size = batch_size
        example = self._features(["an example text", "a second, longer example text to trace"])
        head = _head(model[0].auto_model, normalize=len(model) > 2)
        try:
            with sigstack.kept(), torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the tracer's notes on shape checks that hold for an encoder
                graph = openvino.convert_model(head, example_input={k: torch.from_numpy(v) for k, v in example.items()})
                self.compiled = openvino.Core().compile_model(graph, "CPU", {
                    "INFERENCE_PRECISION_HINT": HINTS[precision], "PERFORMANCE_HINT": "LATENCY"})
        except Exception as exc:  # conversion raises many kinds; all mean "this model does not convert"
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise BenchError(f"-embed-backend openvino: cannot convert {name} ({why}); use -embed-backend torch") \
                from None

    def _features(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The model's own tokenisation (sentence-transformers ``preprocess``), as int64 arrays."""
        features = self.model.preprocess(texts)
        names = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in features]
        return {k: features[k].numpy() for k in names}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")  # longest first, as SentenceTransformer.encode
        out: np.ndarray | None = None
        for start in range(0, len(texts), self.batch_size):
            index = order[start:start + self.batch_size]
            features = self._features([texts[i] for i in index])
            with sigstack.kept():
                vectors = self.compiled(features)[0]
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[index] = vectors
        assert out is not None
        return out
