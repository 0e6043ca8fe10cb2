"""A sweep's summary.json is enough to rerun any of its cells: each cell's ``command`` is the plain run that gives
that cell's numbers (the committed results keep summaries, not cell files)."""

from __future__ import annotations

import json
import shlex

from cli_run import run_cli, untimed

from memini_bench.results.provenance import cell_command


def test_cell_command_sets_the_cells_flags_and_drops_the_grid():
    sweep = ("memini-bench -embedder minilm -suite locomo -data ../d.json -k 5,10 -holdout tune -systems reference "
             "-ref-alpha 0.5 -name search -sweep 'ref-alpha=0.2,0.3 ref-fusion=minmax,rrf' -select MRR")
    assert cell_command(sweep + " -out results/reference", "ref-alpha=0.3 ref-fusion=rrf", "held", "reference") == (
        "memini-bench -embedder minilm -suite locomo -data ../d.json -k 5,10 -holdout held -systems reference "
        "-ref-alpha 0.3 -name search -ref-fusion rrf")
    # a sweep of memini's hybrid names no system: the cell is memini-hybrid's row of the plain run
    assert cell_command("memini-bench -suite sample -sweep=fusion=0.5,-1 -reinforce", "fusion=-1 reinforce=False",
                        "all", "memini-hybrid") == "memini-bench -suite sample -fusion -1 -systems memini-hybrid"
    assert cell_command("memini-bench -suite sample -sweep pool=1", "baseline", "tune", "memini-hybrid") == (
        "memini-bench -suite sample -holdout tune -systems memini-hybrid")


def test_each_cells_command_reproduces_its_scores(tmp_path, capsys):
    sweep_out = tmp_path / "sweep"
    code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-k", "1,3", "-out", str(sweep_out),
                            "-sweep", "fusion=0.5,-1", "-resamples", "200"], capsys)
    assert code == 0, err
    summary = json.loads(next(sweep_out.glob("*-sweep-fusion/summary.json")).read_text())
    assert summary["config"]["command"].startswith("memini-bench ")
    cases = [(summary["tune"]["baseline_command"], summary["tune"]["baseline"])]
    cases += [(c["command"], c["scores"]) for c in summary["tune"]["cells"]]
    assert len(cases) == 3
    for n, (command, scores) in enumerate(cases):
        words = shlex.split(command)
        assert words[0] == "memini-bench" and "-sweep" not in words and "-out" not in words  # it writes to runs/
        out = tmp_path / f"cell{n}"
        code, _, err = run_cli([*words[1:], "-out", str(out)], capsys)
        assert code == 0, err
        doc = json.loads(next(out.glob("*.json")).read_text())
        rows = [r for r in doc["results"] if r["system"] == "memini-hybrid"]
        assert untimed(rows) and [{k: v for k, v in r.items() if k not in ("system", "dataset")}
                                  for r in untimed(rows)] == \
            [{k: v for k, v in r.items() if k not in ("system", "dataset")} for r in untimed(scores)]
