"""Two runs with other settings onto one file name at once (the same ``-out`` and ``-name``) never both exit 0
with one's results lost: each claims the name before any work, and its outputs are placed only where no other run
has written that name since (``atomic_io.RunOutputs.commit``, under a lock of the folder). Over many rounds, every
run that exits 0 has its own results in the folder; the other fails with one line."""

from __future__ import annotations

import json
import multiprocessing
import os
import sys

import pytest

from memini_bench.errors import BenchError
from memini_bench.results.atomic_io import RunOutputs, atomic_write, expect_unchanged

ROUNDS = 12


def _run(barrier, k: str, out: str, err_path: str) -> None:
    from memini_bench.cli import main

    fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    barrier.wait()
    try:
        main(["-suite", "sample", "-embedder", "hash", "-systems", "keyword", "-k", k, "-out", out, "-name", "race"])
    except SystemExit as exc:
        os._exit(exc.code if isinstance(exc.code, int) else 1)
    os._exit(0)


@pytest.mark.slow  # 12 rounds of two forked runs: about 10 s of CPU, a minute of wall time on a busy machine
@pytest.mark.skipif(sys.platform != "linux", reason="fork start method and flock: Linux")
def test_two_runs_onto_one_name_at_once_never_both_succeed_with_one_lost(tmp_path):
    ctx = multiprocessing.get_context("fork")
    lost = []
    for n in range(ROUNDS):
        out = tmp_path / f"r{n}"
        barrier = ctx.Barrier(2)
        procs = {k: ctx.Process(target=_run, args=(barrier, k, str(out), str(tmp_path / f"err{n}-{k}")))
                 for k in ("1", "3")}
        for p in procs.values():
            p.start()
        for p in procs.values():
            p.join(120)
        codes = {k: p.exitcode for k, p in procs.items()}
        assert set(codes.values()) <= {0, 2}, codes
        kept = [json.loads(f.read_text())["config"]["ks"] for f in out.glob("*.json")] if out.exists() else []
        for k, code in codes.items():
            err = (tmp_path / f"err{n}-{k}").read_text()
            if code == 0 and [int(k)] not in kept:
                lost.append((n, k, codes, kept))
            if code == 2:
                assert "another process wrote this file while this run was going" in err.strip().splitlines()[-1] \
                    or "holds a run made with other settings" in err, err
        assert not [f for f in (out.iterdir() if out.exists() else []) if f.name.endswith(".tmp")]
    assert lost == []


def test_a_target_written_by_another_process_meanwhile_refuses_this_runs_outputs(tmp_path):
    target, other = tmp_path / "r.json", tmp_path / "side.json"
    with pytest.raises(BenchError, match="another process wrote this file"), RunOutputs():
        expect_unchanged(target)                      # claimed: nothing there
        atomic_write(other, lambda w: w(b"mine"))
        target.write_text("the other run's")          # another run places its file meanwhile
        atomic_write(target, lambda w: w(b"mine"))
    assert target.read_text() == "the other run's" and not other.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    with RunOutputs():                                # a rerun over a file unchanged since its claim replaces it
        expect_unchanged(target)
        atomic_write(target, lambda w: w(b"rerun"))
    assert target.read_text() == "rerun"
