"""Turning names into systems: the one place a name becomes a System object.

The names come from ``-systems`` (default: memini's hybrid, vector, keyword) followed by every ``-system``; each is
a registered name or alias (``registry.SYSTEMS``), or ``module:attr``. Each factory gets the same
``SystemContext`` (the hybrid and embedding settings, the lazily built shared encoder, a per-run store), so
memini's three share one backend and every system reuses one set of cached vectors (embedded where ``-executor``
says: ``executors.run_encoder``). A factory may return several systems.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memini_bench.core import hooks
from memini_bench.core.contract import System
from memini_bench.core.registry import SYSTEMS
from memini_bench.core.settings import CommaList, IdentityPart, setting, setting_tokens
from memini_bench.embed.settings import EmbedSettings
from memini_bench.errors import BenchError
from memini_bench.executors import ExecutorOptions, run_encoder
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.context import SystemContext
from memini_bench.systems.reference_settings import ReferenceSettings

if TYPE_CHECKING:
    from memini_bench.embed.encoder import TextEncoder

DEFAULT_SYSTEMS = ("memini-hybrid", "memini-vector", "memini-keyword")
REWRITE = {"memini-hybrid": "memini-hybrid-rewrite", "hybrid": "memini-hybrid-rewrite"}


@dataclass(frozen=True)
class LineupOptions:
    """Which systems a run measures."""

    GROUP = "systems"

    systems: tuple[str, ...] = setting("systems", (), "Comma-separated systems to run: built-in or registered names "
                                       "(see -list) or module:attr factories; default memini's hybrid, vector, "
                                       "keyword.", type=CommaList(allow_empty=True))
    system: tuple[str, ...] = setting("system", (), "Add a system beside the default ones: a registered name or a "
                                      "module:attr factory (repeatable, or comma-separated).", multiple=True)
    rewrite: bool = setting("rewrite", False, "Run memini-hybrid-rewrite (LLM query expansion through MEMINI_LLM_*) "
                            "in place of memini-hybrid (memini's -rewrite).")

    def __post_init__(self) -> None:
        if isinstance(self.system, list | tuple):  # -system is repeatable, each value a comma list
            names = tuple(s.strip() for v in self.system for s in str(v).split(",") if s.strip())
            object.__setattr__(self, "system", names)


def wanted_names(lineup: LineupOptions, default: Sequence[str] = DEFAULT_SYSTEMS) -> list[str]:
    """``-systems`` (or ``default``) then ``-system``, each once, in order; with ``-rewrite`` memini-hybrid becomes
    memini-hybrid-rewrite (memini renames its hybrid the same way)."""
    names = [*(lineup.systems or default), *lineup.system]
    if lineup.rewrite:
        if not any(n in REWRITE for n in names):
            raise BenchError("-rewrite: memini-hybrid is not among the systems run; add it to -systems or use "
                             "-system memini-hybrid-rewrite")
        names = [REWRITE.get(n, n) for n in names]
    return list(dict.fromkeys(names))


def context_for(hybrid: HybridConfig | None = None, embed: EmbedSettings | None = None,
                executor: ExecutorOptions | None = None, make_encoder: Callable[[], TextEncoder | None] | None = None,
                label: str = "", *, reference: ReferenceSettings | None = None) -> SystemContext:
    """A context for system factories; its encoder (when ``make_encoder`` is not given) is the run's
    ``executors.run_encoder(embed, executor)``, built on first use."""
    hybrid, embed = hybrid or HybridConfig(), embed or EmbedSettings()
    return SystemContext(hybrid, embed, reference or ReferenceSettings(),
                         make_encoder or (lambda: run_encoder(embed, executor)), label)


def build_systems(names: Sequence[str], ctx: SystemContext, flags: Mapping[str, str] | None = None) -> list[System]:
    """The systems ``names`` stand for, in order (a factory returning several keeps their order). ``flags`` maps a
    name to the flag it came from (``-system`` or ``-systems``, the default), so an error names what was typed."""
    systems: list[System] = []
    for name in names:
        flag = (flags or {}).get(name, "-systems")
        systems += made_by(SYSTEMS.get(name, flag=flag), ctx, name, flag)
    return distinct(systems)


def made_by(factory: object, ctx: SystemContext, name: str, flag: str) -> list[System]:
    """The systems ``factory(ctx)`` returns (one, or a list), each checked against the System contract; ``name``
    and ``flag`` say in an error where the factory came from."""
    if not callable(factory):
        raise BenchError(f"{flag} {name}: not a factory (a callable taking a SystemContext)")
    made = hooks.call(name, "factory", factory, ctx)
    made = made if isinstance(made, list | tuple) else [made]
    if not made:
        raise BenchError(f"{flag} {name}: its factory returned no system (an empty list); return a System or "
                         "a list of them")
    for system in made:
        if not hooks.call(name, "factory", isinstance, system, System):
            raise BenchError(f"{flag} {name}: its factory returned {type(system).__name__}, which lacks the "
                             "System contract (name, ingest, recall); see memini_bench.core.contract")
        if not isinstance(system.name, str) or not system.name.strip():
            raise BenchError(f"{flag} {name}: its factory returned a system named {system.name!r}; a name is a "
                             "non-empty string")
    return list(made)


def distinct(systems: list[System]) -> list[System]:
    """``systems``, refused when two share a name (their results would be one row)."""
    seen: set[str] = set()
    for s in systems:
        if s.name in seen:
            raise BenchError(f"-systems: two systems are named {s.name!r}; give each a distinct name")
        seen.add(s.name)
    return systems


def systems_for(lineup: LineupOptions, ctx: SystemContext, default: Sequence[str] = DEFAULT_SYSTEMS) -> list[System]:
    """The run's systems (``wanted_names``), on one context."""
    flags = {n: "-system" for n in lineup.system if n not in lineup.systems}
    return build_systems(wanted_names(lineup, default), ctx, flags)


def stage_timings(systems: Sequence[System]) -> dict[str, float]:
    """The first system's shared stage times in ms (``stage_timings()``: memini's systems report their backend's
    keyword index, embedding and model load), {} when it reports none; a results file records them."""
    report = getattr(systems[0], "stage_timings", None) if systems else None
    return dict(report()) if callable(report) else {}


def identity_parts(hybrid: HybridConfig, reference: ReferenceSettings, systems: Sequence[str] | None,
                   default_systems: Sequence[str] = DEFAULT_SYSTEMS) -> tuple[IdentityPart, ...]:
    """The lineup's share of a results identity: the hybrid's settings (``hybrid``, with their name tokens), the
    reference system's (``reference``: recorded where it runs or they differ from the defaults, so the identity of
    every run without it stays what it was), and the ``sys-`` token naming a lineup other than the default one
    (``systems`` None: a mode that runs no lineup)."""
    parts = [IdentityPart({"hybrid": hybrid.as_dict()}, setting_tokens(hybrid))]
    if (systems is not None and "reference" in systems) or reference != ReferenceSettings():
        parts.append(IdentityPart({"reference": dataclasses.asdict(reference)}))
    if systems is not None and list(systems) != list(default_systems):
        parts.append(IdentityPart(tokens=("sys-" + "+".join(n.removeprefix("memini-") for n in systems),)))
    return tuple(parts)
