"""``cli_options``: RunOptions the way the CLI builds them, for tests that call a mode's helpers directly."""

from __future__ import annotations

from memini_bench.modes.options import RunOptions


def cli_options(**fields: object) -> RunOptions:
    """Every flag at its CLI default, then ``fields`` (flag python names, e.g. ``pool_factor=3``) on top, checked as
    the CLI checks them."""
    return RunOptions.build(fields)
