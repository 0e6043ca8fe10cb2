"""Every example command of the README and the docs pages: extracted, classified and parsed into what it writes.

``extract()`` reads README.md and docs/*.md: each line of a fenced shell block (```sh, ```bash, ```console,
```shell or an untagged fence) and each inline code span that runs a command of this project -- ``memini-bench``
(also ``.venv/bin/memini-bench`` and ``python -m memini_bench``), ``python -m memini_bench.<module>``, ``python -m
quality.<module>``, ``python cmd/<script>.py`` and ``make <target>`` -- with ``\\`` continuations joined, ``#``
comments and ``$`` prompts dropped and ``a && b`` split (``source .venv/bin/activate && memini-bench ...`` is the
``memini-bench`` command).

``classify(example)`` puts each in one class of ``CLASSES`` by the first matching rule of ``RULES`` (one table,
each rule with its reason); tests/docs/test_examples.py runs the ``run`` class in a fresh clone (and ``slow`` under
``-m slow``) and checks that ``git status --porcelain`` stays empty. ``destinations(example)`` parses a command
with the command's own click options (``memini_bench.cli.command`` and ``RunOptions.build``, the subcommands, the
``settings.command`` scripts, the Makefile's recipes) and returns every path it may write: a flag that does not
parse, or that the selected mode would refuse, is an ``ExampleError``.

Modules: ``reading`` (the examples), ``classes`` (their classes), ``outputs`` (what each writes), ``running``
(how each runs). ``python cmd/list_examples.py`` prints the table: page:line, class, the command.
"""

from docexamples.classes import CLASSES, RULES, classify
from docexamples.outputs import destinations, make_commands, make_destinations, makefile
from docexamples.reading import Example, ExampleError, extract, pages, runs_ours
from docexamples.running import command_lines, plugin_files

__all__ = ["CLASSES", "RULES", "Example", "ExampleError", "classify", "command_lines", "destinations", "extract",
           "make_commands", "make_destinations", "makefile", "pages", "plugin_files", "runs_ours"]
