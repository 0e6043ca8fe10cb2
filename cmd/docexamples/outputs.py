"""What an example command writes: ``destinations`` parses it with the command's own click options."""


from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from docexamples.reading import ROOT, Example, ExampleError, runs_ours


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
    """A ``memini-bench`` run (the flat form, or a verb: ``run``, ``study rerank``...): parsed as
    ``memini_bench.cli.main`` parses it, checked as ``dispatch`` checks it before any work, and every file or
    folder it may write."""
    from memini_bench.cli import command, repeated_flag
    from memini_bench.embed.cache import default_cache_dir
    from memini_bench.errors import BenchError
    from memini_bench.modes import VERBS, check_given, selected_mode
    from memini_bench.modes.options import RunOptions
    from memini_bench.modes.specs import spec_for

    verb, cmd, rest = "", command, args
    if args[:1] == ("study",) and (len(args) == 1 or args[1].startswith("-")):
        return []  # the list of studies
    if args and (args[0] in VERBS or (args[0] == "study" and len(args) > 1)):
        from memini_bench.cli.verbs import verb_command

        verb, rest = (f"study {args[1]}", args[2:]) if args[0] == "study" else (args[0], args[1:])
        cmd = verb_command(verb)
    twice = repeated_flag(cmd, list(rest))
    if twice is not None:
        raise ExampleError(f"memini-bench: {twice} given twice")
    values, given = _click_values(cmd, "memini-bench", rest)
    if not values or values.pop("plan", False) or values.pop("plan_only", False):
        return []
    values.pop("topics", None)
    try:
        opts = RunOptions.build({**values, **(spec_for(verb).implied if verb else {})}, given)
        spec = spec_for(verb) if verb else selected_mode(opts)
        check_given(spec, opts)
    except BenchError as exc:
        raise ExampleError(f"memini-bench: {exc}") from None
    if spec.verb == "list":
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
    if sub == "score":
        return [("-out", _folder(str(values.get("out") or "")))] if values.get("out") else []
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
    """``cmd/speed.py`` -> the module whose ``main`` it imports (``devbench.speed``)."""
    m = re.search(r"^from (\S+) import main$", (root / script).read_text(encoding="utf-8"), re.M)
    if m is None:
        raise ExampleError(f"{script}: not a `from MODULE import main` script")
    return m.group(1)


def _module_destinations(module: str, args: tuple[str, ...]) -> list[tuple[str, str]]:
    cmd = _settings_command(module)
    values, _ = _click_values(cmd, module, args)
    return [(f"-{k}", _folder(str(v)) if k != "out" else str(v)) for k, v in values.items()
            if k in ("out", "dir", "cache_dir") and v]


#: Scripts that only print (to stdout): the examples table, the BEAM catalog entries.
PRINTING_SCRIPTS = ("cmd/list_examples.py", "cmd/beam_catalog.py")


def _manifest_destinations(args: tuple[str, ...], root: Path) -> list[tuple[str, str]]:
    """``cmd/make_results.py NAME=VALUE...``: results/ (it empties it), what every manifest command writes, and
    the generated blocks."""
    from docgen import manifest

    overrides = dict(a.split("=", 1) for a in args if "=" in a)
    out = [("make results", "results/"), ("generated blocks", "README.md"), ("generated blocks", "docs/")]
    for _, words in manifest.commands(overrides, root / "cmd" / "results_manifest.txt"):
        out += destinations(Example("cmd/results_manifest.txt", 0, tuple(words)), root)
    return out


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
        if name == "cmd/make_results.py":
            return _manifest_destinations(args, root)
        if name == "cmd/migrate_results.py":  # rewrites the files and folders it is given, in place
            return [("migrated in place", _folder(a) if (root / a).is_dir() else a) for a in args]
        if name in PRINTING_SCRIPTS:
            return []
        return _module_destinations(_script_module(name, root), args)
    if kind == "make":
        return make_destinations(name, args, root)
    raise ExampleError(f"{ex.text}: not a command of this project")
