"""``cli_options``: RunOptions the way the CLI builds them, for tests that call a mode's helpers directly."""

from __future__ import annotations

import dataclasses

from memini_bench.options import RunOptions


def cli_options(**fields: object) -> RunOptions:
    """Every mode flag in ``extra`` at its CLI default (the modes read ``opts.extra[key]`` directly, as the CLI
    always fills it), then ``fields`` (RunOptions fields or extra keys) on top."""
    from memini_bench.cli import command

    core = {f.name for f in dataclasses.fields(RunOptions)}
    extra = {p.name: p.default for p in command.params
             if p.expose_value and p.name not in core and p.name not in ("k_list", "systems")}
    extra.update({key: value for key, value in fields.items() if key not in core})
    return RunOptions(extra=extra, **{key: value for key, value in fields.items() if key in core})
