"""Declaring CLI flags: each spelled Go-style (``-name``) and GNU-style (``--name``), defaults shown in --help.

Run modes declare their own flags next to their code (``FLAGS`` in each ``modes`` module); the CLI collects them.
"""

from __future__ import annotations

import click


def flag(name: str, *dest: str, **kwargs):
    """A click option spelled both ``-name`` and ``--name`` (optional python name ``dest``)."""
    kwargs.setdefault("show_default", True)
    return click.option(f"-{name}", f"--{name}", *dest, **kwargs)
