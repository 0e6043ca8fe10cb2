"""The QA checkpoint: records survive a reopen, a torn last line is dropped (and cut), other damage is an error."""

from __future__ import annotations

import json

import pytest

from memini_bench.errors import BenchError
from memini_bench.qa.checkpoint import Checkpoint

IDENTITY = {"mode": "qa", "arms": ["a@k5"]}


def _open(path, identity=IDENTITY):
    ckpt = Checkpoint(path, identity, decode=dict, encode=dict, key=lambda r: (r["arm"], r["id"]))
    return ckpt, ckpt.open()


def _rec(i, arm="a@k5"):
    return {"arm": arm, "id": f"q{i}", "correct": i % 2 == 0}


def test_records_survive_a_reopen(tmp_path):
    path = tmp_path / "c.jsonl"
    ckpt, done = _open(path)
    assert done == {}
    for i in range(3):
        ckpt.append(_rec(i))
    ckpt.close()
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"qa_checkpoint": 1, "identity": IDENTITY} and len(lines) == 4
    ckpt, done = _open(path)
    assert done == {("a@k5", f"q{i}"): _rec(i) for i in range(3)} and not ckpt.torn
    ckpt.append(_rec(3))
    ckpt.close()
    assert len(path.read_text().splitlines()) == 5


def test_a_torn_last_line_is_dropped_and_cut_before_the_next_record(tmp_path):
    path = tmp_path / "c.jsonl"
    ckpt, _ = _open(path)
    ckpt.append(_rec(0))
    ckpt.append(_rec(1))
    ckpt.close()
    with open(path, "ab") as fh:
        fh.write(b'{"arm": "a@k5", "id": "q2", "corr')  # a kill in the middle of a write
    ckpt, done = _open(path)
    assert set(done) == {("a@k5", "q0"), ("a@k5", "q1")} and ckpt.torn
    ckpt.append(_rec(2))
    ckpt.close()
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[1:] == [_rec(0), _rec(1), _rec(2)]


def test_an_unparsable_complete_last_line_counts_as_torn(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"qa_checkpoint": 1, "identity": IDENTITY}) + "\n" + json.dumps(_rec(0)) + "\n{bad\n")
    ckpt, done = _open(path)
    assert list(done) == [("a@k5", "q0")] and ckpt.torn
    ckpt.append(_rec(1))
    ckpt.close()
    assert [json.loads(line) for line in path.read_text().splitlines()][1:] == [_rec(0), _rec(1)]


def test_a_torn_header_starts_over(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"qa_check')
    ckpt, done = _open(path)
    assert done == {} and ckpt.torn
    ckpt.close()
    assert json.loads(path.read_text()) == {"qa_checkpoint": 1, "identity": IDENTITY}


def test_damage_before_the_last_line_is_an_error(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"qa_checkpoint": 1, "identity": IDENTITY}) + "\nnot json\n" + json.dumps(_rec(0))
                    + "\n")
    with pytest.raises(BenchError, match="line 2 is not a checkpoint record"):
        _open(path)


def test_another_runs_checkpoint_is_refused(tmp_path):
    path = tmp_path / "c.jsonl"
    ckpt, _ = _open(path)
    ckpt.append(_rec(0))
    ckpt.close()
    with pytest.raises(BenchError, match=r"other settings \(arms\); delete it") as exc:
        _open(path, {"mode": "qa", "arms": ["a@k10"]})
    assert "\n" not in str(exc.value)
    (tmp_path / "other.jsonl").write_text('{"something": "else"}\n')
    with pytest.raises(BenchError, match="not a QA checkpoint"):
        _open(tmp_path / "other.jsonl")


def test_no_path_keeps_records_in_memory(tmp_path):
    ckpt, done = _open(None)
    ckpt.append(_rec(0))
    ckpt.close()
    assert done == {} and list(ckpt.records) == [("a@k5", "q0")] and not list(tmp_path.iterdir())
