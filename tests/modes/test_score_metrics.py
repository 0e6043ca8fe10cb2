"""``score`` and ``run`` give one number per registered metric for one ranking: a run's ``-trec`` files (and its
``-per-question`` rankings as JSONL) scored by ``score`` give the run's own value of every registered metric
(``core.registry.METRICS``), in both forms (qrels; suite and data); the depth rule (``mrr`` without ``@K`` is MRR
at the largest K, ``core.metrics.resolve_cutoff``) holds in both verbs; a scored run has no latency, shown as ``-``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import run_cli


def registered_names(k: int) -> list[str]:
    """One name per registered metric family at ``k`` (both spellings of an optional cut-off), latency apart."""
    from memini_bench.core.registry import METRICS

    names = []
    for entry in METRICS.entries():
        cls = METRICS.get(entry.name)
        if cls.unit == "ms":
            continue
        names += {"required": [f"{entry.name}@{k}"], "optional": [entry.name, f"{entry.name}@{k}"],
                  "none": [entry.name]}[cls.cutoff]
    return names


def _doc(folder: Path, pattern: str = "*.json") -> dict:
    (path,) = folder.glob(pattern)
    return json.loads(path.read_text())


def _scores(doc: dict) -> dict[tuple[str, int], dict[str, float]]:
    return {(r["system"], r["k"]): r["scores"] for r in doc["results"]}


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """The sample suite run at K 5 and 10 with every registered metric, its TREC files and per-question rankings."""
    from memini_bench.cli import main

    tmp = tmp_path_factory.mktemp("sample")
    metrics = ",".join(registered_names(5))
    try:
        main(["run", "-suite", "sample", "-embedder", "hash", "-k", "5,10", "-metrics", metrics, "-out",
              str(tmp / "runs"), "-trec", str(tmp / "trec"), "-per-question", str(tmp / "pq.jsonl"), "-quiet"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    return tmp, _doc(tmp / "runs")


def test_score_gives_the_runs_own_value_of_every_registered_metric(sample_run, tmp_path, capsys):
    tmp, run = sample_run
    names = registered_names(5)
    own = _scores(run)
    trec = tmp / "trec"
    runs = sorted(trec.glob("*.run"))
    assert len(runs) == 3
    # qrels form: every metric but the token counts (qrels hold no contents)
    no_tokens = [n for n in names if not n.startswith(("tokens_injected", "token_efficiency"))]
    args = ["score", "-qrels", str(next(trec.glob("*.qrels"))), "-k", "5,10", "-metrics", ",".join(no_tokens),
            "-out", str(tmp_path / "q")]
    code, out, err = run_cli(args + [a for r in runs for a in ("-run", str(r))], capsys)
    assert code == 0, err
    scored = _scores(_doc(tmp_path / "q"))
    assert set(scored) == set(own)
    for key, values in scored.items():
        for name in no_tokens:
            assert values[name] == own[key][name], (key, name)
        assert not any(n.startswith(("latency", "tokens", "token_eff")) for n in values), values
    for name in no_tokens:
        assert f"| {name} " in out
    # suite form, the run's JSONL rankings: every metric, the tokens too
    rows = [json.loads(line) for line in (tmp / "pq.jsonl").read_text().splitlines()]
    jsonl = tmp_path / "memini-hybrid.jsonl"
    jsonl.write_text("".join(json.dumps({"question_id": r["id"], "ranked_ids": [i[0] for i in r["ranked"]]}) + "\n"
                             for r in rows if r["system"] == "memini-hybrid"))
    code, out, err = run_cli(["score", "-suite", "sample", "-run", str(jsonl), "-k", "5,10", "-metrics",
                              ",".join(names), "-out", str(tmp_path / "s")], capsys)
    assert code == 0, err
    scored = _scores(_doc(tmp_path / "s"))
    for k in (5, 10):
        for name in names:
            assert scored["memini-hybrid", k][name] == own["memini-hybrid", k][name], (k, name)
        assert "latency_p50" in own["memini-hybrid", k] and "latency_p50" not in scored["memini-hybrid", k]


def test_mrr_without_k_is_mrr_at_the_largest_k_in_run_and_score(sample_run, tmp_path, capsys):
    """Rankings 10 deep scored at -k 5: mrr is MRR@5, the figure of ``run -k 5`` on the same systems, and not the
    MRR of the whole ranking (the depth rule, docs/metrics.md)."""
    tmp, run10 = sample_run
    trec = tmp / "trec"
    code, _, err = run_cli(["run", "-suite", "sample", "-embedder", "hash", "-k", "5", "-out", str(tmp_path / "r5"),
                            "-quiet"], capsys)
    assert code == 0, err
    run5 = _scores(_doc(tmp_path / "r5"))
    hybrid = next(trec.glob("*.memini-hybrid.run"))
    code, out, err = run_cli(["score", "-qrels", str(next(trec.glob("*.qrels"))), "-run", str(hybrid), "-k", "5",
                              "-metrics", "mrr,mrr@5,mrr@10", "-out", str(tmp_path / "s")], capsys)
    assert code == 0, err
    scored = _scores(_doc(tmp_path / "s"))["memini-hybrid", 5]
    assert scored["mrr"] == scored["mrr@5"] == run5["memini-hybrid", 5]["mrr"]
    assert scored["mrr@10"] == _scores(run10)["memini-hybrid", 10]["mrr"]
    assert scored["mrr"] != scored["mrr@10"]  # the sample's hybrid finds a gold id first below rank 5 once


def test_done_when_on_locomo(locomo_path, tmp_path, capsys):
    """The issue's command on a real LoCoMo TREC run made 10 deep: each metric printed, mrr@10 the run's MRR at
    K 10 and the default table's mrr the run's MRR at K 5."""
    code, _, err = run_cli(["run", "-suite", "locomo", "-data", str(locomo_path), "-systems", "keyword", "-k", "5,10",
                            "-metrics", "mrr@5", "-trec", str(tmp_path / "trec"), "-out", str(tmp_path / "runs"),
                            "-quiet"], capsys)
    assert code == 0, err
    own = _scores(_doc(tmp_path / "runs"))
    qrels, run = next((tmp_path / "trec").glob("*.qrels")), next((tmp_path / "trec").glob("*.run"))
    code, out, err = run_cli(["score", "-qrels", str(qrels), "-run", str(run), "-k", "5", "-metrics",
                              "recall_frac@5,recall_all@5,mrr@10", "-out", str(tmp_path / "s")], capsys)
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("| System"))
    assert header.split("|")[2:5] == [" recall_frac@5 ", " recall_all@5 ", " mrr@10 "]
    scored = _scores(_doc(tmp_path / "s"))["memini-keyword", 5]
    assert scored["mrr@10"] == own["memini-keyword", 10]["mrr"]
    assert scored["recall_all@5"] == own["memini-keyword", 5]["recall_all@5"]
    code, out, err = run_cli(["score", "-qrels", str(qrels), "-run", str(run), "-k", "5"], capsys)
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("| memini-keyword"))
    mrr5, mrr10 = own["memini-keyword", 5]["mrr@5"], own["memini-keyword", 10]["mrr"]
    assert mrr5 != mrr10 and f"| {mrr5 * 100:.1f}% |" in row  # MRR@5, not the whole 10-deep ranking's


def test_a_scored_run_shows_no_latency_in_the_report_and_its_exports(sample_run, tmp_path, capsys):
    """A scored file's rows carry no latency: the report's exports print ``-`` there and never bold it."""
    tmp, _ = sample_run
    trec = tmp / "trec"
    args = ["score", "-qrels", str(next(trec.glob("*.qrels"))), "-out", str(tmp_path / "s")]
    code, _, err = run_cli(args + [a for r in sorted(trec.glob("*.run")) for a in ("-run", str(r))], capsys)
    assert code == 0, err
    scored = next((tmp_path / "s").glob("*.json"))
    for fmt in ("md", "latex", "csv"):
        code, out, err = run_cli(["report", "-format", fmt, str(scored)], capsys)
        assert code == 0, (fmt, err)
        lines = [line for line in out.splitlines() if "memini-hybrid" in line]
        assert lines, (fmt, out)
        if fmt == "md":
            assert lines[0].rstrip(" |").endswith("-"), lines[0]
        if fmt == "latex":
            assert lines[0].rstrip("\\ ").endswith("-") and r"\textbf{-}" not in out, out
        if fmt == "csv":  # latency_p50, latency_p95, ingest_ms and (qrels) tokens: empty, not 0.0
            head = out.splitlines()[0].split(",")
            cells = dict(zip(head, lines[0].split(","), strict=True))
            held = [cells.get(name, "") for name in ("latency_p50", "latency_p95", "ingest_ms")]
            assert held == ["", "", ""] and cells["recall_any@K"], cells
