"""A protocol mapping: how a memory server's tools (MCP) or routes (HTTP) store and search the data set's items.

A mapping is a small TOML or JSON file (the shipped ones are in ``mappings/``; any path works too). Its keys:

- ``name``: the row's name (``mcp:NAME`` / ``http:NAME``); ``about``: one line of help.
- MCP: ``command`` (argv of a stdio server; ``{venv}`` is the repo's ``.venv-mcp``, ``{store}`` the run's private
  store folder, ``{python}`` this Python, ``{repo}`` this checkout) or ``url`` (a streamable-HTTP server); ``env``
  (variables for the server, templated the same way; the server sees only these and the SDK's safe defaults:
  HOME, PATH, USER, SHELL, TERM, LOGNAME). HTTP: ``url`` (the base URL; ``$VAR`` or ``${VAR:-default}`` read the
  environment).
- ``groups``: how the server keeps groups apart. ``argument``: one server for the run, the group goes into each
  call (``{group_key}``); ``process``: the server cannot separate groups, so each group gets its own server process
  on a fresh store (``{store}`` differs per group).
- ``timeout`` (seconds per call, default 30), ``startup_timeout`` (seconds to start and list tools, default 60),
  ``batch`` (items per ingest call, default 1: a server that takes a list gets ``{items}``, each rendered from
  ``[ingest].each``), ``concurrency`` (calls in flight, default 1).
- ``[ingest]``: ``tool`` (MCP) or ``path`` (HTTP, POSTed), ``arguments`` (MCP) or ``body`` (HTTP), and ``each``
  with ``batch``. ``[setup]`` (optional, same shape): one call per group before its first item (make a project);
  ``[finish]`` (optional): one call per server after the last item (build an index), timed with the ingest.
- ``[recall]``: ``tool`` / ``path``, ``arguments`` / ``body``, then how hits come out of the reply: ``results`` (a
  JSON path to the list of hits, e.g. ``$.results``), ``id`` (a path inside one hit to the value naming the item),
  ``id_pattern`` (a regular expression: its first group, or the match, in that value is the key), ``score`` (a path;
  absent = ``1 / rank``), ``content`` (a path; absent = the item's own text). ``limit`` caps how many hits are read.

Placeholders (``{name}`` in any string of ``arguments``, ``body``, ``each``, ``env``, ``command``, ``path``): ``{key}``
(a safe token the adapter makes per item, ``m000123``, and maps back), ``{id}``, ``{content}``, ``{group}``,
``{group_key}`` (``g3``: a safe token per group), ``{time}`` (ISO 8601, "" when the item has none), ``{query}``,
``{k}``, ``{items}`` (the batch), ``{store}``, ``{venv}``. A string that is exactly one placeholder takes that
value's type (``"{k}"`` is the number 10, ``"{items}"`` a list); otherwise it is text.

JSON paths are the common subset: ``$``, ``.name``, ``["name"]``, ``[n]`` and ``[*]`` (every element).
Everything here is checked when the file is read: an unknown key, a missing section or a placeholder that does not
exist is one line naming the file and the key.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memini_bench.errors import BenchError

SHIPPED = Path(__file__).with_name("mappings")
GROUP_MODES = ("argument", "process")
ITEM_FIELDS = ("key", "id", "content", "group", "group_key", "time")
SETUP_FIELDS = ("group", "group_key", "store")
QUERY_FIELDS = ("query", "k", "group", "group_key")
RUN_FIELDS = ("store", "venv", "python", "repo")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_TOP = {"name", "about", "command", "url", "env", "groups", "timeout", "startup_timeout", "batch", "concurrency",
        "ingest", "recall", "setup", "finish", "notes"}
_CALL = {"tool", "path", "arguments", "body", "each"}
_RECALL = _CALL | {"results", "id", "id_pattern", "score", "content", "limit"}


@dataclass(frozen=True)
class Call:
    """One mapped call: the tool (MCP) or path (HTTP), its argument template and, for a batched ingest, ``each``."""

    target: str
    arguments: object
    each: object = None


@dataclass(frozen=True)
class Extract:
    """How the hits come out of a recall reply (module docstring)."""

    results: str
    id: str
    id_pattern: str = ""
    score: str = ""
    content: str = ""
    limit: int = 0


@dataclass(frozen=True)
class MappingSpec:
    """A mapping file, read and checked (see the module docstring)."""

    kind: str                       # "mcp" or "http"
    name: str
    source: str                     # the file it was read from
    text: str                       # its bytes as text (the results identity covers them)
    about: str = ""
    command: tuple[str, ...] = ()
    url: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    groups: str = "argument"
    timeout: float = 30.0
    startup_timeout: float = 60.0
    batch: int = 1
    concurrency: int = 1
    setup: Call | None = None
    finish: Call | None = None
    ingest: Call = Call("", {})
    recall: Call = Call("", {})
    extract: Extract = Extract("$", "")

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}"


def shipped(kind: str) -> list[str]:
    """The names of the mappings shipped for ``kind`` (``mcp`` or ``http``)."""
    return sorted(p.name.split(".")[1] for p in SHIPPED.glob(f"{kind}.*.toml"))


def locate(kind: str, argument: str) -> Path:
    """The mapping file ``argument`` names: a shipped name, or a path to a ``.toml``/``.json`` file."""
    if not argument:
        raise BenchError(f"-systems {kind}:: give a mapping name ({', '.join(shipped(kind))}) or a mapping file path,"
                         f" e.g. {kind}:./my-server.toml")
    own = SHIPPED / f"{kind}.{argument}.toml"
    if "/" not in argument and own.is_file():
        return own
    path = Path(argument).expanduser()
    if path.is_file():
        return path
    raise BenchError(f"-systems {kind}:{argument}: no such mapping; use one of {', '.join(shipped(kind))} or the path "
                     "of a mapping file (.toml or .json)")


def load(kind: str, argument: str, overrides: Mapping[str, str] | None = None) -> MappingSpec:
    """The mapping ``argument`` names (``locate``), read and checked; ``overrides`` (``timeout``, ``concurrency``,
    ``batch`` from ``kind:NAME?timeout=5``) replace the file's values."""
    path = locate(kind, argument)
    where = f"{kind} mapping {path}"
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchError(f"{where}: cannot read it ({exc}); give a readable UTF-8 file") from None
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise BenchError(f"{where}: not valid {'JSON' if path.suffix == '.json' else 'TOML'} "
                         f"({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise BenchError(f"{where}: the file must hold a table (object) of settings")
    return parse(kind, raw, where, str(path), text, overrides or {})


def _number(raw: Mapping, key: str, default: float, where: str, *, integer: bool = False) -> float:
    value = raw.get(key, default)
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok or not 0 < value < 1e7:
        kind = "a positive whole number" if integer else "a positive number of seconds"
        raise BenchError(f"{where}: {key} = {value!r} must be {kind}")
    return value


def _string(raw: Mapping, key: str, where: str, default: str = "") -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise BenchError(f"{where}: {key} must be a string, not {type(value).__name__}")
    return value


def placeholders(template: object) -> set[str]:
    """Every ``{name}`` used anywhere in ``template`` (strings, lists, tables, keys included)."""
    if isinstance(template, str):
        return set(_PLACEHOLDER.findall(template))
    if isinstance(template, Mapping):
        return set().union(*(placeholders(k) | placeholders(v) for k, v in template.items())) if template else set()
    if isinstance(template, list | tuple):
        return set().union(*map(placeholders, template)) if template else set()
    return set()


def _check_placeholders(template: object, allowed: Sequence[str], where: str) -> None:
    unknown = sorted(placeholders(template) - set(allowed))
    if unknown:
        raise BenchError(f"{where}: placeholder {{{unknown[0]}}} does not exist here; use "
                         + ", ".join("{" + a + "}" for a in allowed))


def _call(kind: str, raw: object, section: str, where: str, allowed: Sequence[str], keys: set[str],
          batch: int) -> Call:
    here = f"{where} [{section}]"
    if not isinstance(raw, dict):
        raise BenchError(f"{where}: needs a [{section}] table")
    unknown = sorted(set(raw) - keys)
    if unknown:
        raise BenchError(f"{here}: unknown key {unknown[0]!r}; use {', '.join(sorted(keys))}")
    target_key, args_key = ("tool", "arguments") if kind == "mcp" else ("path", "body")
    for wrong in ({"path", "body"} if kind == "mcp" else {"tool", "arguments"}) & set(raw):
        raise BenchError(f"{here}: {wrong!r} is for {'HTTP' if kind == 'mcp' else 'MCP'} mappings; use {target_key!r}"
                         f" and {args_key!r}")
    target = _string(raw, target_key, here)
    if not target:
        raise BenchError(f"{here}: needs {target_key} = the {'tool name' if kind == 'mcp' else 'route path'}")
    arguments = raw.get(args_key, {})
    if kind == "mcp" and not isinstance(arguments, dict):
        raise BenchError(f"{here}: {args_key} must be a table of the tool's arguments")
    each = raw.get("each")
    if section == "ingest" and batch > 1:
        if each is None or "items" not in placeholders(arguments):
            raise BenchError(f"{here}: batch = {batch} needs each = (one item's template) and \"{{items}}\" in "
                             f"{args_key}")
        _check_placeholders(each, ITEM_FIELDS, f"{here} each")
        _check_placeholders(arguments, ("items", "group", "group_key", "store"), f"{here} {args_key}")
    else:
        if each is not None:
            raise BenchError(f"{here}: each is for a batched ingest (batch > 1)")
        _check_placeholders(arguments, allowed, f"{here} {args_key}")
    _check_placeholders(target, allowed if section != "ingest" or batch == 1 else ("group", "group_key"),
                        f"{here} {target_key}")
    return Call(target, arguments, each)


def parse(kind: str, raw: Mapping, where: str, source: str = "", text: str = "",
          overrides: Mapping[str, str] | None = None) -> MappingSpec:
    """``raw`` (a decoded mapping file) checked into a ``MappingSpec``; every fault is one line naming ``where``."""
    unknown = sorted(set(raw) - _TOP)
    if unknown:
        raise BenchError(f"{where}: unknown key {unknown[0]!r}; use {', '.join(sorted(_TOP))}")
    raw = dict(raw)
    for key, value in (overrides or {}).items():
        if key not in ("timeout", "concurrency", "batch", "startup_timeout"):
            raise BenchError(f"-systems {kind}:...?{key}=: unknown setting; use timeout, startup_timeout, "
                             "concurrency or batch")
        try:
            raw[key] = int(value) if key in ("concurrency", "batch") else float(value)
        except ValueError:
            raise BenchError(f"-systems {kind}:...?{key}={value!r}: not a number") from None
    name = _string(raw, "name", where)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise BenchError(f"{where}: name = {name!r} must be letters, digits, '.', '_' or '-'")
    command = raw.get("command", [])
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        raise BenchError(f"{where}: command must be a list of strings (the server's argv)")
    url = _string(raw, "url", where)
    if kind == "mcp" and bool(command) == bool(url):
        raise BenchError(f"{where}: give command (a stdio server) or url (a streamable-HTTP server), one of them")
    if kind == "http" and (command or not url):
        raise BenchError(f"{where}: an HTTP mapping needs url (the service's base URL) and no command")
    env = raw.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise BenchError(f"{where}: env must be a table of strings")
    _check_placeholders([command, env, url], RUN_FIELDS, f"{where} command/env/url")
    groups = _string(raw, "groups", where, "argument")
    if groups not in GROUP_MODES:
        raise BenchError(f"{where}: groups = {groups!r}; use argument (the group goes into each call) or process "
                         "(a server on a fresh store per group)")
    batch = int(_number(raw, "batch", 1, where, integer=True))
    setup = (_call(kind, raw["setup"], "setup", where, SETUP_FIELDS, _CALL, 1) if "setup" in raw else None)
    finish = (_call(kind, raw["finish"], "finish", where, RUN_FIELDS, _CALL, 1) if "finish" in raw else None)
    ingest = _call(kind, raw.get("ingest"), "ingest", where, ITEM_FIELDS, _CALL, batch)
    recall_raw = raw.get("recall")
    recall = _call(kind, {k: v for k, v in recall_raw.items() if k in _CALL} if isinstance(recall_raw, dict)
                   else recall_raw, "recall", where, QUERY_FIELDS, _CALL, 1)
    unknown = sorted(set(recall_raw) - _RECALL)
    if unknown:
        raise BenchError(f"{where} [recall]: unknown key {unknown[0]!r}; use {', '.join(sorted(_RECALL))}")
    here = f"{where} [recall]"
    extract = Extract(_string(recall_raw, "results", here, "$"), _string(recall_raw, "id", here),
                      _string(recall_raw, "id_pattern", here), _string(recall_raw, "score", here),
                      _string(recall_raw, "content", here),
                      int(_number(recall_raw, "limit", 10**6, here, integer=True)) if "limit" in recall_raw else 0)
    for key in ("results", "id", "score", "content"):
        value = getattr(extract, key)
        if value:
            parse_path(value, f"{here} {key}")
    if extract.id_pattern:
        try:
            re.compile(extract.id_pattern)
        except re.error as exc:
            raise BenchError(f"{here}: id_pattern {extract.id_pattern!r} is not a regular expression ({exc})") from None
    return MappingSpec(kind, name, source, text, _string(raw, "about", where), tuple(command), url, dict(env), groups,
                       float(_number(raw, "timeout", 30.0, where)), float(_number(raw, "startup_timeout", 60.0, where)),
                       batch, int(_number(raw, "concurrency", 1, where, integer=True)), setup, finish, ingest, recall,
                       extract)


def environ(text: str) -> str:
    """``text`` with ``$VAR``, ``${VAR}`` and ``${VAR:-default}`` read from the environment."""
    return _ENV.sub(lambda m: os.environ.get(m.group(1) or m.group(3), "") or (m.group(2) or ""), text)


def render(template: object, values: Mapping[str, object]) -> object:
    """``template`` with every placeholder filled from ``values`` (a lone placeholder keeps its value's type)."""
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
    if isinstance(template, Mapping):
        return {str(render(k, values)): render(v, values) for k, v in template.items()}
    if isinstance(template, list | tuple):
        return [render(v, values) for v in template]
    return template


_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\*|-?\d+|\"[^\"]*\"|'[^']*')\]")


def parse_path(path: str, where: str = "JSON path") -> list[str | int | None]:
    """The steps of a JSON path (``None`` = every element); a path the subset does not cover is one line."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    elif text and not text.startswith((".", "[")):
        text = "." + text  # "metadata.key" inside a hit
    steps: list[str | int | None] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            raise BenchError(f"{where}: {path!r} is not a JSON path this reads (use $, .name, [\"name\"], [n], [*])")
        if m.group(1) is not None:
            steps.append(m.group(1))
        else:
            token = m.group(2)
            steps.append(None if token == "*" else token[1:-1] if token[0] in "\"'" else int(token))
        pos = m.end()
    return steps


def select(doc: object, path: str) -> list[object]:
    """Every value ``path`` reaches in ``doc`` (``[*]`` fans out; a missing step reaches nothing)."""
    values = [doc]
    for step in parse_path(path):
        out: list[object] = []
        for v in values:
            if step is None:
                if isinstance(v, list):
                    out.extend(v)
                elif isinstance(v, dict):
                    out.extend(v.values())
            elif isinstance(step, int):
                if isinstance(v, list) and -len(v) <= step < len(v):
                    out.append(v[step])
            elif isinstance(v, dict) and step in v:
                out.append(v[step])
        values = out
    return values
