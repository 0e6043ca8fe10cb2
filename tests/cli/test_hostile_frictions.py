"""Hostile inputs on the run's surfaces that once gave a silently wrong number or an unclear line: each is one
line naming the input and the fix, exit 2, nothing written."""

from __future__ import annotations

import pytest
from cli_run import run_cli


@pytest.mark.parametrize("args, fragment", [
    (["-k", "5", "-metrics", "recall_frac@50"], "-metrics recall_frac@50: its cut-off 50 is deeper than this run "
                                                "recalls (the largest of -k 5)"),
    (["-k", "1,5", "-metrics", "mrr,ndcg@10"], "-metrics ndcg@10: its cut-off 10 is deeper"),
    (["sweep", "-k", "5", "-sweep", "fusion=0.3,0.5", "-select", "recall_frac@50"],
     "-select recall_frac@50: its cut-off 50 is deeper than this run recalls"),
])
def test_a_metric_deeper_than_the_runs_largest_k_is_refused(tmp_path, capsys, args, fragment):
    code, out, err = run_cli([*args, "-suite", "sample", "-embedder", "hash", "-out", str(tmp_path)], capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


def test_a_metric_within_the_largest_k_still_runs(tmp_path, capsys):
    code, out, _ = run_cli(["-k", "5,50", "-metrics", "recall_frac@50,recall_frac@3", "-suite", "sample",
                            "-embedder", "hash", "-out", str(tmp_path)], capsys)
    assert code == 0 and "recall_frac@50" in out and "recall_frac@3" in out


def test_excluding_every_question_names_the_exclude_flag():
    from memini_bench.core.dataset import EmptyDataset, prepare
    from memini_bench.loaders import load

    ds = load("sample")
    everything_excluded = ds.with_(questions=(), excluded=ds.questions)
    with pytest.raises(EmptyDataset) as caught:
        prepare(everything_excluded)
    message = str(caught.value)
    assert message.startswith("-exclude known-bad: excludes all 8 questions") and "drop -exclude" in message


def test_report_refuses_to_write_onto_an_input(tmp_path, capsys):
    code, _, _ = run_cli(["-suite", "sample", "-embedder", "hash", "-out", str(tmp_path / "runs"), "-per-question",
                          str(tmp_path / "pq.jsonl")], capsys)
    assert code == 0
    before = (tmp_path / "pq.jsonl").read_bytes()
    results = next((tmp_path / "runs").glob("*.json"))
    code, _, err = run_cli(["report", str(results), str(tmp_path / "pq.jsonl"), "-format", "md", "-o",
                            str(tmp_path / "pq.jsonl")], capsys)
    assert code == 2 and "is an input of this report" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "runs" / "notes.md").write_text("mine")
    code, _, err = run_cli(["report", str(tmp_path / "runs"), "-format", "md", "-o",
                            str(tmp_path / "runs" / "notes.md")], capsys)
    assert code == 2 and "is an input of this report" in err
    assert (tmp_path / "pq.jsonl").read_bytes() == before


def test_a_huge_system_name_is_cut_in_the_figures_only(tmp_path, capsys):
    """A 1 MB system name: the figures draw it cut (matplotlib laid out a 200,000-character label in 90 s), the
    tables keep it whole."""
    pytest.importorskip("matplotlib", reason="the report extra is not installed: pip install 'memini-bench[report]'")
    import json

    from memini_bench.report import plots

    fig, texts = plots.pareto_figure([("x" * 1_000_000, 1.0, 0.5), ("y", 2.0, 0.6)], 5, "t" * 1000)[:2]
    assert all(len(t.get_text()) <= plots.MAX_LABEL_CHARS for t in texts)
    assert run_cli(["-suite", "sample", "-embedder", "hash", "-systems", "keyword", "-out", str(tmp_path)],
                   capsys)[0] == 0
    path = next(tmp_path.glob("*.json"))
    doc = json.loads(path.read_text())
    for row in doc["results"]:
        row["system"] = "z" * 1_000_000
    path.write_text(json.dumps(doc))
    code, out, _ = run_cli(["report", str(path), "-format", "md"], capsys)
    assert code == 0 and "z" * 1_000_000 in out


def test_a_missing_score_shows_as_a_dash_not_zero(tmp_path, capsys):
    import json

    assert run_cli(["-suite", "sample", "-embedder", "hash", "-systems", "keyword", "-out", str(tmp_path)],
                   capsys)[0] == 0
    path = next(tmp_path.glob("*.json"))
    doc = json.loads(path.read_text())
    for row in doc["results"]:
        row["scores"].pop("mrr")
    path.write_text(json.dumps(doc))
    code, out, _ = run_cli(["report", str(path), "-format", "md"], capsys)
    row = out.strip().splitlines()[-1].split("|")
    assert code == 0 and row[7].strip() == "-" and "0.0" not in row[7]
    code, out, _ = run_cli(["report", str(path), "-format", "json"], capsys)
    assert code == 0 and all(v.get("mrr") is None for r in json.loads(out)["rows"] for v in r["by_k"].values())


def test_a_board_does_not_rank_a_run_of_another_data_file(tmp_path, capsys):
    """Three runs of one data set name on one board; the one whose data file differs (another sha256) is listed
    apart, not ranked, even when it leads."""
    import json

    from memini_bench.report.boards import build_boards
    from memini_bench.report.collect import collect

    assert run_cli(["-suite", "sample", "-embedder", "hash", "-out", str(tmp_path / "a")], capsys)[0] == 0
    (src,) = (tmp_path / "a").glob("*.json")
    doc = json.loads(src.read_text())
    files = []
    for n, (sha, recall) in enumerate([(None, None), (None, None), ("f" * 64, 1.0)]):
        d = json.loads(json.dumps(doc))
        for r in d["results"]:
            r["system"] = f"{r['system']}-{n}"
            r["questions"] = 40
            if recall is not None:
                r["scores"]["recall_any@5"] = recall
        if sha:
            d["config"]["data_sha256"] = sha
        path = tmp_path / f"r{n}.json"
        path.write_text(json.dumps(d))
        files.append(str(path))
    (board,) = build_boards(collect(files))
    assert not any(r.system.endswith("-2") for r in board.rows)
    apart = [r for r in board.apart if r.system.endswith("-2")]
    assert len(apart) == 3 and all("another data file" in r.note for r in apart)
