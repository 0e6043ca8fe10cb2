"""Every writer refuses a dangerous target before any work: a results file (unless it writes one itself), a device,
a FIFO, a socket, a symbolic link it did not make; two outputs of one run that are one path (or where one would be
a folder holding the other) are one line, exit 2, nothing written."""

from __future__ import annotations

import os
import shutil
import socket
import stat
from pathlib import Path

import pytest
from cli_run import run_cli

from memini_bench.errors import BenchError
from memini_bench.results.atomic_io import RunOutputs, atomic_write, check_destinations, check_distinct, target_problem
from memini_bench.results.write import write_json

SAMPLE = Path(__file__).resolve().parents[2] / "memini_bench" / "data" / "sample.json"
HASH = ["-suite", "file", "-data", str(SAMPLE), "-embedder", "hash"]
STEM = "memini-sample-emb-hash.json"


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


def _one_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err, err
    assert lines[-1].startswith("memini-bench") and "error:" in lines[-1], err
    return lines[-1]


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """One run's folder holding its results file (written once for the module)."""
    folder = tmp_path_factory.mktemp("runs") / "r"
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "memini_bench", *HASH, "-out", str(folder)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0, done.stderr
    return folder


def test_report_table_over_a_results_file_is_refused(run_folder, tmp_path, capsys):
    results = tmp_path / STEM
    shutil.copy(run_folder / STEM, results)
    before = results.read_bytes()
    line = _one_line(*run_cli(["report", str(run_folder), "-format", "md", "-o", str(results)], capsys)[::2])
    assert "results file" in line and str(results) in line
    assert results.read_bytes() == before and _tree(tmp_path) == {STEM}


def _special(kind: str, path: Path) -> object:
    if kind == "fifo":
        os.mkfifo(path)
        return None
    if kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        return sock
    try:
        os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 3))   # a /dev/null twin (mknod ./nulldev c 1 3)
    except PermissionError:
        pytest.skip("mknod needs privileges here")
    return None


@pytest.mark.parametrize("kind", ["device", "fifo", "socket"])
def test_report_table_onto_a_special_file_is_refused_and_the_file_stays(run_folder, tmp_path, capsys, kind):
    target = tmp_path / "special"
    keep = _special(kind, target)
    mode = os.lstat(target).st_mode
    line = _one_line(*run_cli(["report", str(run_folder), "-format", "md", "-o", str(target)], capsys)[::2])
    assert "not a regular file" in line
    assert os.lstat(target).st_mode == mode and _tree(tmp_path) == {"special"}
    if keep is not None:
        keep.close()


@pytest.mark.parametrize("dangling", [True, False])
def test_no_writer_writes_through_a_link_it_did_not_make(run_folder, tmp_path, capsys, dangling):
    real = tmp_path / "real.md"
    if not dangling:
        real.write_text("mine")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    line = _one_line(*run_cli(["report", str(run_folder), "-format", "md", "-o", str(link)], capsys)[::2])
    assert "symbolic link" in line
    assert link.is_symlink() and (real.read_text() == "mine" if not dangling else not real.exists())
    with pytest.raises(BenchError, match="symbolic link"):
        write_json(link, {"a": 1})
    site = tmp_path / "site-link"
    site.symlink_to(tmp_path / "elsewhere")
    line = _one_line(*run_cli(["report", str(run_folder), "-o", str(site)], capsys)[::2])
    assert "symbolic link" in line and not (tmp_path / "elsewhere").exists()


def test_a_run_refuses_per_question_over_another_runs_results_file(run_folder, tmp_path, capsys):
    other = tmp_path / "other.json"
    shutil.copy(run_folder / STEM, other)
    before = other.read_bytes()
    line = _one_line(*run_cli([*HASH, "-out", str(tmp_path / "o"), "-per-question", str(other)], capsys)[::2])
    assert "-per-question" in line and "results file" in line
    assert other.read_bytes() == before and not (tmp_path / "o").exists()


def test_a_run_rewrites_its_own_results_file(run_folder, tmp_path, capsys):
    out = tmp_path / "o"
    shutil.copytree(run_folder, out)
    code, _, err = run_cli([*HASH, "-out", str(out)], capsys)
    assert code == 0, err


@pytest.mark.parametrize("flags", [
    ["-per-question", "{X}/pq.jsonl", "-trec", "{X}/pq.jsonl"],     # a file and a folder on one path
    ["-per-question", "{X}", "-trec", "{X}/t"],                       # a file that would be the folder of another
    ["-per-question", "{X}/a/../pq.jsonl", "-trec", "{X}/pq.jsonl/t"],
])
def test_two_outputs_of_one_run_on_one_path_are_refused_before_work(tmp_path, capsys, flags):
    x = tmp_path / "X"
    args = [*HASH, "-out", str(x), *[f.format(X=x) for f in flags]]
    line = _one_line(*run_cli(args, capsys)[::2])
    assert "two outputs of this run are one path" in line
    assert _tree(tmp_path) == set()                                   # nothing written, no .bak.tmp folder


def test_check_distinct_is_symmetric_and_lets_folders_nest(tmp_path):
    a = str(tmp_path / "a")
    check_distinct(folders=[("-out", a), ("-trec", a + "/t")], files=[("-per-question", a + "/pq.jsonl")])
    cases = [([("f", a), ("g", a)], []), ([("f", a)], [("d", a + "/sub")]), ([("f", a + "/x")], [("d", a + "/x")])]
    for files, folders in cases:
        with pytest.raises(BenchError, match="one path"):
            check_distinct(files=files, folders=folders)
        with pytest.raises(BenchError, match="one path"):
            check_distinct(files=files[::-1], folders=folders[::-1])


def test_a_run_unit_refuses_a_file_that_another_staged_file_needs_as_its_folder(tmp_path):
    with pytest.raises(BenchError, match="two outputs of this run"), RunOutputs():
        atomic_write(tmp_path / "pq.jsonl", lambda w: w(b"1"))
        atomic_write(tmp_path / "pq.jsonl" / "t.run", lambda w: w(b"2"))
    assert _tree(tmp_path) == set()


def test_target_problem_names_each_case(tmp_path, run_folder):
    (tmp_path / "plain").write_text("x")
    shutil.copy(run_folder / STEM, tmp_path / STEM)
    (tmp_path / "dir").mkdir()
    assert target_problem(tmp_path / "new") == "" and target_problem(tmp_path / "plain") == ""
    assert "results file" in target_problem(tmp_path / STEM) and target_problem(tmp_path / STEM, results=True) == ""
    assert "folder" in target_problem(tmp_path / "dir")
    with pytest.raises(BenchError, match="results file"):
        check_destinations(files=[("-x", str(tmp_path / STEM))])
    check_destinations(results=[("--out", str(tmp_path / STEM))])
