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

``python -m tools.examples`` prints the table: page:line, class, the command.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import re
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL_FENCES = {"", "sh", "bash", "console", "shell"}
FENCE = re.compile(r"^\s*```\s*(\w*)\s*$")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PYTHON = re.compile(r"^(\.venv/bin/)?python3?$")
# A placeholder the reader replaces: an upper-case word (TOPIC, NAME, FILES, PATH, DIR, ARGS...) or ...
PLACEHOLDER = re.compile(r"\b(TOPIC|NAME|FILES|PATH|DIR|URL|KEY|N)\b|\.\.\.|my_module")


class ExampleError(Exception):
    """A documented command that does not parse, or that its mode would refuse."""


@dataclasses.dataclass(frozen=True)
class Example:
    """One documented command: where it is written and its words (comment and prompt dropped)."""

    page: str
    line: int
    argv: tuple[str, ...]
    inline: bool = False

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def text(self) -> str:
        return shlex.join(self.argv)

    @property
    def program(self) -> tuple[str, str, tuple[str, ...]]:
        """(kind, name, arguments): ("memini-bench", "", args), ("module", "quality.scoreboard", args), ("script",
        "cmd/speed.py", args) or ("make", "target", args)."""
        words = list(self.argv)
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            words.pop(0)  # VAR=value before the command
        if not words:
            return ("", "", ())
        head = words[0]
        if head.endswith("memini-bench"):
            return ("memini-bench", "", tuple(words[1:]))
        if PYTHON.match(head) and len(words) > 2 and words[1] == "-m":
            if words[2] == "memini_bench":
                return ("memini-bench", "", tuple(words[3:]))
            return ("module", words[2], tuple(words[3:]))
        if PYTHON.match(head) and len(words) > 1:
            return ("script", words[1], tuple(words[2:]))
        if head == "make":
            rest = [w for w in words[1:] if "=" not in w]
            return ("make", rest[0] if rest else "", tuple(w for w in words[1:] if "=" in w))
        return ("", head, tuple(words[1:]))


def runs_ours(argv: list[str]) -> bool:
    """Whether a command line runs a command of this project (see the module docstring)."""
    words = [w for w in argv if not re.fullmatch(r"[A-Z_]+=\S*", w)][:3]
    if not words:
        return False
    head = words[0]
    if head in ("memini-bench", ".venv/bin/memini-bench", "make"):
        return True
    if PYTHON.match(head) and len(words) > 1:
        return (words[1] == "-m" and len(words) > 2 and re.match(r"(memini_bench|quality)(\.|$)", words[2])
                is not None) or words[1].startswith("cmd/")
    return False


def _commands(line: str) -> Iterator[list[str]]:
    """The commands of one shell line: comment dropped, split at ``&&``, ``;`` and ``|``... (a ``|`` between
    alternatives in prose stays a word, so the placeholder rule sees it)."""
    line = re.sub(r"^\s*\$\s+", "", line)
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        words = line.split()
    part: list[str] = []
    for word in words:
        if word in ("&&", ";", "||"):
            yield part
            part = []
        else:
            part.append(word)
    yield part


def _page_examples(path: Path, name: str) -> Iterator[Example]:
    lines = path.read_text(encoding="utf-8").splitlines()
    fence: str | None = None
    pending, start = "", 0
    for n, raw in enumerate(lines, 1):
        m = FENCE.match(raw)
        if m:
            fence = m.group(1) if fence is None else None
            continue
        if fence is None:
            for span in CODE_SPAN.findall(raw):
                for words in _commands(span):
                    if runs_ours(words):
                        yield Example(name, n, tuple(words), inline=True)
            continue
        if fence not in SHELL_FENCES:
            continue
        if not pending:
            start = n
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line, pending = pending + raw, ""
        for words in _commands(line):
            if runs_ours(words):
                yield Example(name, start, tuple(words))


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def extract(root: Path = ROOT) -> list[Example]:
    """Every example command of the README and the docs pages, in page order."""
    return [ex for page in pages(root) for ex in _page_examples(page, str(page.relative_to(root)))]


# --- classification ------------------------------------------------------------------------------------------------

#: Every class, with why an example of it is (or is not) run by tests/docs/test_examples.py.
CLASSES: dict[str, str] = {
    "run": "runnable here offline in seconds: run in a fresh clone, then git status must be empty",
    "slow": "runnable here offline, a minute or more (MiniLM over a full set): run like `run` under -m slow",
    "long": "a measurement script of many minutes: parsed and its destinations checked, not run",
    "maintainer": "regenerates committed files by design (results/, the generated README and docs blocks, "
                  "docs/report-leaderboard.png): make results and its kin; parsed and checked, not run",
    "toolchain": "builds .venv (pip, network) or runs the test suite and linters themselves; they write only .venv/ "
                 "and tool caches, checked to be ignored",
    "llm": "needs an LLM endpoint (MEMINI_LLM_*): -qa, VetoBench -live, or the archives a -live run writes",
    "gpu": "needs a CUDA GPU",
    "network": "downloads a data set (memini-bench data fetch, a registry -data NAME not fetched here)",
    "absent": "reads a file that is neither in the repository nor in ../shared/data (LongMemEval-S's 500 questions, "
              "the user's prices.toml)",
    "placeholder": "a template, not a command: TOPIC, NAME, FILES, PATH, DIR, '...', 'a | b' alternatives",
    "mention": "prose naming a command (inline, no arguments beyond a subcommand: `memini-bench report`, a study's "
               "module in its heading), not an invocation",
}

MAINTAINER_MAKE = {"results", "results-beam", "speed", "scale", "ray-estimate", "quality", "report", "report-scale",
                   "reference-search", "reference-held"}
TOOLCHAIN_MAKE = {"install", "test", "test-all", "lint", "clean"}


def _args(ex: Example) -> tuple[str, ...]:
    return ex.program[2]


def _flag(ex: Example, *names: str) -> str | None:
    """The value of a flag (any of ``names``, Go- or GNU-style, ``-f v`` or ``-f=v``) in ``ex``; "" for a bare flag
    followed by another flag or nothing; None when absent."""
    args = list(_args(ex))
    spellings = {f"-{n}" for n in names} | {f"--{n}" for n in names}
    for i, word in enumerate(args):
        key, eq, value = word.partition("=")
        if key in spellings:
            if eq:
                return value
            return args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("-") else ""
    return None


def _mentions(ex: Example, pattern: str) -> bool:
    return re.search(pattern, " ".join(ex.argv)) is not None


def _minilm(ex: Example) -> bool:
    """Runs the default embedder (MiniLM here) or names it."""
    return _flag(ex, "embedder") in (None, "minilm", "auto")


#: (class, rule): the first rule an example matches decides its class (``classify``); the reason is the class's.
RULES: list[tuple[str, Callable[[Example], bool]]] = [
    ("mention", lambda ex: ex.inline and ex.program[0] in ("memini-bench", "module") and len(_args(ex)) <= (
        1 if _args(ex)[:1] in (("report",), ("data",)) else 0)),
    ("placeholder", lambda ex: _mentions(ex, r"(^|\s)\|(\s|$)") or PLACEHOLDER.search(" ".join(ex.argv)) is not None),
    ("maintainer", lambda ex: ex.program[0] == "make" and ex.program[1] in MAINTAINER_MAKE),
    ("gpu", lambda ex: ex.program[0] == "make" and ex.program[1] == "gpu" or _flag(ex, "device") == "cuda"),
    ("toolchain", lambda ex: ex.program[0] == "make" and ex.program[1] in TOOLCHAIN_MAKE),
    ("maintainer", lambda ex: ex.program[1] in ("cmd/results_table.py", "cmd/reference_select.py")
     or (_flag(ex, "out", "o") or "").rstrip("/").split("/")[0] in ("results", "docs")
     or (_flag(ex, "screenshot") or "").startswith("docs/")),
    ("llm", lambda ex: any(_flag(ex, f) is not None for f in ("qa", "live", "llm-rerank", "veto-summary"))
     and _flag(ex, "estimate") is None),
    ("network", lambda ex: ex.program[0] == "memini-bench" and _args(ex)[:2] == ("data", "fetch")
     or re.fullmatch(r"[\w-]+", _flag(ex, "data") or "/") is not None),
    ("absent", lambda ex: "longmemeval_s_cleaned.json" in ex.argv or _mentions(ex, r"prices\.toml")),
    ("long", lambda ex: ex.program[1] in ("cmd/speed.py", "cmd/ray_estimate.py", "cmd/scale.py",
                                          "cmd/report_scale.py")),
    ("slow", lambda ex: (_mentions(ex, r"\.\./shared/data/(locomo|longmemeval)") and _minilm(ex))
     or _mentions(ex, r"-suite vetobench") or ex.program[0] == "module"),
    ("run", lambda ex: True),
]


def classify(ex: Example) -> str:
    return next(name for name, rule in RULES if rule(ex))


# --- what a command writes -----------------------------------------------------------------------------------------

def _click_values(cmd, name: str, args: tuple[str, ...]) -> tuple[dict[str, object], frozenset[str]]:
    """Parse ``args`` with click command ``cmd`` (no callback run): the values and the names given explicitly."""
    import click
    from click.core import ParameterSource

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # --help prints before it exits
            ctx = cmd.make_context(name, list(args))
    except click.exceptions.Exit:
        return {}, frozenset()  # --help, --version
    except click.ClickException as exc:
        raise ExampleError(f"{name}: {exc.format_message()}") from None
    given = frozenset(k for k in ctx.params if ctx.get_parameter_source(k) not in (ParameterSource.DEFAULT,
                                                                                   ParameterSource.DEFAULT_MAP))
    return dict(ctx.params), given


def _run_destinations(args: tuple[str, ...]) -> list[tuple[str, str]]:
    """A ``memini-bench`` run: parsed as ``memini_bench.cli.main`` parses it, checked as ``dispatch`` checks it
    before any work, and every file or folder it may write."""
    from memini_bench.cli import command, repeated_flag
    from memini_bench.embed.cache import default_cache_dir
    from memini_bench.errors import BenchError
    from memini_bench.modes import check_given, selected_mode
    from memini_bench.modes.options import RunOptions

    twice = repeated_flag(command, list(args))
    if twice is not None:
        raise ExampleError(f"memini-bench: {twice} given twice")
    values, given = _click_values(command, "memini-bench", args)
    if not values:
        return []
    try:
        opts = RunOptions.build(values, given)
        mod = selected_mode(opts)
        check_given(mod, opts)
    except BenchError as exc:
        raise ExampleError(f"memini-bench: {exc}") from None
    if mod.NAME in ("listing", "-list") or mod.__name__.endswith(".listing"):
        return []
    out: list[tuple[str, str]] = []
    if not opts.output.no_write:
        # The results file, its -plot PNG and -qa's default checkpoint and archive are <out>/<stem>...: a probe
        # name stands for the stem (identity.stem needs the loaded data set).
        out.append(("-out", str(Path(opts.output.out) / "memini-bench-example-probe.json")))
        out += [(flag, value) for flag, value in (("-per-question", opts.output.per_question),
                                                  ("-trec", _folder(opts.output.trec))) if value]
        for cls in opts.modes:
            for f in dataclasses.fields(cls):
                value = getattr(opts.modes[cls], f.name)
                if f.name in ("qa_checkpoint", "qa_archive", "archive") and value:
                    out.append(("-" + f.name.replace("_", "-"), str(value)))
    if not opts.embed.no_cache:
        out.append(("embedding cache", _folder(opts.embed.cache_dir or str(default_cache_dir()))))
    return out


def _folder(path: str) -> str:
    """A folder destination is written with a trailing ``/`` (``git check-ignore`` is asked about a file in it)."""
    return path.rstrip("/") + "/" if path else ""


def _subcommand_destinations(sub: str, args: tuple[str, ...]) -> list[tuple[str, str]]:
    from memini_bench.cli import SUBCOMMANDS
    from memini_bench.core.registry import load_target

    cmd = load_target(SUBCOMMANDS[sub], sub)
    values, _ = _click_values(cmd, f"memini-bench {sub}", args)
    if sub == "report":
        site = str(values.get("out") or "")
        return [(flag, value) for flag, value in (("-o", site if values.get("fmt") else _folder(site)),
                                                  ("-screenshot", str(values.get("shot") or ""))) if value]
    if sub == "data" and args[:1] == ("fetch",):
        from memini_bench.data.registry import data_root

        return [("data fetch", _folder(str(data_root())))]
    return []


def _settings_command(module: str):
    """The click command of a ``settings.command`` script module (or of the module whose ``main`` it runs)."""
    import click

    mod = importlib.import_module(module)
    found = [v for v in vars(mod).values() if isinstance(v, click.Command)]
    if not found and hasattr(mod, "main"):
        return _settings_command(mod.main.__module__)
    if len(found) != 1:
        raise ExampleError(f"{module}: no single click command to parse the example with")
    return found[0]


def _script_module(script: str, root: Path) -> str:
    """``cmd/speed.py`` -> the module whose ``main`` it imports (``memini_bench.bench.speed``)."""
    m = re.search(r"^from (\S+) import main$", (root / script).read_text(encoding="utf-8"), re.M)
    if m is None:
        raise ExampleError(f"{script}: not a `from MODULE import main` script")
    return m.group(1)


def _module_destinations(module: str, args: tuple[str, ...]) -> list[tuple[str, str]]:
    cmd = _settings_command(module)
    values, _ = _click_values(cmd, module, args)
    return [(f"-{k}", _folder(str(v)) if k != "out" else str(v)) for k, v in values.items()
            if k in ("out", "dir", "cache_dir") and v]


def makefile(root: Path = ROOT) -> tuple[dict[str, str], dict[str, tuple[list[str], list[str]]]]:
    """The Makefile's variables and each target's (prerequisites, recipe lines), continuations joined."""
    vars_: dict[str, str] = {}
    targets: dict[str, tuple[list[str], list[str]]] = {}
    current: str | None = None
    text = (root / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        if line.startswith("\t") and current is not None:
            targets[current][1].append(line.strip())
            continue
        m = re.match(r"^(export\s+)?([A-Za-z_]+)\s*(\?=|:=|=)\s*(.*)$", line)
        if m:
            vars_[m.group(2)] = m.group(4).strip()
            continue
        m = re.match(r"^([\w$().-]+)\s*:(?!=)\s*(.*)$", line)
        current = None
        if m and not m.group(1).startswith("."):
            current = m.group(1)
            targets[current] = (m.group(2).split(), [])
    return vars_, targets


def expand(text: str, vars_: Mapping[str, str]) -> str:
    for _ in range(10):
        text = re.sub(r"\$\((\w+)\)", lambda m: vars_.get(m.group(1), ""), text)
    return text


def make_commands(target: str, assignments: tuple[str, ...], root: Path = ROOT) -> list[list[str]]:
    """The commands ``make TARGET VAR=value...`` runs (its recipe, variables expanded; ``$(PY)`` is ``python``)."""
    vars_, targets = makefile(root)
    vars_.update(a.split("=", 1) for a in assignments)
    vars_["PY"] = "python"
    if target not in targets:
        raise ExampleError(f"make {target}: no such target in the Makefile")
    return [shlex.split(expand(line, vars_)) for line in targets[target][1]]


def make_destinations(target: str, assignments: tuple[str, ...], root: Path = ROOT) -> list[tuple[str, str]]:
    vars_, targets = makefile(root)
    out: list[tuple[str, str]] = []
    if "$(STAMP)" in targets.get(target, ([], []))[0] or target == "install":
        out.append(("make install's venv", expand("$(VENV)/", {**vars_, **dict(a.split("=", 1)
                                                                               for a in assignments)})))
    for words in make_commands(target, assignments, root):
        head = " ".join(words[:3])
        if "pytest" in head:
            out.append(("pytest cache", ".pytest_cache/"))
        elif "lint-imports" in head:
            out.append(("import-linter cache", ".import_linter_cache/"))
        elif "ruff" in head:
            out.append(("ruff cache", ".ruff_cache/"))
        elif runs_ours(words):
            out += destinations(Example("Makefile", 0, tuple(words)), root)
    return out


def destinations(ex: Example, root: Path = ROOT) -> list[tuple[str, str]]:
    """(what, path) for every file or folder ``ex`` may write; a relative path is relative to the project root
    (every example runs from there). Raises ExampleError for a command that would not parse."""
    kind, name, args = ex.program
    if kind == "memini-bench":
        from memini_bench.cli import SUBCOMMANDS

        if args and args[0] in SUBCOMMANDS:
            return _subcommand_destinations(args[0], args[1:])
        return _run_destinations(args)
    if kind == "module":
        return _module_destinations(name, args)
    if kind == "script":
        if name == "cmd/results_table.py":
            return [("generated blocks", "README.md"), ("generated blocks", "docs/")]
        return _module_destinations(_script_module(name, root), args)
    if kind == "make":
        return make_destinations(name, args, root)
    raise ExampleError(f"{ex.text}: not a command of this project")


# --- running an example --------------------------------------------------------------------------------------------

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


def main(argv: list[str] | None = None) -> None:
    for ex in extract():
        print(f"{ex.where:28} {classify(ex):12} {ex.text}")
    counts: dict[str, int] = {}
    for ex in extract():
        counts[classify(ex)] = counts.get(classify(ex), 0) + 1
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
