"""The run's options: one frozen dataclass per concern, each beside its code, and each mode's own.

``RunOptions`` holds ``core`` (``core.options.CoreOptions``: suite, data, K list, holdout, limit), ``lineup``
(``systems.lineup.LineupOptions``: which systems), ``load`` (``loaders.LoadOptions``), ``hybrid``
(``systems.config.HybridConfig``), ``embed`` (``embed.factory.EmbedSettings``), ``output``
(``results.write.OutputOptions``), ``executor`` (``executors.ExecutorOptions``), ``reference``
(``systems.reference_settings.ReferenceSettings``, the reference system's ``-ref-*`` settings), ``guard``
(``evaluation.hits.RunGuardOptions``: -leaks, -traceback, -recall-timeout, -quiet) and each mode's own options
(``opts.mode(RerankOptions)``). A lower layer receives only its own concern (``opts.hybrid``, ``opts.embed``...),
never the whole set. ``given`` names the flags the user set explicitly; the dispatcher refuses a given flag that
the selected mode (or suite) does not use, so no flag is ever silently dropped.

``RunOptions.build(values, given)`` makes the whole set from parsed values keyed by field name (the CLI's way, and
the tests'); every value is checked as the CLI checks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from memini_bench.core import settings
from memini_bench.core.options import CoreOptions
from memini_bench.embed.settings import EmbedSettings
from memini_bench.evaluation.hits import RunGuardOptions
from memini_bench.executors import ExecutorOptions
from memini_bench.loaders import LoadOptions
from memini_bench.results.options import OutputOptions
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.lineup import LineupOptions, context_for
from memini_bench.systems.reference_settings import ReferenceSettings

if TYPE_CHECKING:  # the options stay light: building the CLI's flags imports no embedder and no results code
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.results.identity import RunSettings
    from memini_bench.systems.context import SystemContext

T = TypeVar("T")
CONCERNS = (CoreOptions, LineupOptions, LoadOptions, HybridConfig, EmbedSettings, OutputOptions, ExecutorOptions,
            ReferenceSettings, RunGuardOptions)


@dataclass(frozen=True)
class RunOptions:
    """Every option of one run (see the module docstring)."""

    core: CoreOptions = field(default_factory=CoreOptions)
    lineup: LineupOptions = field(default_factory=LineupOptions)
    load: LoadOptions = field(default_factory=LoadOptions)
    hybrid: HybridConfig = field(default_factory=HybridConfig)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    output: OutputOptions = field(default_factory=OutputOptions)
    executor: ExecutorOptions = field(default_factory=ExecutorOptions)
    reference: ReferenceSettings = field(default_factory=ReferenceSettings)
    guard: RunGuardOptions = field(default_factory=RunGuardOptions)
    modes: Mapping[type, object] = field(default_factory=dict)
    given: frozenset[str] = frozenset()

    @staticmethod
    def concern_classes() -> list[type]:
        return list(CONCERNS)

    @classmethod
    def build(cls, values: Mapping[str, object] | None = None, given: frozenset[str] = frozenset()) -> RunOptions:
        """Options from values keyed by field name (missing -> default), checked as the CLI checks them."""
        from memini_bench.modes import mode_option_classes

        values = dict(values or {})
        if values.get("system") is None:
            values.pop("system", None)
        concerns = [settings.build(c, values) for c in CONCERNS]
        modes = {c: settings.build(c, values) for c in mode_option_classes()}
        return cls(*concerns, modes=modes, given=given)

    def mode(self, cls: type[T]) -> T:
        """This run's options of one mode (its defaults when the mode did not register them)."""
        value = self.modes.get(cls)
        return value if value is not None else cls()  # type: ignore[return-value]

    def context(self, make_encoder: Callable[[], TextEncoder | None] | None = None, label: str = "") -> SystemContext:
        """A system-factory context with this run's hybrid and embedding settings (``systems.lineup.context_for``);
        its encoder is the run's (embedded where ``-executor`` says) unless ``make_encoder`` is given."""
        return context_for(self.hybrid, self.embed, self.executor, make_encoder, label, reference=self.reference)

    def fixed_context(self, encoder: TextEncoder | None) -> SystemContext:
        """A context whose encoder is ``encoder`` (already built by a mode that embeds itself)."""
        ctx = self.context(lambda: encoder)
        _ = ctx.encoder
        return ctx

    def settings(self, embedder: str = "", systems: Sequence[str] | None = None) -> RunSettings:
        """What a results file's identity and name are made of (``results.identity``), each part of the run
        contributing its own: the embedder (``embedder``: as resolved, "" for a run that embeds nothing), the
        lineup (``systems``: the names run; None for a mode that runs no lineup) and the loader."""
        from memini_bench.embed.settings import identity_part as embed_part
        from memini_bench.loaders import identity_part as load_part
        from memini_bench.results.identity import RunSettings
        from memini_bench.systems.lineup import identity_parts

        hybrid, *lineup = identity_parts(self.hybrid, self.reference, systems)  # the name tokens' order: embedder,
        parts = (embed_part(self.embed, embedder), hybrid, load_part(self.load), *lineup)  # hybrid, loader, lineup
        return RunSettings(self.core, parts, self.output.name)

    # Shorthands for the core flags every mode reads.
    @property
    def suite(self) -> str:
        return self.core.suite

    @property
    def data(self) -> str:
        return self.core.data

    @property
    def k(self) -> tuple[int, ...]:
        return self.core.k

    @property
    def depth(self) -> int:
        """The recall depth: the largest K (memini recalls once at max K and scores every K from that list)."""
        return self.core.depth
