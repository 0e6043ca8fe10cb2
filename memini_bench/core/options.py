"""The flags every mode reads: what to load (suite, data), how to prepare it (holdout, limit) and which K.

The other concerns keep their typed options beside their code (``loaders.LoadOptions``, ``systems.HybridConfig``,
``systems.lineup.LineupOptions``, ``embed.factory.EmbedSettings``, ``results.write.OutputOptions``,
``executors.ExecutorOptions``); ``modes.options.RunOptions`` holds one of each for a run.
"""

from __future__ import annotations

from dataclasses import dataclass

import click

from memini_bench.core.dataset import HOLDOUT_MODES
from memini_bench.core.settings import CommaList, Int, setting


@dataclass(frozen=True)
class CoreOptions:
    """What to load, how to prepare it, which K."""

    suite: str = setting("suite", "sample", "Data set format to load (see -list for every suite, plugins included).",
                         group="core")
    data: str = setting("data", "", "Data set path (required for every suite except sample).", group="core")
    k: tuple[int, ...] = setting("k", (5,), "Comma-separated K list; recall runs once at the largest K.",
                                 type=CommaList(Int(min=1, max=100), sort=True), group="core")
    limit: int = setting("limit", 0, "Even subsample of N questions (0 = all); results get a -limitN suffix.",
                         type=Int(min=0), group="data")
    holdout: str = setting("holdout", "all", "Question split: held = 0-based index i % 10 == 9, tune = the rest.",
                           type=click.Choice(HOLDOUT_MODES), group="data")

    @property
    def depth(self) -> int:
        """The recall depth: the largest K (memini recalls once at max K and scores every K from that list)."""
        return max(self.k)
