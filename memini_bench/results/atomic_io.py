"""Writing output files safely: atomically, with the umask's mode, no temp file left behind, and every
destination checked for use before any work.

``atomic_write`` writes through a temp file in the target's folder and renames it over the target. On Linux the
temp file is unnamed (``O_TMPFILE``) until it is complete, so a process killed mid-write leaves nothing; elsewhere
it is ``.<name>.<pid>.<hex>.tmp``, and the next write of the same name removes those whose process is gone.
``check_destinations`` probes each output folder by creating (and removing) a temp file there, so a read-only
folder is refused up front rather than after the whole run. ``RunOutputs`` makes every file one run writes one
unit: staged while the run goes, placed together at its end (under a lock of their folders, and only where no
other process has written a target since the run claimed it), none of them left after a failure.

Every write first checks its target (``check_target``): a symbolic link (which the writer did not make), a folder,
a device, a FIFO or a socket is refused, and so is a memini-bench results file unless the write is itself a results
file (``results=True``: a rerun replaces its own results). Two outputs of one run that are one path, or where one
would have to be a folder holding the other, are refused before any work (``check_destinations``).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from pathlib import Path

from memini_bench.errors import BenchError

#: A named temp file without a pid (written by older versions) is removed once it is this old.
STALE_TEMP_S = 3600.0
_UNNAMED_TEMP = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def _temp_file(folder: Path, name: str, *, named: bool = False) -> tuple[int, Path | None]:
    """A new file in ``folder`` with the umask's mode, open for writing: unnamed where the system allows it and
    ``named`` is not asked for (Linux ``O_TMPFILE``: a process killed while writing leaves nothing behind), else
    ``.<name>.<pid>.<hex>.tmp``."""
    flags = os.O_WRONLY | os.O_CLOEXEC
    if _UNNAMED_TEMP and not named:
        try:
            return os.open(folder, flags | os.O_TMPFILE, 0o666), None
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
    tmp = folder / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    return os.open(tmp, flags | os.O_CREAT | os.O_EXCL, 0o666), tmp


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def remove_stale_temps(folder: Path, name: str) -> None:
    """Remove the named temp files of earlier writes of ``name`` whose process is gone (and, from versions that
    did not put the pid in the name, any older than ``STALE_TEMP_S``)."""
    pattern = re.compile(re.escape(f".{name}.") + r"(?:(\d+)\.[0-9a-f]{8}|[^.]+)\.tmp")
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None:
            continue
        try:
            stale = not _pid_alive(int(m.group(1))) if m.group(1) else now - entry.stat().st_mtime > STALE_TEMP_S
            if stale:
                os.unlink(entry.path)
        except OSError:
            pass


def _commit(fd: int, tmp: Path | None, path: Path) -> None:
    """Make the written temp file ``path`` (an unnamed one is linked in under a temp name first)."""
    if tmp is None:
        tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:  # a dir fd makes os.link call linkat(AT_SYMLINK_FOLLOW): plain link() would link the /proc symlink
            os.link(f"/proc/self/fd/{fd}", tmp.name, dst_dir_fd=folder, follow_symlinks=True)
        finally:
            os.close(folder)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _open_temp(path: Path, *, named: bool = False) -> tuple[int, Path | None]:
    """The temp file ``path`` is written through (``_temp_file``; its folder made, stale temps of earlier writes
    removed); a path that cannot take it is a one-line BenchError."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(path.parent, path.name)
        return _temp_file(path.parent, path.name, named=named)
    except ValueError:  # a NUL in the path
        raise BenchError(f"{str(path)!r}: the path contains a NUL character; choose another path") from None
    except OSError as exc:
        raise BenchError(f"{path}: cannot write ({exc.strerror or exc}); choose another path") from None


#: How much of an existing file ``check_target`` reads to tell a results file (its first key is ``"schema"``).
RESULTS_SNIFF_BYTES = 4096
_RESULTS_MARK = re.compile(rb'^\s*\{\s*"schema"\s*:\s*"memini-bench\.results"')


def is_results_file(path: Path) -> bool:
    """Whether the regular file ``path`` starts as a memini-bench results file (``{"schema":
    "memini-bench.results"``); read without following a link and without blocking, at most
    ``RESULTS_SNIFF_BYTES``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and bool(_RESULTS_MARK.match(os.read(fd, RESULTS_SNIFF_BYTES)))
    except OSError:
        return False
    finally:
        os.close(fd)


def target_problem(path: Path, *, results: bool = False) -> str:
    """Why ``path`` must not be written over ("" when it may): a symbolic link, a folder, anything but a regular
    file, or (unless ``results``) a memini-bench results file."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except ValueError:
        return "the path contains a NUL character; choose another path"
    except OSError as exc:
        return f"cannot be used ({exc.strerror or exc}); choose another path"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link (memini-bench writes no file through a link it did not make); give its target " \
               "or another path"
    if stat.S_ISDIR(st.st_mode):
        return "is a folder, where a file would be written; choose another path"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file (a device, FIFO or socket), which a write would replace; choose another path"
    if not results and is_results_file(path):
        return "is a memini-bench results file, which this output would replace; choose another path"
    return ""


def check_target(path: Path, *, results: bool = False, flag: str = "") -> None:
    """Raise the one-line BenchError of ``target_problem`` (named by ``flag`` when given)."""
    why = target_problem(path, results=results)
    if why:
        raise BenchError(f"{flag + ' ' if flag else ''}{path}: {why}")


def _fill(fd: int, write: Callable[[Callable[[bytes], object]], None]) -> None:
    """Run ``write`` on the open file ``fd``, then flush and fsync it (``fd`` stays open)."""
    with os.fdopen(fd, "wb", closefd=False) as fh:
        write(fh.write)
        fh.flush()
        os.fsync(fh.fileno())


def atomic_write(path: Path, write: Callable[[Callable[[bytes], object]], None], *, results: bool = False) -> None:
    """Write through a temp file in the same folder, fsync, then rename over ``path``: a crash, a kill or an error
    leaves the previous file (or none) in place, never a half-written one, and no temp file. The file gets the
    umask's mode, like any file the user creates. ``path`` is checked first (``check_target``; ``results``: this
    write is a results file, which may replace one). Inside ``RunOutputs`` the file is staged and placed with the
    run's other outputs at the end instead."""
    path = Path(path)
    check_target(path, results=results)
    unit = _UNIT.get()
    if unit is not None:
        unit.stage(path, write, results=results)
        return
    fd, tmp = _open_temp(path)
    try:
        _fill(fd, write)
        _commit(fd, tmp, path)
    except OSError as exc:  # a full disk, or a folder where the file should go
        raise BenchError(f"{path}: cannot write ({exc.strerror or exc}); choose another path") from None
    finally:
        os.close(fd)
        if tmp is not None:
            tmp.unlink(missing_ok=True)


def _writable(folder: Path) -> str:
    """Why files cannot be created in ``folder`` (or, when it does not exist yet, in its nearest existing
    ancestor, where it would be made), or "" when they can: probed by creating a temp file and removing it."""
    if "\0" in str(folder):
        return "the path contains a NUL character"
    probe = folder
    while not probe.exists() and probe != probe.parent:  # a name too long raises OSError: the caller says so
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is a file, not a folder"
    try:
        fd, tmp = _temp_file(probe, "memini-bench-probe")
    except OSError as exc:
        return f"cannot be written ({exc.strerror or exc})"
    os.close(fd)
    if tmp is not None:
        tmp.unlink(missing_ok=True)
    return ""


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def check_distinct(*, folders: Sequence[tuple[str, str]] = (), files: Sequence[tuple[str, str]] = ()) -> None:
    """Refuse two outputs of one run that are one path (made absolute), or a file output that is, or is inside,
    another output's path (one would have to be a folder holding the other). Empty paths are skipped; two
    folders may nest."""
    named = [(flag, p, True) for flag, p in files if p] + [(flag, p, False) for flag, p in folders if p]
    for i, (flag_a, a, a_file) in enumerate(named):
        for flag_b, b, b_file in named[i + 1:]:
            pa, pb = Path(os.path.abspath(a)), Path(os.path.abspath(b))
            if pa == pb or (a_file and pa in pb.parents) or (b_file and pb in pa.parents):
                raise BenchError(f"{flag_a} {a} and {flag_b} {b}: two outputs of this run are one path (or one "
                                 "would be a folder holding the other); give them separate paths")


def check_destinations(*, folders: Sequence[tuple[str, str]] = (), files: Sequence[tuple[str, str]] = (),
                       results: Sequence[tuple[str, str]] = ()) -> None:
    """Refuse, before any work, output paths that cannot be used: two that collide (``check_distinct``), a
    (flag, folder) that is an existing file or where files cannot be created (a read-only folder, or a read-only
    parent of a folder to be made), a (flag, file) that is an existing folder, a link, a special file or a results
    file (``check_target``; ``results``: files that are results files themselves, which may replace one) or whose
    folder cannot take it. Empty paths are skipped."""
    check_distinct(folders=folders, files=[*files, *results])
    own = {flag for flag, _ in results}
    for flag_name, folder in folders:
        if not folder:
            continue
        try:
            if Path(folder).exists() and not Path(folder).is_dir():
                raise BenchError(f"{flag_name} {folder}: is a file, not a folder; choose another path")
            why = _writable(Path(folder))
        except OSError as exc:
            why = f"cannot be used ({exc.strerror or exc})"
        if why:
            raise BenchError(f"{flag_name} {folder}: {why}; choose another folder")
    for flag_name, file in [*files, *results]:
        if not file:
            continue
        try:
            p = Path(file)
            if p.is_dir() or (p.parent.exists() and not p.parent.is_dir()):
                raise BenchError(f"{flag_name} {file}: cannot be written as a file; choose another path")
            check_target(p, flag=flag_name, results=flag_name in own)
            why = _writable(p.parent)
        except OSError as exc:
            why = f"cannot be used ({exc.strerror or exc})"
        if why:
            raise BenchError(f"{flag_name} {file}: {why}; choose another path")


_UNIT: ContextVar[RunOutputs | None] = ContextVar("memini_bench_run_outputs", default=None)


def _state(path: Path) -> tuple[int, int, int, int] | None:
    """What ``path`` is now, to tell whether another process replaced it: (device, inode, size, mtime), None when
    nothing is there."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def expect_unchanged(path: Path) -> None:
    """Inside ``RunOutputs``: note what ``path`` is now (the run claimed it: ``results.identity.claim``); the run's
    outputs are placed only if it is still that when the run ends (another run writing it meanwhile is refused,
    not silently replaced). Outside a run, nothing."""
    unit = _UNIT.get()
    if unit is not None:
        unit.expect(path)


class _FolderLocks:
    """Exclusive ``flock``s on folders (their own descriptors: no lock file is left), taken in path order so two
    runs cannot deadlock; where ``fcntl`` is missing (Windows) nothing is locked."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = sorted(set(folders))
        self.fds: list[int] = []

    def __enter__(self) -> _FolderLocks:
        try:
            import fcntl
        except ImportError:
            return self
        try:
            for folder in self.folders:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                self.fds.append(fd)
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.fds:
            os.close(fd)  # closing the descriptor releases its lock
        self.fds.clear()


class RunOutputs:
    """A run's output files placed as one unit: inside ``with RunOutputs():`` every ``atomic_write`` is staged
    (written, flushed and fsynced to a named temp file beside its target, so a full disk or an unwritable folder
    shows while staging), and the files are renamed into place together when the block ends without an error.
    On an error, an interrupt or SIGTERM (which the CLI turns into an interrupt) before or while they are placed,
    none of this run's files is left: placed ones are removed, the earlier files they replaced are put back, and
    every temp file is removed. Two outputs of one run with the same path are refused (one would be lost)."""

    def __init__(self) -> None:
        self._staged: dict[Path, Path] = {}   # final path -> its written temp file
        self._expected: dict[Path, tuple[int, int, int, int] | None] = {}  # final path -> what it was when claimed

    def expect(self, path: Path) -> None:
        """Note what ``path`` is now (first note wins): placing this run's file there is refused if another
        process has written it by then (``commit``)."""
        final = Path(os.path.abspath(path))
        self._expected.setdefault(final, _state(final))

    def __enter__(self) -> RunOutputs:
        self._token = _UNIT.set(self)
        return self

    def __exit__(self, kind, value, tb) -> None:
        _UNIT.reset(self._token)
        if kind is None:
            self.commit()
        else:
            self.discard()

    def stage(self, path: Path, write: Callable[[Callable[[bytes], object]], None], *, results: bool = False) -> None:
        final = Path(os.path.abspath(path))
        clash = next((p for p in self._staged if _overlap(p, final)), None)
        if clash is not None:
            raise BenchError(f"{path}: two outputs of this run are this one file (or one would be a folder holding "
                             "the other); give them different paths")
        if final.is_dir():
            raise BenchError(f"{path}: is a folder, where this run would write a file; choose another path")
        check_target(final, results=results)
        self._expected.setdefault(final, _state(final))
        fd, tmp = _open_temp(final, named=True)   # named: it is renamed into place at the end
        assert tmp is not None
        self._staged[final] = tmp
        try:
            _fill(fd, write)
        except OSError as exc:
            raise BenchError(f"{path}: cannot write ({exc.strerror or exc}); choose another path") from None
        finally:
            os.close(fd)

    def commit(self) -> None:
        """Place every staged file; on any failure undo what was placed (see the class docstring). Under an
        exclusive lock of each target folder, every target must still be what it was when the run claimed it
        (``expect``): a file another run placed there meanwhile (two runs onto one name at once) refuses this run's
        outputs, so that one of the two fails instead of both succeeding with one's results lost."""
        try:
            with _FolderLocks([final.parent for final in self._staged]):
                self._check_unchanged()
                self._place()
        except OSError as exc:
            self.discard()
            raise BenchError(f"cannot place this run's outputs ({exc.strerror or exc}); none of them was "
                             "kept") from None

    def _check_unchanged(self) -> None:
        for final in self._staged:
            if final in self._expected and _state(final) != self._expected[final]:
                self.discard()
                raise BenchError(f"{final}: another process wrote this file while this run was going (two runs "
                                 "onto one name at once); none of this run's outputs was placed, the other's is "
                                 "kept; run again, or give each run its own -name LABEL or -out")

    def _place(self) -> None:
        placed: list[tuple[Path, Path | None]] = []   # (final, where the file it replaces was moved; None: none)
        try:
            for final, tmp in self._staged.items():
                backup = None
                if final.exists():
                    backup = final.parent / f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}.bak.tmp"
                placed.append((final, backup))   # recorded first: an interrupt between the two renames is undone
                if backup is not None:
                    os.replace(final, backup)
                os.replace(tmp, final)
        except BaseException as exc:
            for final, backup in reversed(placed):
                if backup is None:
                    final.unlink(missing_ok=True)      # a new file of this run (or not placed yet)
                elif backup.exists():
                    os.replace(backup, final)          # the earlier file back, over this run's
            self.discard()
            if isinstance(exc, OSError):
                raise BenchError(f"{placed[-1][0] if placed else 'outputs'}: cannot place this run's outputs "
                                 f"({exc.strerror or exc}); none of them was kept") from None
            raise
        for _, backup in placed:
            if backup is not None:
                backup.unlink(missing_ok=True)
        self._staged.clear()

    def discard(self) -> None:
        for tmp in self._staged.values():
            tmp.unlink(missing_ok=True)
        self._staged.clear()
