"""The data sets memini-bench knows, where they live on this machine, and what ``-data NAME`` means.

The catalog (``catalog.json`` beside this module) lists each set: its name, the suite that reads it, a description,
license, citation, homepage, ``checksum_source`` (where each size and checksum was taken from), the ``entry`` passed to
the suite (a file of the set, or ``.`` for the set's folder) and its files. A file has a path inside the set's folder,
one or more URLs (mirrors, tried in order), and what it is checked against: ``size`` (bytes) and ``sha256`` where
known, else ``git_sha1`` (the git blob id, SHA-1 of ``b"blob <size>\\0" + bytes``: for files whose bytes we never
saw, only their git tree). A file with neither checksum cannot be registered. Every name stays inside the data
folder: a set's name is one plain folder name (letters, digits, ``.``, ``_``, ``-``; not ``.`` or ``..``), a file's
path is relative with no ``..`` part; a catalog that breaks this (or is not valid JSON) is one line naming it.

A set lives in ``data_root() / <name>``: ``$MEMINI_BENCH_DATA`` when set, else ``$XDG_CACHE_HOME/memini-bench/data``
(``~/.cache/memini-bench/data``). ``resolve_data(suite, value)`` turns ``-data NAME`` into the entry path of a
fetched set (one line naming ``memini-bench data fetch NAME`` when it is not fetched), and ``missing_file_hint`` names
the fetch command when a ``-data PATH`` that does not exist is the file of a registered set.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from memini_bench.errors import BenchError

CATALOG = Path(__file__).with_name("catalog.json")
ENV = "MEMINI_BENCH_DATA"
_SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class DataFile:
    """One file of a set: ``path`` inside the set's folder, its mirrors, and what it is checked against."""

    path: str
    urls: tuple[str, ...]
    size: int | None = None
    sha256: str = ""
    git_sha1: str = ""

    @property
    def checksum(self) -> str:
        return f"sha256 {self.sha256}" if self.sha256 else f"git blob {self.git_sha1}"


@dataclass(frozen=True, slots=True)
class DataSet:
    name: str
    suite: str
    description: str
    license: str
    citation: str
    homepage: str
    entry: str
    checksum_source: str
    files: tuple[DataFile, ...]

    @property
    def size(self) -> int | None:
        """Total bytes, None when a file's size is unknown."""
        sizes = [f.size for f in self.files]
        return None if None in sizes else sum(s for s in sizes if s is not None)

    def folder(self) -> Path:
        return data_root() / self.name

    def entry_path(self) -> Path:
        return self.folder() if self.entry == "." else self.folder() / self.entry


def _file(raw: dict, where: str) -> DataFile:
    f = DataFile(path=raw["path"], urls=tuple(raw["urls"]), size=raw.get("size"), sha256=raw.get("sha256", ""),
                 git_sha1=raw.get("git_sha1", ""))
    if (not (f.sha256 or f.git_sha1) or not f.urls or not f.path or Path(f.path).is_absolute()
            or ".." in Path(f.path).parts or "\0" in f.path):
        raise ValueError(f"{where}: {f.path!r} needs a relative path, a URL and a checksum")
    return f


def parse_catalog(doc: dict, where: str = "catalog") -> dict[str, DataSet]:
    """The sets of a catalog document, by name (a malformed entry is a ValueError: the catalog ships with the code)."""
    sets: dict[str, DataSet] = {}
    for raw in doc["sets"]:
        if not isinstance(raw.get("name"), str) or not _SET_NAME.fullmatch(raw["name"]) or raw["name"] == "..":
            raise ValueError(f"{where}: set name {raw.get('name')!r} must be one plain folder name (letters, digits, "
                             "'.', '_', '-'), inside the data folder")
        files = tuple(_file(f, f"{where}: {raw['name']}") for f in raw["files"])
        sets[raw["name"]] = DataSet(name=raw["name"], suite=raw["suite"], description=raw["description"],
                                    license=raw["license"], citation=raw["citation"], homepage=raw["homepage"],
                                    entry=raw["entry"], checksum_source=raw["checksum_source"], files=files)
    return sets


@cache
def catalog() -> dict[str, DataSet]:
    """The shipped catalog, by name (an unreadable or malformed one is one BenchError line)."""
    try:
        return parse_catalog(json.loads(CATALOG.read_text(encoding="utf-8")), str(CATALOG))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BenchError(f"{CATALOG}: not a usable data catalog ({type(exc).__name__}: {exc}); reinstall "
                         "memini-bench or undo the edit") from None


def data_root() -> Path:
    """Where fetched sets live (module docstring)."""
    if value := os.environ.get(ENV, "").strip():
        return Path(value).expanduser()
    cache_home = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(cache_home) / "memini-bench" / "data"


def get(name: str) -> DataSet:
    sets = catalog()
    if name not in sets:
        raise BenchError(f"data set {name!r}: not registered; use one of {', '.join(sets)} (memini-bench data list)")
    return sets[name]


def fetch_command(name: str) -> str:
    return f"memini-bench data fetch {name}"


def is_fetched(ds: DataSet) -> bool:
    """Every file is in place with its registered size (checksums are checked by ``verify`` and on load)."""
    for f in ds.files:
        p = ds.folder() / f.path
        if not p.is_file() or (f.size is not None and p.stat().st_size != f.size):
            return False
    return True


def resolve_data(suite: str, value: str) -> tuple[str, DataSet | None]:
    """``-data VALUE``: a registered name (when no such path exists) becomes its fetched entry path; anything else
    is returned as is. A name whose set is not fetched, or is read by another suite, is a BenchError."""
    sets = catalog()
    if not value or value not in sets or os.path.exists(value):
        return value, None
    ds = sets[value]
    if suite != ds.suite:
        raise BenchError(f"-data {value}: the registered set {value} is read by -suite {ds.suite}, not -suite {suite}")
    if not is_fetched(ds):
        raise BenchError(f"-data {value}: not fetched into {ds.folder()}; run {fetch_command(value)} first")
    return str(ds.entry_path()), ds


def missing_file_hint(value: str) -> str:
    """For a ``-data`` path that does not exist: the fetch command when its file name is a registered set's."""
    if not value or os.path.exists(value):
        return ""
    base = os.path.basename(os.path.normpath(value))
    for ds in catalog().values():
        if ds.entry != "." and os.path.basename(ds.entry) == base:
            return (f"{value}: no such file; it is the registered data set {ds.name}: {fetch_command(ds.name)}, then "
                    f"pass -data {ds.name}")
    return ""


def check_sources(ds: DataSet, sources: object) -> None:
    """After a load from a registered set: every file the loader read that the catalog lists by SHA-256 must match
    (the loader hashed exactly the bytes it parsed), else the copy changed since it was fetched."""
    expected = {str(ds.folder() / f.path): f for f in ds.files}
    for source in sources:  # type: ignore[attr-defined]
        f = expected.get(str(Path(source.path)))
        if f is not None and f.sha256 and source.sha256 != f.sha256:
            raise BenchError(f"-data {ds.name}: {source.path} has sha256 {source.sha256}, not the registered "
                             f"{f.sha256}; run {fetch_command(ds.name)} again")
