"""Where a sentence-transformers model lives, and what its files say, found without importing torch.

``locate(spec)``: ``spec`` is a local folder, or a Hugging Face model id (``NAME`` or ``ORG/NAME``). A folder that
exists is used as it is. A spec that can only be a path (absolute, ``./``, ``../``, ``~``, or more than one ``/``)
and names no folder is refused as "no such model folder". A model id is looked up in the local Hugging Face cache
(``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else
``~/.cache/huggingface/hub``) and its snapshot folder used when present; when it is absent and the hub is offline
(``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` set to 1/on/yes/true) that is a one-line BenchError saying how to
supply the model; online, sentence-transformers downloads it.

``token_limit(folder)``: the most tokens the model takes, from its files: ``max_position_embeddings`` in the
transformer's ``config.json`` (less ``pad_token_id + 1`` for the RoBERTa family, whose positions start after the
padding index) and ``model_max_length`` in ``tokenizer_config.json`` (ignored when >= 1e6, transformers' "unknown"),
the smaller of the two. ``pooling_dims(folder)``: ``word_embedding_dimension`` in ``1_Pooling/config.json``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memini_bench.errors import BenchError

HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
ROBERTA_FAMILY = frozenset({"roberta", "xlm-roberta", "camembert", "longformer", "mpnet", "data2vec-text"})
_UNKNOWN_LENGTH = 1_000_000


@dataclass(frozen=True)
class ModelSource:
    """``spec`` as named (it keys the cache identity); ``folder``: where the files are, or None when the model
    must be downloaded from the hub by name."""

    spec: str
    folder: Path | None


@dataclass(frozen=True)
class TokenLimit:
    tokens: int
    source: str  # which file and field said so


def hub_offline() -> bool:
    return any(os.environ.get(name, "").strip().lower() in {"1", "on", "yes", "true"} for name in OFFLINE_VARS)


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache, by huggingface_hub's own precedence of variables (read now, not at import)."""
    explicit = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def _path_only(spec: str) -> bool:
    """Whether ``spec`` cannot be a hub model id, only a path."""
    return (spec.startswith(("/", ".", "~")) or "\\" in spec or os.sep != "/" and os.sep in spec
            or HUB_ID.fullmatch(spec) is None)


def cached_snapshot(model_id: str, cache_dir: Path | None = None) -> Path | None:
    """The local snapshot folder of hub model ``model_id`` (its ``main`` revision), or None when not cached."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        return None
    try:
        folder = snapshot_download(model_id, cache_dir=str(cache_dir or hub_cache_dir()), local_files_only=True)
    except Exception:  # the hub library raises several kinds; every one means "not in the cache"
        return None
    return Path(folder) if Path(folder).is_dir() else None


def locate(spec: str, *, flag: str, hint: str = "") -> ModelSource:
    """Where model ``spec`` is (module docstring); ``flag`` names the option in messages, ``hint`` is added to the
    not-available-offline message."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return ModelSource(spec, path)
    if path.exists():
        raise BenchError(f"{flag}: {spec} is a file, not a model folder; pass the folder that holds the "
                         "sentence-transformers model (modules.json, config.json)")
    if _path_only(spec):
        raise BenchError(f"{flag}: no such model folder {spec}; pass st:PATH to a folder holding a "
                         "sentence-transformers model, or st:ORG/NAME for a Hugging Face model")
    snapshot = cached_snapshot(spec)
    if snapshot is not None:
        return ModelSource(spec, snapshot)
    if hub_offline():
        raise BenchError(f"{flag}: {spec} is no local folder, and the Hugging Face model {spec} is not in the local "
                         f"cache ({hub_cache_dir()}) while the hub is offline (HF_HUB_OFFLINE=1); download it where "
                         f"the hub is reachable (huggingface-cli download {spec}) or pass st:PATH to a model "
                         f"folder{hint}")
    return ModelSource(spec, None)


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _transformer_folders(folder: Path) -> list[Path]:
    """The folders of the model's transformer module(s) (``modules.json``), else the folder itself."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        paths = [folder / m.get("path", "") for m in modules if str(m.get("type", "")).endswith("Transformer")]
    except (OSError, ValueError, AttributeError, TypeError):
        paths = []
    return paths or [folder]


def token_limit(folder: Path) -> TokenLimit | None:
    """The model's token limit from its files (module docstring), None when they do not say."""
    limits: list[TokenLimit] = []
    for where in _transformer_folders(folder):
        config = _json(where / "config.json")
        positions = _positive_int(config.get("max_position_embeddings"))
        if positions:
            if config.get("model_type") in ROBERTA_FAMILY:
                positions -= (_positive_int(config.get("pad_token_id")) or 1) + 1
            limits.append(TokenLimit(positions, "max_position_embeddings in config.json"))
        length = _positive_int(_json(where / "tokenizer_config.json").get("model_max_length"))
        if length and length < _UNKNOWN_LENGTH:
            limits.append(TokenLimit(length, "model_max_length in tokenizer_config.json"))
    return min(limits, key=lambda limit: limit.tokens) if limits else None


def default_max_tokens(folder: Path) -> int | None:
    """The max sequence length sentence-transformers gives the model when none is asked for, when its files say
    (``max_seq_length`` in the transformer module's ``sentence_bert_config.json``); None otherwise."""
    for where in _transformer_folders(folder):
        length = _positive_int(_json(where / "sentence_bert_config.json").get("max_seq_length"))
        if length:
            return length
    return None


def pooling_dims(folder: Path) -> int | None:
    """The embedding size written in a model folder (``1_Pooling/config.json``), without loading the model."""
    return _positive_int(_json(folder / "1_Pooling" / "config.json").get("word_embedding_dimension"))
