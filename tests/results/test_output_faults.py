"""Writing outputs under faults: destinations probed before any work, no temp file left by an error or a kill,
files with the umask's mode, TREC ids that any reader splits right."""

from __future__ import annotations

import os
import signal
import time
import urllib.parse

import pytest
from unprivileged import as_unprivileged

from memini_bench.errors import BenchError
from memini_bench.results import atomic_io
from memini_bench.results.write import check_destinations, trec_id, write_json


@pytest.fixture(params=["unnamed", "named"])
def temp_scheme(request, monkeypatch):
    """Both temp-file schemes: Linux's unnamed O_TMPFILE and the named fallback."""
    if request.param == "unnamed" and not atomic_io._UNNAMED_TEMP:
        pytest.skip("no O_TMPFILE here")
    monkeypatch.setattr(atomic_io, "_UNNAMED_TEMP", request.param == "unnamed")
    return request.param


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_results_files_get_the_umask_s_mode(tmp_path, temp_scheme, umask, mode):
    old = os.umask(umask)
    try:
        write_json(tmp_path / "r.json", {"a": 1})
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == mode
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_killed_write_leaves_no_temp_file(tmp_path, temp_scheme):
    """A child process starts writing, is SIGKILLed mid-write; with the unnamed scheme nothing is left, with the
    named one the next write of that file removes the dead process's temp file."""
    target = tmp_path / "run.trec"
    target.write_text("previous")
    ready, told = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready)

            def slow(w):
                w(b"partial")
                os.write(told, b"x")  # mid-write now: the parent kills it here (not after a guessed delay)
                time.sleep(600)

            atomic_io.atomic_write(target, slow)
        finally:
            os._exit(0)
    os.close(told)
    assert os.read(ready, 1) == b"x"
    os.close(ready)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert target.read_text() == "previous"
    if temp_scheme == "unnamed":
        assert left == ["run.trec"]
    else:
        assert len(left) == 2 and left[0].startswith(f".run.trec.{pid}.") and left[0].endswith(".tmp")
    atomic_io.atomic_write(target, lambda w: w(b"new"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.trec"] and target.read_text() == "new"


def test_stale_temp_cleanup_spares_live_writers_and_fresh_files(tmp_path):
    live = tmp_path / f".r.json.{os.getpid()}.0123abcd.tmp"
    dead = tmp_path / ".r.json.999999999.0123abcd.tmp"
    old_style, fresh_old_style = tmp_path / ".r.json.k2j4_x9q.tmp", tmp_path / ".r.json.abcdefgh.tmp"
    other = tmp_path / ".other.json.999999999.0123abcd.tmp"
    for p in (live, dead, old_style, fresh_old_style, other):
        p.write_text("x")
    os.utime(old_style, (time.time() - 2 * atomic_io.STALE_TEMP_S,) * 2)
    write_json(tmp_path / "r.json", {})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, fresh_old_style.name, other.name, "r.json"])


def test_a_failed_write_leaves_no_temp_file(tmp_path, temp_scheme):
    with pytest.raises(TypeError):
        write_json(tmp_path / "r.json", {"x": object()})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["folder", "to-be-made", "file"])
def test_a_read_only_destination_is_refused_up_front(open_tmp, where):
    tmp_path = open_tmp
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if where == "file":
        call = lambda: check_destinations(files=[("-per-question", str(ro / "pq.jsonl"))])  # noqa: E731
    else:
        folder = ro if where == "folder" else ro / "new" / "deeper"
        call = lambda: check_destinations(folders=[("-out", str(folder))])  # noqa: E731
    kind, message = as_unprivileged(call)
    assert kind == "BenchError" and "cannot be written (Permission denied)" in message, message
    assert list(ro.iterdir()) == []
    check_destinations(folders=[("-out", str(tmp_path / "fine" / "new"))], files=[("-x", str(tmp_path / "f"))])
    assert not (tmp_path / "fine").exists()  # a probe creates nothing that stays


def test_unusable_destination_names_are_one_line_errors(tmp_path):
    for folder, fragment in ((tmp_path / ("x" * 300), "File name too long"),
                             (tmp_path / ("x" * 300) / "y", "File name too long"), (tmp_path / "a\0b", "NUL")):
        with pytest.raises(BenchError) as exc:
            check_destinations(folders=[("-out", str(folder))])
        assert fragment in str(exc.value) and "\n" not in str(exc.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(BenchError, match="NUL"):
        write_json(tmp_path / "a\0b" / "r.json", {})


@pytest.mark.parametrize("text", ["plain", "a b", "tab\there", "new\nline", "cr\rx", "nul\0", "100%", "#x", "é",
                                  "\u2028", "\x85", "", " "])
def test_trec_ids_are_one_column_and_round_trip(text):
    escaped = trec_id(text)
    assert escaped and escaped.split() == [escaped] and escaped.isascii() and escaped.isprintable()
    assert (urllib.parse.unquote(escaped) if text else "") == text
    assert trec_id("a b") != trec_id("a_b") != trec_id("a%20b")
