"""Results with an identity: a results file is named after every setting that changes its numbers.

``identity(opts, ...)`` is the dict of those settings (the embedder, every hybrid setting, the loader settings, the
holdout and limit, the systems run, and the mode's own settings); it is recorded in the results config. The file
stem is the data set name (which already carries the suite's variant, holdout and limit) followed by one short
token per setting that differs from its default, in a fixed order (``locomo-fusion-1``,
``locomo-emb-hash-tboost0.4``), or by ``-name LABEL``. Before writing, an existing file of the same name is read:
when its recorded identity differs, the run stops with a one-line error instead of overwriting it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson

from memini_bench.core.dataset import MAX_NAME_BYTES, file_safe_name
from memini_bench.errors import BenchError
from memini_bench.loaders import identity_of as load_identity
from memini_bench.modes.options import RunOptions

# (field, short token) for HybridConfig and LoadOptions fields, in the order they appear in a stem.
HYBRID_TOKENS = (("fusion", "fusion"), ("pool", "pool"), ("pool_factor", "pf"), ("pool_floor", "pfloor"),
                 ("temporal_boost", "tboost"), ("temporal_extractor", "tx-"), ("semantic_reserve", "reserve"),
                 ("keyword_backend", "kw-"), ("reinforce", "reinforce"))
LOAD_TOKENS = (("abstention", "abs-"),)  # session-doc and the shared haystack are in the data set name
# EmbedSettings fields that change vectors beyond the embedder's name; recorded (and in the stem) only when not
# the default, so the identity and name of an fp32 torch run stay what they were.
EMBED_TOKENS = (("precision", ""), ("embed_backend", ""))


def _value(v: object) -> str:
    if isinstance(v, bool):
        return ""
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _tokens(obj: object, spec: tuple[tuple[str, str], ...]) -> list[str]:
    defaults = type(obj)()
    out = []
    for name, token in spec:
        value = getattr(obj, name)
        if value != getattr(defaults, name):
            out.append(token + _value(value))
    return out


def identity(opts: RunOptions, *, systems: list[str], embedder: str = "", mode: str = "compare",
             mode_settings: dict | None = None) -> dict:
    """Every setting that changes a results file's numbers (recorded in its config; compared before overwrite)."""
    return {"mode": mode, "suite": opts.suite, "holdout": opts.core.holdout, "limit": opts.core.limit,
            "embedder": embedder, "max_tokens": opts.embed.max_tokens, "dims": opts.embed.dims if embedder == "hash"
            else 0, "hybrid": dataclasses.asdict(opts.hybrid), "load": load_identity(opts.load),
            "systems": list(systems), "mode_settings": mode_settings or {}, **_embed_variant(opts)}


def _embed_variant(opts: RunOptions) -> dict[str, str]:
    defaults = type(opts.embed)()
    return {name: getattr(opts.embed, name) for name, _ in EMBED_TOKENS
            if getattr(opts.embed, name) != getattr(defaults, name)}


def stem(opts: RunOptions, dataset: str, *, embedder: str = "", systems: list[str] | None = None,
         default_systems: list[str] | None = None, suffix: str = "", extra_tokens: tuple[str, ...] = ()) -> str:
    """``<dataset>[<suffix>]`` then ``-<LABEL>`` when ``-name`` is given, else one token per non-default setting
    (``extra_tokens``: the mode's own non-default settings, already spelled)."""
    base = safe_name(dataset) + suffix
    if opts.output.name:
        return f"{base}-{safe_name(opts.output.name)}"
    tokens = []
    if embedder and embedder != "minilm":
        tokens.append("emb-" + embedder.replace(":", "-").replace("/", "-"))
    if opts.embed.max_tokens:
        tokens.append(f"maxtok{opts.embed.max_tokens}")
    if embedder == "hash" and opts.embed.dims != 256:
        tokens.append(f"dims{opts.embed.dims}")
    tokens += _tokens(opts.embed, EMBED_TOKENS) + _tokens(opts.hybrid, HYBRID_TOKENS) + _tokens(opts.load, LOAD_TOKENS)
    if systems is not None and default_systems is not None and systems != default_systems:
        tokens.append("sys-" + "+".join(s.removeprefix("memini-") for s in systems))
    tokens += extra_tokens
    return "-".join([base, *(safe_name(t) for t in tokens)])


def safe_name(text: str) -> str:
    """``text`` as one safe file-name component (``dataset.file_safe_name``: no path separators, no leading dots)."""
    return file_safe_name(text, MAX_NAME_BYTES)


def check_overwrite(path: Path, ident: dict) -> None:
    """Refuse to replace ``path`` when it holds a run whose recorded identity differs from ``ident``."""
    if not path.exists():
        return
    try:
        old = orjson.loads(path.read_bytes()).get("config", {}).get("identity")
    except (OSError, ValueError, AttributeError):
        old = None
    if old is not None and old != ident:
        differing = sorted(k for k in set(old) | set(ident) if old.get(k) != ident.get(k))
        raise BenchError(f"{path}: holds a run made with other settings ({', '.join(differing)}); give -name LABEL "
                         "or another -out so neither is lost")
