"""One registry pattern for every plug point: systems, suites, embedders, executors and metrics.

A ``Registry`` maps names to targets. A target is the object itself or a lazy ``"module:attr"`` string (so listing
names never imports a heavy library). Three sources fill it, in this order: the built-ins (the data tables of
``memini_bench.core.builtins``, added when the registry is made),
the installed distributions' entry points in the registry's group (``memini_bench.systems``,
``memini_bench.suites``, ``memini_bench.embedders``, ``memini_bench.executors``, ``memini_bench.metrics``; an entry
point's name is the registered name) and, where the registry allows it, ``module:attr`` given directly on the
command line (any importable module). An entry that declares ``uses=("argument",)`` also answers ``NAME:ARG``
(``mcp:basic-memory``): its target is called with ``argument=ARG`` besides its usual arguments.

A built-in whose module needs an optional dependency names its pip extra: a missing package is then the one-line
error ``<name> needs the <extra> extra (<package> is not installed): pip install 'memini-bench[<extra>]'``
(``missing_extra``); code that reaches an optional library another way asks ``require_extra`` first (finding the
packages without importing them) or imports through ``import_extra``. An unknown name is a one-line error listing
the known ones.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Generic, TypeVar

from memini_bench.core import builtins, hooks
from memini_bench.core.builtins import Builtin
from memini_bench.core.hooks import one_line
from memini_bench.errors import BenchError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Entry:
    """One registered name: its target (object or ``"module:attr"``), one line of help, where it came from, the
    pip extra its module needs ("" = none), its aliases and what it declares it ``uses`` (an embedder's settings;
    None = not declared, as for a plugin)."""

    name: str
    target: object
    help: str
    origin: str = "built-in"
    extra: str = ""
    aliases: tuple[str, ...] = ()
    uses: tuple[str, ...] | None = None


def _import_file(path: str, what: str, spec: str) -> object:
    """The Python file ``path`` imported as a module of its own (``./mine.py:make`` needs no PYTHONPATH); its
    folder goes on ``sys.path`` so its own imports of neighbouring files work."""
    import importlib.util
    import sys
    from pathlib import Path

    file = Path(path).expanduser()
    if not file.is_file():
        raise BenchError(f"{what} {spec!r}: {path} is not a file; give PATH.py:attr or module:attr")
    name = "memini_plugin_" + "".join(c if c.isalnum() else "_" for c in str(file.resolve()))
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, file)
    if loader_spec is None or loader_spec.loader is None:
        raise BenchError(f"{what} {spec!r}: cannot import {path} as Python; give a .py file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.path.insert(0, str(file.resolve().parent))
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


#: Steps an extra needs before its ``pip install``: PyPI's Linux torch is a multi-GB CUDA build, so the ``minilm``
#: extra takes a CPU torch from PyTorch's own index first (README, Install).
BEFORE_EXTRA = {"minilm": "pip install torch --index-url https://download.pytorch.org/whl/cpu (a CPU build; PyPI's "
                          "is a multi-GB CUDA one), then "}


def missing_extra(name: str, extra: str, package: str) -> BenchError:
    """The one line for a capability whose pip extra is not installed: it names the extra and the command (and
    what must come first, ``BEFORE_EXTRA``)."""
    return BenchError(f"{name} needs the {extra} extra ({package} is not installed): "
                      f"{BEFORE_EXTRA.get(extra, '')}pip install 'memini-bench[{extra}]'")


def missing_distributions(extra: str) -> list[str] | None:
    """The distributions the pip extra ``extra`` requires that are not installed (read from memini-bench's own
    metadata, nothing imported); None when that metadata is absent (a source tree that was never installed) or
    does not declare the extra."""
    import importlib.metadata as metadata
    import re

    try:
        requires = metadata.requires("memini-bench") or []
    except metadata.PackageNotFoundError:
        return None
    wanted = [re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0] for r in requires
              if re.search(rf"extra\s*==\s*[\"']{re.escape(extra)}[\"']", r)]
    if not wanted:
        return None
    missing = []
    for name in wanted:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def extra_installed(extra: str) -> bool | None:
    """Whether every distribution of the pip extra ``extra`` is installed (``missing_distributions``; None:
    unknown)."""
    missing = missing_distributions(extra)
    return None if missing is None else not missing


def require_extra(name: str, extra: str, *packages: str) -> None:
    """Raise ``missing_extra`` unless every package can be imported; found without importing it (so a check costs
    no import of torch)."""
    for package in packages:
        try:
            found = importlib.util.find_spec(package) is not None
        except (ImportError, ValueError):  # a parent package missing, or a module blocked in sys.modules
            found = False
        if not found:
            raise missing_extra(name, extra, package)


def import_extra(module: str, name: str, extra: str) -> ModuleType:
    """Import ``module`` (of this package) whose imports need the pip extra ``extra``; a missing package is
    ``missing_extra``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("memini_bench"):
            raise missing_extra(name, extra, exc.name) from None
        raise


def load_target(spec: str, what: str, extra: str = "", name: str = "") -> object:
    """Import ``module:attr`` or ``path/to/file.py:attr`` (attr may be dotted); every failure is a one-line
    BenchError naming ``what``."""
    module_name, _, attr = spec.rpartition(":") if spec.count(":") > 1 else spec.partition(":")
    if not module_name or not attr:
        raise BenchError(f"{what} {spec!r}: use module:attr or PATH.py:attr (e.g. mypackage.memory:make)")
    captured = hooks.StderrCapture()  # what an import prints (argparse's usage) is replayed only if it succeeds
    imported = False
    try:
        if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
            obj: object = _import_file(module_name, what, spec)
        else:
            obj = importlib.import_module(module_name)
        imported = True
    except ModuleNotFoundError as exc:
        if extra and exc.name and not exc.name.startswith("memini_bench"):
            raise missing_extra(name or spec, extra, exc.name) from None
        raise BenchError(f"{what} {spec!r}: cannot import {module_name} ({exc}); is it installed or on "
                         "PYTHONPATH?") from None
    except BenchError:  # already one line naming the input and the fix (a peer's full temp folder: peers.mem0)
        raise
    except Exception as exc:  # a plugin module that fails while importing
        raise BenchError(f"{what} {spec!r}: importing {module_name} failed ({type(exc).__name__}: "
                         f"{one_line(exc)})") from None
    except SystemExit as exc:  # sys.exit or an argparse error (argparse.parse_args at import) in the plugin module
        said = captured.stop(replay=False).strip().splitlines()
        raise BenchError(f"{what} {spec!r}: importing {module_name} called sys.exit({exc.code!r})"
                         + (f" after printing {one_line(said[-1])!r}" if said else "")
                         + "; a plugin module must not exit or parse the command line at import") from None
    finally:
        captured.stop(replay=imported)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise BenchError(f"{what} {spec!r}: {module_name} has no attribute {attr!r}") from None
    return obj


class Registry(Generic[T]):
    """Names -> targets for one plug point (``kind``, e.g. "system"), filled by built-ins and entry points."""

    def __init__(self, kind: str, group: str, flag: str, *, allow_module: bool = False,
                 builtin: tuple[Builtin, ...] = ()) -> None:
        self.kind = kind
        self.group = group
        self.flag = flag
        self.allow_module = allow_module
        self._entries: dict[str, Entry] = {}
        self._aliases: dict[str, str] = {}
        self._plugins_loaded = False
        for b in builtin:
            self.add(b.name, b.target, b.help, extra=b.extra, aliases=b.aliases, uses=b.uses)

    def add(self, name: str, target: object, help: str, *, extra: str = "", aliases: tuple[str, ...] = (),
            origin: str = "built-in", uses: tuple[str, ...] | None = None) -> None:
        """Register ``target`` (an object or ``"module:attr"``) under ``name`` (and ``aliases``)."""
        self._entries[name] = Entry(name, target, help, origin, extra, aliases, uses)
        for alias in aliases:
            self._aliases[alias] = name

    def entry(self, name: str) -> Entry | None:
        """The entry ``name`` (or an alias of it) stands for, None if unknown."""
        canonical = self.canonical(name)
        return None if canonical is None else self._entries[canonical]

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        import importlib.metadata

        for ep in importlib.metadata.entry_points(group=self.group):
            if ep.name in self._entries and self._entries[ep.name].origin == "built-in":
                continue  # a plugin never shadows a built-in
            dist = ep.dist.name if ep.dist is not None else "?"
            self.add(ep.name, ep.value, "", origin=f"entry point of {dist}")

    def entries(self) -> Iterator[Entry]:
        self._load_plugins()
        yield from self._entries.values()

    def names(self) -> list[str]:
        return [e.name for e in self.entries()]

    def canonical(self, name: str) -> str | None:
        """The registered name ``name`` stands for (itself or an alias's target), None if unknown. Entry points
        are scanned only for a name no built-in has (a plugin never shadows a built-in, and the scan costs tens of
        milliseconds per run)."""
        found = self._lookup(name)
        if found is None and not self._plugins_loaded:
            self._load_plugins()
            found = self._lookup(name)
        return found

    def _lookup(self, name: str) -> str | None:
        return name if name in self._entries else self._aliases.get(name)

    def known(self, name: str) -> bool:
        return (self.canonical(name) is not None or self._argument_entry(name) is not None
                or (self.allow_module and ":" in name))

    def _argument_entry(self, name: str) -> Entry | None:
        """The entry of ``base`` in ``base:ARG`` when it declares that it takes an argument (``uses`` holds
        ``"argument"``, e.g. the ``mcp`` and ``http`` systems), else None."""
        base, sep, _ = name.partition(":")
        entry = self.entry(base) if sep and base else None
        return entry if entry is not None and "argument" in (entry.uses or ()) else None

    def unknown_error(self, name: str, flag: str | None = None) -> BenchError:
        import difflib

        extra = "; or module:attr (or PATH.py:attr) for any importable factory" if self.allow_module else ""
        close = difflib.get_close_matches(name, self.names(), n=1, cutoff=0.7) if isinstance(name, str) else []
        hint = f"did you mean {close[0]}? " if close else ""
        return BenchError(f"{flag or self.flag} {name!r}: unknown {self.kind}; {hint}use one of "
                          f"{', '.join(self.names())}{extra}")

    def get(self, name: str, *, flag: str | None = None) -> T:
        """The target registered as ``name`` (loaded if lazy), or ``module:attr`` imported when allowed; errors
        name ``flag`` (default the registry's: the flag the user typed, where several feed one registry)."""
        canonical = self.canonical(name)
        if canonical is None and (entry := self._argument_entry(name)) is not None:
            import functools

            factory = self.get(entry.name, flag=flag)
            return functools.partial(factory, argument=name.partition(":")[2])  # type: ignore[return-value]
        if canonical is None:
            if self.allow_module and ":" in name:
                return load_target(name, flag or self.flag)  # type: ignore[return-value]
            raise self.unknown_error(name, flag)
        entry = self._entries[canonical]
        target = entry.target
        if isinstance(target, str):
            if entry.extra and (missing := missing_distributions(entry.extra)):  # before any import or data read
                raise missing_extra(canonical, entry.extra, missing[0])
            target = load_target(target, flag or self.flag, entry.extra, canonical)
            self._entries[canonical] = dataclasses.replace(entry, target=target)
        return target  # type: ignore[return-value]

    def help_of(self, entry: Entry) -> str:
        """The entry's help line; for a plugin without one, the first line of its target's docstring."""
        if entry.help:
            return entry.help
        try:
            doc = (getattr(self.get(entry.name), "__doc__", "") or "").strip()
        except BenchError as exc:
            return f"(cannot load: {exc})"
        return doc.splitlines()[0] if doc else ""

    def listing(self) -> list[str]:
        """One line per entry: name, aliases, origin, help, and the pip extra it needs when that extra is not
        installed (``extra_installed``; for ``-list``)."""
        lines = []
        for e in self.entries():
            alias = f" (also {', '.join(e.aliases)})" if e.aliases else ""
            extra = f" [needs extra {e.extra}]" if e.extra and extra_installed(e.extra) is not True else ""
            origin = "" if e.origin == "built-in" else f" [{e.origin}]"
            lines.append(f"  {e.name}{alias}{origin}{extra}: {self.help_of(e)}")
        return lines


SYSTEMS: Registry = Registry("system", "memini_bench.systems", "-systems", allow_module=True,
                             builtin=builtins.SYSTEMS)
SUITES: Registry = Registry("suite", "memini_bench.suites", "-suite", allow_module=True, builtin=builtins.SUITES)
EMBEDDERS: Registry = Registry("embedder", "memini_bench.embedders", "-embedder", allow_module=True,
                               builtin=builtins.EMBEDDERS)
EXECUTORS: Registry = Registry("executor", "memini_bench.executors", "-executor", allow_module=True,
                               builtin=builtins.EXECUTORS)
METRICS: Registry = Registry("metric", "memini_bench.metrics", "-metrics", builtin=builtins.METRICS)


#: The registries by the plural ``-list KIND`` names.
KINDS: dict[str, Registry] = {"systems": SYSTEMS, "suites": SUITES, "embedders": EMBEDDERS, "executors": EXECUTORS,
                              "metrics": METRICS}


def listing_rows(kind: str) -> list[dict[str, str]]:
    """The entries of one kind of ``KINDS`` as rows (``name``, ``help``, ``origin``, ``extra``, ``aliases``); a
    metric's richer row (formula, direction, parameters) is ``core.metrics.listing``."""
    reg = KINDS[kind]
    return [{"name": e.name, "help": reg.help_of(e), "origin": e.origin, "extra": e.extra,
             "aliases": ", ".join(e.aliases)} for e in reg.entries()]


def listing(kind: str | None = None) -> str:
    """Every registered system, suite, embedder and executor, one line each (``memini-bench -list``), or one
    ``kind`` of ``KINDS`` alone (metrics: ``core.metrics.listing_text``, with their formulas)."""
    out = []
    for title, reg in KINDS.items():
        if (kind is None and reg is not METRICS) or title == kind:
            out.append(f"{title}:")
            out.extend(reg.listing())
    return "\n".join(out) + "\n"
