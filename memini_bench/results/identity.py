"""Results with an identity: a results file is named after every setting that changes its numbers.

``identity(settings, ...)`` is the dict of those settings (the embedder, every hybrid setting, the loader settings,
the holdout and limit, the systems run, and the mode's own settings); it is recorded in the results config. The
file stem is the data set name (which already carries the suite's variant, holdout and limit) followed by one short
token per setting that differs from its default, in a fixed order (``locomo-fusion-1``,
``locomo-emb-hash-tboost0.4``), or by ``-name LABEL``. A setting's token is declared on the setting itself
(``setting(..., token="tboost")``), so a new setting names its files without a side list here. Before writing,
an existing file of the same name is read: when its recorded identity differs, the run stops with a one-line
error instead of overwriting it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from memini_bench.core.dataset import MAX_NAME_BYTES, file_safe_name
from memini_bench.core.options import CoreOptions
from memini_bench.core.settings import flag_fields
from memini_bench.embed.factory import EmbedSettings
from memini_bench.errors import BenchError
from memini_bench.loaders import LoadOptions
from memini_bench.loaders import identity_of as load_identity
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.reference_settings import ReferenceSettings


@dataclass(frozen=True)
class RunSettings:
    """The settings a results file's identity and name are made of (each a concern's typed options)."""

    core: CoreOptions = field(default_factory=CoreOptions)
    hybrid: HybridConfig = field(default_factory=HybridConfig)
    load: LoadOptions = field(default_factory=LoadOptions)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    name: str = ""  # -name LABEL
    reference: ReferenceSettings = field(default_factory=ReferenceSettings)


def _value(v: object) -> str:
    if isinstance(v, bool):
        return ""
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _tokens(obj: object) -> list[str]:
    """One token per field of ``obj`` that declares one (``setting(..., token=...)``) and differs from its
    default, in field order."""
    defaults = type(obj)()
    return [f.metadata["token"] + _value(getattr(obj, f.name)) for f in flag_fields(type(obj))
            if f.metadata.get("token") is not None and getattr(obj, f.name) != getattr(defaults, f.name)]


def identity(s: RunSettings, *, systems: list[str], embedder: str = "", mode: str = "compare",
             mode_settings: dict | None = None) -> dict:
    """Every setting that changes a results file's numbers (recorded in its config; compared before overwrite)."""
    return {"mode": mode, "suite": s.core.suite, "holdout": s.core.holdout, "limit": s.core.limit,
            "embedder": embedder, "max_tokens": s.embed.max_tokens, "dims": s.embed.dims if embedder == "hash"
            else 0, "hybrid": s.hybrid.as_dict(), "load": load_identity(s.load),
            "systems": list(systems), "mode_settings": mode_settings or {}, **_embed_variant(s.embed),
            **_reference_variant(s.reference, systems)}


def _reference_variant(ref: ReferenceSettings, systems: list[str]) -> dict[str, dict]:
    """The reference system's settings, recorded where it runs or they differ from the defaults (so the identity
    of every run without it stays what it was)."""
    if "reference" not in systems and ref == ReferenceSettings():
        return {}
    return {"reference": dataclasses.asdict(ref)}


def _embed_variant(embed: EmbedSettings) -> dict[str, str]:
    """The embedding settings that change vectors beyond the embedder's name (those with a token), recorded only
    when not the default, so the identity and name of an fp32 torch run stay what they were."""
    defaults = EmbedSettings()
    return {f.name: getattr(embed, f.name) for f in flag_fields(EmbedSettings)
            if f.metadata.get("token") is not None and getattr(embed, f.name) != getattr(defaults, f.name)}


def stem(s: RunSettings, dataset: str, *, embedder: str = "", systems: list[str] | None = None,
         default_systems: list[str] | None = None, suffix: str = "", extra_tokens: tuple[str, ...] = ()) -> str:
    """``<dataset>[<suffix>]`` then ``-<LABEL>`` when ``-name`` is given, else one token per non-default setting
    (``extra_tokens``: the mode's own non-default settings, already spelled)."""
    base = safe_name(dataset) + suffix
    if s.name:
        return f"{base}-{safe_name(s.name)}"
    tokens = []
    if embedder and embedder != "minilm":
        tokens.append("emb-" + embedder.replace(":", "-").replace("/", "-"))
    if s.embed.max_tokens:
        tokens.append(f"maxtok{s.embed.max_tokens}")
    if embedder == "hash" and s.embed.dims != 256:
        tokens.append(f"dims{s.embed.dims}")
    tokens += _tokens(s.embed) + _tokens(s.hybrid) + _tokens(s.load)
    if systems is not None and default_systems is not None and systems != default_systems:
        tokens.append("sys-" + "+".join(n.removeprefix("memini-") for n in systems))
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
