"""The run's options: the core flags here, each concern's typed options beside its code.

``RunOptions`` holds the core flags (suite, data, K list, preparation, system choice) and one frozen dataclass per
concern: ``load`` (``loaders.LoadOptions``), ``hybrid`` (``systems.HybridConfig``), ``reference``
(``systems.reference_settings.ReferenceSettings``), ``embed``
(``embed.factory.EmbedSettings``), ``output`` (``report.OutputOptions``), ``executor``
(``executors.ExecutorOptions``) and each mode's own options
(``opts.mode(RerankOptions)``). ``given`` names the flags the user set explicitly; the dispatcher refuses a given
flag that the selected mode (or suite) does not use, so no flag is ever silently dropped.

``RunOptions.build(values, given)`` makes the whole set from parsed values keyed by field name (the CLI's way, and
the tests'); every value is checked as the CLI checks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import click

from memini_bench.core import settings
from memini_bench.core.settings import CommaList, Int, setting

T = TypeVar("T")
HOLDOUTS = ("all", "tune", "held")


@dataclass(frozen=True)
class CoreOptions:
    """The flags every mode reads: what to load, how to prepare it, which systems, which K."""

    suite: str = setting("suite", "sample", "Data set format to load (see -list for every suite, plugins included).")
    data: str = setting("data", "", "Data set path (required for every suite except sample).")
    k: tuple[int, ...] = setting("k", (5,), "Comma-separated K list; recall runs once at the largest K.",
                                 type=CommaList(Int(min=1, max=100), sort=True))
    limit: int = setting("limit", 0, "Even subsample of N questions (0 = all); results get a -limitN suffix.",
                         type=Int(min=0))
    holdout: str = setting("holdout", "all", "Question split: held = 0-based index i % 10 == 9, tune = the rest.",
                           type=click.Choice(HOLDOUTS))
    systems: tuple[str, ...] = setting("systems", (), "Comma-separated systems to run: built-in or registered names "
                                       "(see -list) or module:attr factories; default memini's hybrid, vector, "
                                       "keyword.", type=CommaList(allow_empty=True))
    system: tuple[str, ...] = setting("system", (), "Add a system beside the default ones: a registered name or a "
                                      "module:attr factory (repeatable, or comma-separated).", multiple=True)
    rewrite: bool = setting("rewrite", False, "Run memini-hybrid-rewrite (LLM query expansion through MEMINI_LLM_*) "
                            "in place of memini-hybrid (memini's -rewrite).")


@dataclass(frozen=True)
class RunOptions:
    """Every option of one run (see the module docstring)."""

    core: CoreOptions = field(default_factory=CoreOptions)
    load: object = None
    hybrid: object = None
    embed: object = None
    output: object = None
    executor: object = None
    reference: object = None
    modes: Mapping[type, object] = field(default_factory=dict)
    given: frozenset[str] = frozenset()

    @staticmethod
    def concern_classes() -> list[type]:
        from memini_bench.embed.factory import EmbedSettings
        from memini_bench.executors import ExecutorOptions
        from memini_bench.loaders import LoadOptions
        from memini_bench.results.write import OutputOptions
        from memini_bench.systems.memini import HybridConfig
        from memini_bench.systems.reference_settings import ReferenceSettings

        return [CoreOptions, LoadOptions, HybridConfig, EmbedSettings, OutputOptions, ExecutorOptions,
                ReferenceSettings]

    @classmethod
    def build(cls, values: Mapping[str, object] | None = None, given: frozenset[str] = frozenset()) -> RunOptions:
        """Options from values keyed by field name (missing -> default), checked as the CLI checks them."""
        from memini_bench.modes import mode_option_classes

        values = dict(values or {})
        if values.get("system") is None:
            values.pop("system", None)
        elif isinstance(values.get("system"), tuple | list):  # -system is repeatable, each value a comma list
            values["system"] = tuple(s.strip() for v in values["system"] for s in str(v).split(",") if s.strip())
        core, load, hybrid, embed, output, executor, reference = (settings.build(c, values)
                                                                   for c in cls.concern_classes())
        modes = {c: settings.build(c, values) for c in mode_option_classes()}
        return cls(core=core, load=load, hybrid=hybrid, embed=embed, output=output, executor=executor,
                   reference=reference, modes=modes,
                   given=given)

    def mode(self, cls: type[T]) -> T:
        """This run's options of one mode (its defaults when the mode did not register them)."""
        value = self.modes.get(cls)
        return value if value is not None else cls()  # type: ignore[return-value]

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
        return max(self.core.k)
