"""Results with an identity: a results file is named after every setting that changes its numbers.

``identity(settings, ...)`` is the dict of those settings (the embedder, every hybrid setting, the loader settings,
the holdout and limit, the systems run, and the mode's own settings); it is recorded in the results config (a run
adds what only it knows: ``modes.common.run_identity``). Each part of a run contributes its own keys and name
tokens (``core.settings.IdentityPart``: the embedder's ``embed.settings.identity_part``, the lineup's
``systems.lineup.identity_parts``, the loader's ``loaders.identity_part``), so this module knows no system or
embedder. The file stem is the data set name (which already carries the suite's variant, holdout and limit)
followed by one short token per setting that differs from its default, in a fixed order (``locomo-fusion-1``,
``locomo-emb-hash-tboost0.4``), or by ``-name LABEL``. A setting's token is declared on the setting itself
(``setting(..., token="tboost")``), so a new setting names its files without a side list here.

Where the readable name is not enough (what it does not spell: the data file's sha256, the K list, an endpoint's
model or prefixes, a plugin's ``describe()``, the paired tests' settings, or a ``-name`` label reused), two runs
would meet at one name. ``claim(path, identity)`` settles that before any work: the readable path when no file is
there or the file there records this very identity (a rerun replaces its own file), else
``<stem>-<hash>.json``, ``hash`` the first 8 hex digits of ``identity_hash(identity)`` (SHA-256 of the identity's
canonical JSON: sorted keys, orjson), so the same settings always land on the same file and two different ones
never do. A file that records no identity (an older or foreign file) is never replaced. The one case left, a
hashed name whose file holds yet another identity (a 32-bit prefix collision, or a foreign file), is refused
with one line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from memini_bench.core.dataset import MAX_NAME_BYTES, file_safe_name
from memini_bench.core.options import CoreOptions
from memini_bench.core.settings import IdentityPart
from memini_bench.errors import BenchError


@dataclass(frozen=True)
class RunSettings:
    """What a results file's identity and name are made of: the core settings (suite, holdout, limit), ``-name``,
    and the parts of the run, each contributing its own keys and name tokens (``core.settings.IdentityPart``: the
    embedder's, the systems', the loader's); this module knows none of them."""

    core: CoreOptions = field(default_factory=CoreOptions)
    parts: tuple[IdentityPart, ...] = ()
    name: str = ""  # -name LABEL


def identity(s: RunSettings, *, systems: list[str], mode: str = "compare", mode_settings: dict | None = None) -> dict:
    """Every setting that changes a results file's numbers (recorded in its config; compared before overwrite):
    the mode, the suite, holdout and limit, the systems run, the mode's own settings and each part's items."""
    out: dict[str, object] = {"mode": mode, "suite": s.core.suite, "holdout": s.core.holdout, "limit": s.core.limit,
                              "systems": list(systems), "mode_settings": mode_settings or {}}
    for part in s.parts:
        out.update(part.items)
    return out


def stem(s: RunSettings, dataset: str, *, suffix: str = "", extra_tokens: tuple[str, ...] = ()) -> str:
    """``<dataset>[<suffix>]`` then ``-<LABEL>`` when ``-name`` is given, else each part's tokens in order
    (``extra_tokens``: the mode's own non-default settings, already spelled)."""
    base = safe_name(dataset) + suffix
    if s.name:
        return f"{base}-{safe_name(s.name)}"
    tokens = [t for part in s.parts for t in part.tokens] + list(extra_tokens)
    return "-".join([base, *(safe_name(t) for t in tokens)])


def safe_name(text: str) -> str:
    """``text`` as one safe file-name component (``dataset.file_safe_name``: no path separators, no leading dots)."""
    return file_safe_name(text, MAX_NAME_BYTES)


#: A file's recorded identity: the dict, or NO_IDENTITY when the file is missing, unreadable or records none.
NO_IDENTITY = object()
#: Reads the identity a file at a path records (``results_identity`` for a results file).
IdentityReader = Callable[[Path], object]
HASH_DIGITS = 8
NAME_MAX_BYTES = 255  # a file name's limit on Linux and macOS file systems


def results_identity(path: Path) -> object:
    """``config.identity`` of the results file at ``path``; ``NO_IDENTITY`` when it cannot be read or has none."""
    if not path.is_file():  # a folder, a FIFO, a device: no results file (and never read)
        return NO_IDENTITY
    try:
        ident = orjson.loads(path.read_bytes()).get("config", {}).get("identity")
    except (OSError, ValueError, AttributeError):
        return NO_IDENTITY
    return ident if isinstance(ident, dict) else NO_IDENTITY


def identity_hash(ident: dict) -> str:
    """SHA-256 (hex) of ``ident``'s canonical JSON (keys sorted); the name's hash is its first 8 digits."""
    return hashlib.sha256(orjson.dumps(ident, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)).hexdigest()


@dataclass(frozen=True)
class Companion:
    """A file a run writes beside its results (e.g. the QA checkpoint): it takes the results' name with ``suffix``
    in place of ``.json`` and must record ``identity`` (read by ``read``) for the name to be this run's."""

    suffix: str
    identity: dict
    read: IdentityReader


def _differs(path: Path, ident: dict, read: IdentityReader) -> list[str] | None:
    """None when ``path`` is free for ``ident`` (no file, or one that records ``ident``), else the top-level keys
    that differ (``["no identity"]`` for a file that records none)."""
    if not path.exists() and not path.is_symlink():
        return None
    old = read(path)
    if old is NO_IDENTITY:
        return ["no identity"]
    assert isinstance(old, dict)
    ident = orjson.loads(orjson.dumps(ident, option=orjson.OPT_NON_STR_KEYS))  # as the file would hold it
    if old == ident:
        return None
    return sorted(k for k in set(old) | set(ident) if old.get(k) != ident.get(k))


def _taken(path: Path, ident: dict, read: IdentityReader, suffix: str,
           companions: Sequence[Companion]) -> tuple[Path, list[str]] | None:
    """The first of ``path`` and its companions that holds another run, with the keys that differ."""
    base = path.name.removesuffix(suffix)
    for where, want, reader in ((path, ident, read),
                                *((path.with_name(base + c.suffix), c.identity, c.read) for c in companions)):
        differing = _differs(where, want, reader)
        if differing is not None:
            return where, differing
    return None


def claim(path: Path, ident: dict, *, suffix: str = ".json", companions: Sequence[Companion] = (),
          read: IdentityReader = results_identity) -> Path:
    """The path this run writes (see the module docstring): ``path`` when it is free for ``ident``, else the name
    with ``-<hash>`` before ``suffix`` (said on stderr). ``read`` reads the identity a file at ``path`` records
    (a folder's: that of a file in it); ``companions`` are files named after it that must be free too. Called
    before any work."""
    from memini_bench.results.atomic_io import expect_unchanged

    found = _taken(path, ident, read, suffix, companions)
    if found is None:
        expect_unchanged(path)  # another run placing a file here before this one ends: refused, not lost
        return path
    base, tail = path.name.removesuffix(suffix), f"-{identity_hash(ident)[:HASH_DIGITS]}{suffix}"
    while len((base + tail).encode()) > NAME_MAX_BYTES:  # a name near the file system's limit: cut, hash kept
        base = base[:-1]
    hashed = path.with_name(base + tail)
    clash = _taken(hashed, ident, read, suffix, companions)
    if clash is not None:
        raise BenchError(f"{clash[0]}: holds a run made with other settings ({', '.join(clash[1])}) under this "
                         "run's hashed name; give -name LABEL or another -out so neither is lost")
    print(f"{found[0]} holds a run made with other settings ({', '.join(found[1])}); this run writes {hashed}",
          file=sys.stderr, flush=True)
    expect_unchanged(hashed)
    return hashed


def script_identity(kind: str, settings: object, *, inputs: Sequence[str] = (), **resolved: object) -> dict:
    """A study script's results identity: ``kind``, every field of its settings dataclass but where it writes
    (``out``, ``no_write``), each input file named by a field in ``inputs`` as its sha256 (a path that is no
    regular file as itself: the script says what is wrong with it), and ``resolved`` (what the settings leave to
    the environment, e.g. the embedders an endpoint name expands to)."""
    from memini_bench.results.provenance import input_sha256

    out: dict[str, object] = {"mode": kind}
    for f in dataclasses.fields(settings):  # type: ignore[arg-type]
        if f.name in ("out", "no_write"):
            continue
        value = getattr(settings, f.name)
        sha = input_sha256(value) if f.name in inputs and value else None
        out[f.name] = {"sha256": sha} if sha else value
    return {**out, **resolved}


def check_overwrite(path: Path, ident: dict) -> None:
    """Refuse to replace ``path`` when it holds a run whose recorded identity differs from ``ident`` (the last
    guard at write time: ``claim`` chose the path before the run, so this fires only when another process wrote
    there meanwhile)."""
    differing = _differs(path, ident, results_identity)
    if differing is not None:
        raise BenchError(f"{path}: holds a run made with other settings ({', '.join(differing)}), written while this "
                         "run worked; give -name LABEL or another -out so neither is lost")
