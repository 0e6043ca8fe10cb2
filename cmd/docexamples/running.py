"""Running an example: the processes it runs (``command_lines``) and the files it expects (``plugin_files``)."""


from __future__ import annotations

import re
from pathlib import Path

from docexamples.outputs import make_commands
from docexamples.reading import ROOT, Example, ExampleError, runs_ours


def command_lines(ex: Example, python: str, root: Path = ROOT) -> list[list[str]]:
    """The processes ``ex`` runs, with ``python`` for this project's interpreter: every spelling of memini-bench is
    ``python -m memini_bench`` (a fresh clone has no .venv; PYTHONPATH picks the package), a make target is its
    recipe from the Makefile (its commands of this project; ``make`` itself would rebuild the venv)."""
    kind, name, args = ex.program
    if kind == "memini-bench":
        return [[python, "-m", "memini_bench", *args]]
    if kind == "module":
        return [[python, "-m", name, *args]]
    if kind == "script":
        return [[python, name, *args]]
    if kind == "make":
        return [line for words in make_commands(name, args, root) if runs_ours(words)
                for line in command_lines(Example(ex.page, ex.line, tuple(words)), python, root)]
    raise ExampleError(f"{ex.text}: not a command of this project")


def plugin_files(ex: Example, root: Path = ROOT) -> dict[str, str]:
    """The files an example expects the reader to have saved: for ``-system ./NAME.py:attr``, the last ```python
    block above the example on its page (the README's "measure your own memory system" file)."""
    out = {}
    for word in ex.argv:
        m = re.fullmatch(r"(?:\./)?([\w-]+\.py):\w+", word)
        if m:
            above = "\n".join((root / ex.page).read_text(encoding="utf-8").splitlines()[:ex.line])
            blocks = re.findall(r"^```python\n(.*?)^```", above, re.S | re.M)
            if not blocks:
                raise ExampleError(f"{ex.where}: {word} names a file no ```python block above gives")
            out[m.group(1)] = blocks[-1]
    return out
