"""-sweep: grid parsing, one file per cell, paired tests against the baseline, tune/held selection."""

from __future__ import annotations

import json

import pytest
from cli_run import run_cli

from memini_bench.errors import BenchError
from memini_bench.modes.sweep_grid import cells, parse_grid, parse_metric


def test_grid_parsing_checks_values_with_the_flags_types():
    axes = parse_grid("pool=30,50,80 fusion=0.3,-1; temporal-extractor=regex,extended")
    assert [(a.flag, a.values) for a in axes] == [("pool", (30, 50, 80)), ("fusion", (0.3, -1.0)),
                                                  ("temporal-extractor", ("regex", "extended"))]
    assert len(cells(axes)) == 12 and cells(axes)[0] == (("pool", 30), ("fusion", 0.3), ("temporal_extractor", "regex"))
    for bad, fragment in [("fusion=nan", "not a finite number"), ("fusion=2", "alpha in [0, 1]"),
                          ("pool=-1", "below the allowed minimum"), ("nope=1", "not a sweepable setting"),
                          ("pool", "FLAG=V1,V2"), ("pool=1 pool=2", "named twice"),
                          ("temporal-extractor=gpt", "'gpt' is not one of")]:
        with pytest.raises(BenchError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
            parse_grid(bad)
    assert parse_metric("ndcg@10", (5, 10)).measure.name == "ndcg@10" and parse_metric("MRR", (5,)).name == "mrr"
    # one selection in any spelling, recorded under the label older sweeps record (their identity stays)
    assert {parse_metric(t, (5, 10)).name for t in ("RA@5", "recall_all@5", "RecallAll@5")} == {"recall_all@5"}
    assert parse_metric("recall_frac@10", (5, 10)).name == "recall_frac@10"
    with pytest.raises(BenchError, match="not in -k"):
        parse_metric("R@3", (5, 10))
    with pytest.raises(BenchError, match="did you mean recall_frac@5"):
        parse_metric("recall_frc@5", (5, 10))
    with pytest.raises(BenchError, match="not a per-question score"):
        parse_metric("latency_p50", (5, 10))


def test_sweep_writes_a_file_per_cell_a_summary_and_the_tests(tmp_path, capsys):
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-k", "1,3", "-out", str(tmp_path),
                           "-sweep", "fusion=0.5,-1", "-resamples", "500"], capsys)
    assert code == 0, err
    assert "| baseline (the run's settings) | 87.5 |" in out and "| fusion=-1 | 75.0 |" in out
    assert "cell 2/2: fusion=-1" in err
    folder = tmp_path / "memini-sample-emb-hash-sweep-fusion"
    names = sorted(p.name for p in folder.iterdir())
    assert names[:4] == ["baseline.json", "fusion-1.json", "fusion0.5.json", "summary.json"]
    summary = json.loads((folder / "summary.json").read_text())
    rows = {(r["system_a"], r["metric"]): r for r in summary["tune"]["significance"]}
    same = rows[("fusion=0.5", "recall_any@1")]                       # the default alpha is the baseline: no difference
    assert same["delta"] == 0 and same["p"] == 1.0 and same["only_a"] == same["only_b"] == 0
    rrf = rows[("fusion=-1", "recall_any@1")]
    assert rrf["delta"] == pytest.approx(-0.125) and rrf["test"] == "mcnemar"
    cell = json.loads((folder / "fusion-1.json").read_text())
    assert cell["config"]["fusion_alpha"] == -1.0 and cell["config"]["mode"] == "sweep-cell"


def test_select_needs_the_tune_split(capsys):
    code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-sweep", "fusion=0.5,-1", "-select", "MRR",
                         "-no-write"], capsys)
    assert code == 2 and "add -holdout tune" in err


def test_tune_held_selection_reports_the_winner_on_held(locomo_path, tmp_path, capsys):
    code, out, err = run_cli(["-suite", "locomo", "-data", str(locomo_path), "-embedder", "hash", "-k", "5",
                           "-limit", "300", "-holdout", "tune", "-sweep", "fusion=0.3,0.5,-1", "-select", "MRR",
                           "-resamples", "500", "-out", str(tmp_path)], capsys)
    assert code == 0, err
    assert "selected on tune by mrr:" in out and "out of 3 cells tried" in out and "honest" in out
    assert "selected cell vs baseline on held" in out
    summary = json.loads(next(tmp_path.glob("*-sweep-fusion/summary.json")).read_text())
    assert summary["selected"] in ("fusion=0.3", "fusion=0.5", "fusion=-1")
    assert summary["tune"]["split"] == "tune" and summary["held"]["split"] == "held"
    tune_mrr = {c["cell"]: c["scores"][0]["scores"]["mrr"] for c in summary["tune"]["cells"]}
    assert summary["selected"] == max(tune_mrr, key=lambda c: tune_mrr[c])


def test_the_sweep_verb_takes_its_grid_as_grid_the_same_run_as_the_flat_sweep(tmp_path, capsys):
    """``memini-bench sweep -grid G`` needs no ``-sweep``: the same flag, so the same identity, file names and
    scores as the flat form's ``-sweep G``."""
    args = ["-suite", "sample", "-embedder", "hash", "-k", "1,3", "-resamples", "200"]
    runs = {}
    for name, argv in (("verb", ["sweep", *args, "-grid", "fusion=0.5,-1"]),
                       ("flat", [*args, "-sweep", "fusion=0.5,-1"])):
        code, out, err = run_cli([*argv, "-out", str(tmp_path / name)], capsys)
        assert code == 0, err
        (folder,) = (tmp_path / name).iterdir()
        summary = json.loads((folder / "summary.json").read_text())
        cells = [{k: v for k, v in c.items() if k != "command"} for c in summary["tune"]["cells"]]
        commands = [c["command"] for c in summary["tune"]["cells"]]
        runs[name] = (folder.name, summary["config"]["sweep"], _without_latency(cells), commands)
    assert runs["verb"][:3] == runs["flat"][:3] and runs["verb"][1] == "fusion=0.5,-1"
    # each cell's rerun command is a plain run, whichever form made the sweep
    assert all(c.startswith("memini-bench run ") and "-grid" not in c and "-sweep" not in c for c in runs["verb"][3])
    assert all("-grid" not in c and "-sweep" not in c for c in runs["flat"][3])


def _without_latency(value):
    """``value`` without its timed figures (latency and ingest times differ between two runs of one setting)."""
    if isinstance(value, dict):
        return {k: _without_latency(v) for k, v in value.items() if "latency" not in k and not k.endswith("_ms")}
    if isinstance(value, list):
        return [_without_latency(v) for v in value]
    return value
