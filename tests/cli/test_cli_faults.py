"""The command line on hostile data paths and data sets: exit 2 with one line and nothing written, or results
inside -out whose recorded sha256 is of the bytes read; TREC files ir_measures reads like our metrics."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest
from cli_run import run_cli
from fuzz_strategies import time_limit

from memini_bench.loaders import _json

SAMPLE = Path(__file__).resolve().parents[2] / "memini_bench" / "data" / "sample.json"


def _run(args, capsys):
    """The CLI with the hash embedder, bounded to 60 s."""
    with time_limit(60):
        return run_cli(["-embedder", "hash", *args], capsys)


def _refused(args, capsys, fragment: str, out: Path) -> None:
    code, _, err = _run([*args, "-out", str(out)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and lines[-1].startswith("memini-bench: error:") and fragment in lines[-1], err
    assert "Traceback" not in err and not out.exists()


def test_holdout_held_on_the_sample_scores_nothing_and_says_so(tmp_path, capsys):
    _refused(["-suite", "sample", "-holdout", "held"], capsys,
             "-holdout held: leaves none of the 8 questions of memini-sample to score", tmp_path / "out")


def test_a_limit_that_leaves_no_item_is_refused(tmp_path, capsys):
    data = tmp_path / "d.json"
    data.write_text(json.dumps({"name": "d", "items": [{"id": "a", "content": "alpha", "group": "g"}],
                                "questions": [{"query": "alpha", "gold": ["a"], "group": "empty"},
                                              {"query": "alpha", "gold": ["a"], "group": "g"}]}))
    _refused(["-suite", "file", "-data", str(data), "-limit", "1"], capsys, "-limit 1: leaves no item of d",
             tmp_path / "out")


@pytest.mark.parametrize("path, fragment", [("/dev/zero", "character device"), ("DIR", "is a directory"),
                                            ("FIFO", "a FIFO with no data")])
def test_special_data_paths_exit_2_within_seconds(tmp_path, capsys, monkeypatch, path, fragment):
    monkeypatch.setattr(_json, "FIFO_WAIT_S", 0.5)
    if path == "FIFO":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    elif path == "DIR":
        path = str(tmp_path)
    _refused(["-suite", "file", "-data", path], capsys, fragment, tmp_path / "out")  # returns: no hang


def test_a_fifo_is_read_once_and_its_bytes_are_hashed(tmp_path, capsys):
    data = SAMPLE.read_bytes()
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    threading.Thread(target=feed, daemon=True).start()
    code, _, err = _run(["-suite", "file", "-data", str(fifo), "-out", str(tmp_path / "out")], capsys)
    assert code == 0, err
    (results,) = (tmp_path / "out").iterdir()
    assert json.loads(results.read_text())["config"]["data_sha256"] == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/absolute-escape", "a/b"])
def test_a_data_set_name_never_writes_outside_out(tmp_path, capsys, name):
    data = tmp_path / "data" / "d.json"
    data.parent.mkdir()
    data.write_text(json.dumps({**json.loads(SAMPLE.read_text()), "name": name}))
    out = tmp_path / "data" / "out"
    code, _, err = _run(["-suite", "file", "-data", str(data), "-out", str(out), "-trec", str(out / "trec")], capsys)
    assert code == 0, err
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert all(p.startswith("data/out/") or p == "data/d.json" for p in written), written
    assert not Path("/tmp/absolute-escape.json").exists() and "is not a safe file name" in err


def test_trec_ids_with_spaces_read_back_by_ir_measures_as_our_metrics(tmp_path, capsys):
    import ir_measures
    from ir_measures import RR, Success, nDCG

    sample = json.loads(SAMPLE.read_text())
    rename = {item["id"]: f"memory {item['id']} #{i} 100% é" for i, item in enumerate(sample["items"])}
    doc = {"name": "spaced ids",
           "items": [{**item, "id": rename[item["id"]]} for item in sample["items"]],
           "questions": [{**q, "id": f"question {i}", "gold": [rename[g] for g in q["gold"]]}
                         for i, q in enumerate(sample["questions"])]}
    data = tmp_path / "spaced.json"
    data.write_text(json.dumps(doc))
    out, trec = tmp_path / "out", tmp_path / "trec"
    code, _, err = _run(["-suite", "file", "-data", str(data), "-k", "5,10", "-out", str(out), "-trec", str(trec)],
                        capsys)
    assert code == 0, err
    (results,) = out.iterdir()
    rows = json.loads(results.read_text())["results"]
    (qrels_path,) = trec.glob("*.qrels")
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    assert len(qrels) == sum(len(q["gold"]) for q in doc["questions"])
    for system in {r["system"] for r in rows}:
        at = {r["k"]: r for r in rows if r["system"] == system}
        (run_path,) = trec.glob(f"*.{system}.run")
        agg = ir_measures.calc_aggregate([Success @ 5, RR, nDCG @ 10], qrels,
                                         list(ir_measures.read_trec_run(str(run_path))))
        assert agg[Success @ 5] == pytest.approx(at[5]["scores"][f"recall_any@{at[5]['k']}"])
        assert agg[RR] == pytest.approx(at[10]["scores"]["mrr"])
        assert agg[nDCG @ 10] == pytest.approx(at[10]["scores"][f"ndcg@{at[10]['k']}"], abs=1e-4)
