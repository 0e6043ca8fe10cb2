"""A run's typed plan state (``RunState``), shared by the normal run (``modes.run_systems``) and the runs over
time (``modes.temporal``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memini_bench.core.contract import System
from memini_bench.modes.base import PlanState


@dataclass
class RunState(PlanState):
    """A run's plan state: the systems built, the category tables asked (``-categories``; None = the default),
    the paired tests' reference system, the mode's identity settings (``-poison``) and the results file's name
    (the API's ``Report.file_name``, also when nothing is written)."""

    systems: list[System] = field(default_factory=list)
    tables: list[str] | None = None
    reference: str = ""
    mode_settings: dict | None = None
    file_name: str = ""
