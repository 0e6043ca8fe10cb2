"""Paired comparisons of runs: values from the metrics path, alignment by id, per-question files read back, Holm
over the family, the markdown table, and the errors a user can cause."""

from __future__ import annotations

import dataclasses
import json

import pytest
from scipy.stats import binomtest

from memini_bench.cli import main
from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.errors import BenchError
from memini_bench.evaluation.metrics import score
from memini_bench.evaluation.significance import compare_file_systems, compare_files, compare_run, markdown
from memini_bench.evaluation.stats import holm, mcnemar_exact
from memini_bench.results.per_question import read_per_question
from memini_bench.results.write import per_question_rows, write_json, write_jsonl, write_per_question

# gold per question, and each system's ranking (flat item ids): 12 questions in 3 groups.
GOLD = {f"q{i}": (f"g{i}",) for i in range(12)}
RANKS = {  # position of the gold id in each system's ranking (None = not recalled)
    "memini-hybrid": [0, 0, 1, 0, 2, 0, 3, 0, 1, None, 0, 4],
    "memini-keyword": [1, None, 1, 0, 5, None, None, 2, 0, None, 6, None],
    "memini-vector": [0, 0, 1, 0, 2, 0, 3, 0, 1, None, 0, 4],  # the hybrid's twin: no difference at all
}


def _run(system: str, ranks=None, question_ids=None, gold=GOLD) -> RunResult:
    ranks = RANKS[system] if ranks is None else ranks
    runs = []
    for qid, rank in zip(question_ids or GOLD, ranks, strict=True):
        ranked = [f"x{j}" for j in range(8)]
        if rank is not None:
            ranked[rank] = gold[qid][0]
        q = Question(id=qid, query="", gold=gold[qid], group=f"grp{int(qid[1:]) % 3}", category=str(int(qid[1:]) % 2))
        runs.append(QuestionRun(q, tuple((i,) for i in ranked), tuple(float(8 - j) for j in range(8)),
                                tuple(3 for _ in ranked), 1.5))
    return RunResult(system, "toy", 8, 1.0, 100, tuple(runs))


def _results() -> list[RunResult]:
    return [_run(name) for name in RANKS]


def test_run_comparison_uses_the_metrics_path_and_mcnemar():
    sig = compare_run(_results(), [1, 5])
    rows = {(c.system_b, c.metric): c for c in sig.rows}
    assert [c.metric for c in sig.rows[:5]] == ["recall_any@1", "recall_any@5", "mrr", "ndcg@1", "ndcg@5"]
    assert len(sig.rows) == 10 and {c.system_a for c in sig.rows} == {"memini-hybrid"}
    hybrid, keyword = _results()[:2]
    for k in (1, 5):
        s_h, s_k = score(hybrid, k, ks=(1, 5)), score(keyword, k, ks=(1, 5))  # mrr at the largest K, 5
        row = rows[("memini-keyword", f"recall_any@{k}")]
        assert (row.mean_a, row.mean_b) == (pytest.approx(s_h["recall_any@{k}"]), pytest.approx(s_k["recall_any@{k}"]))
        assert rows[("memini-keyword", f"ndcg@{k}")].mean_a == pytest.approx(s_h["ndcg@{k}"])
        assert rows[("memini-keyword", "mrr")].mean_b == pytest.approx(s_k["mrr"])
    # R@5 by hand: hybrid hits q0-q8, q10, q11 (11 of 12); keyword hits q0, q2, q3, q7, q8 -> b = 6, c = 0.
    r5 = rows[("memini-keyword", "recall_any@5")]
    assert (r5.only_a, r5.only_b, r5.test) == (6, 0, "mcnemar")
    assert r5.p == pytest.approx(binomtest(6, 6, 0.5).pvalue) == 2 / 64
    assert [c.p_adjusted for c in sig.rows] == pytest.approx(holm([c.p for c in sig.rows]))
    twin = [c for c in sig.rows if c.system_b == "memini-vector"]
    assert all((c.delta, c.ci_low, c.ci_high, c.p, c.significant) == (0, 0, 0, 1.0, False) for c in twin)


def test_per_question_file_round_trip_gives_the_same_comparisons(tmp_path):
    path = tmp_path / "pq.jsonl"
    write_jsonl(path, per_question_rows(_results()))
    read = read_per_question(path)
    assert [r.system for r in read] == list(RANKS) and all(r.depth == 8 for r in read)
    assert read[0].questions[3].question.group == "grp0" and read[0].questions[3].question.category == "1"
    assert compare_file_systems(path, [1, 5]) == compare_run(_results(), [1, 5])


def test_the_compact_gzip_records_give_the_same_comparisons(tmp_path):
    """``-per-question X.jsonl.gz``: gzip (the same bytes every time), no scores or latency, same tests."""
    import gzip

    path, again = tmp_path / "pq.jsonl.gz", tmp_path / "again.jsonl.gz"
    write_per_question(path, _results())
    write_per_question(again, _results())
    assert path.read_bytes() == again.read_bytes()
    rows = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    assert len(rows) == 36 and all("scores" not in r and "latency_ms" not in r for r in rows)
    assert compare_file_systems(path, [1, 5]) == compare_run(_results(), [1, 5])
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(BenchError, match="not a gzip file"):
        read_per_question(bad)


def test_two_files_pair_systems_by_name_and_label_them(tmp_path):
    a, b = tmp_path / "a" / "pq.jsonl", tmp_path / "b" / "pq.jsonl"
    write_jsonl(a, per_question_rows(_results()[:2]))
    write_jsonl(b, per_question_rows([_run("memini-hybrid", RANKS["memini-keyword"]), _run("memini-keyword")]))
    sig = compare_files(a, b, [5])
    assert [(c.system_a, c.metric) for c in sig.rows] == [
        (f"{a}:memini-hybrid", "recall_any@5"), (f"{a}:memini-hybrid", "mrr"), (f"{a}:memini-hybrid", "ndcg@5"),
        (f"{a}:memini-keyword", "recall_any@5"), (f"{a}:memini-keyword", "mrr"), (f"{a}:memini-keyword", "ndcg@5")]
    assert sig.rows[0].system_b == f"{b}:memini-hybrid" and sig.rows[0].only_a == 6
    assert sig.rows[3].p == 1.0 and sig.rows[3].delta == 0  # the same keyword run on both sides
    only_hybrid = compare_files(a, b, [5], systems=["memini-hybrid"])
    assert len(only_hybrid.rows) == 3 and only_hybrid.rows[0].p_adjusted == pytest.approx(
        holm([c.p for c in only_hybrid.rows])[0])


def test_two_single_system_files_with_different_names_are_compared(tmp_path):
    a, b = tmp_path / "rrf.jsonl", tmp_path / "alpha.jsonl"
    write_jsonl(a, per_question_rows([_run("memini-hybrid")]))
    write_jsonl(b, per_question_rows([_run("memini-keyword")]))
    sig = compare_files(a, b, [5])
    assert (sig.rows[0].system_a, sig.rows[0].system_b) == ("rrf.jsonl:memini-hybrid", "alpha.jsonl:memini-keyword")
    assert sig.rows[0].p == mcnemar_exact(6, 0)


def test_runs_at_different_depths_are_cut_to_the_smaller_one():
    deep = _run("memini-hybrid", [6] * 12)  # gold at rank 7 of 8: MRR 1/7 at depth 8
    shallow = dataclasses.replace(_run("memini-keyword", [None] * 12), depth=4)
    shallow = dataclasses.replace(shallow, questions=tuple(dataclasses.replace(r, ranked_ids=r.ranked_ids[:4])
                                                           for r in shallow.questions))
    mrr = next(c for c in compare_run([deep, shallow], [1, 4]).rows if c.metric == "mrr")
    assert (mrr.mean_a, mrr.mean_b, mrr.p) == (0.0, 0.0, 1.0)  # both cut to depth 4: neither finds the gold
    # mrr is taken at the run's largest K (core.metrics.resolve_cutoff): MRR@1 misses rank 7, MRR@8 finds it
    assert next(c for c in compare_run([deep, _run("memini-keyword", [None] * 12)], [1]).rows
                if c.metric == "mrr").mean_a == 0.0
    assert next(c for c in compare_run([deep, _run("memini-keyword", [None] * 12)], [1, 8]).rows
                if c.metric == "mrr").mean_a == pytest.approx(1 / 7)


def test_markdown_marks_significant_rows():
    hybrid = _run("memini-hybrid", [0] * 12)
    keyword = _run("memini-keyword", [None] * 12)
    sig = compare_run([hybrid, keyword], [5], resamples=999)
    text = markdown(sig)
    assert "## Paired significance — 12 questions" in text and "Holm over 3 comparisons" in text
    line = next(row for row in text.splitlines() if "| recall_any@5 |" in row)
    assert "| **+100.0** |" in line and "| McNemar | 12 / 0 |" in line and line.endswith("| yes |")
    assert "| 4.9e-04 | 0.00146 |" in line  # p = 2 / 2^12; Holm: 3 x p, the smallest of three
    mrr = next(row for row in text.splitlines() if "| mrr |" in row)
    assert "| bootstrap | 12 / 0 | ≤ 0.002 | 0.004 | yes |" in mrr  # the floor 2 / 1000; Holm: 2 x the floor
    assert markdown(compare_run([hybrid, _run("memini-vector", [0] * 12)], [5])).count("| no |") == 3


def test_question_sets_must_match():
    other = _run("memini-keyword", RANKS["memini-keyword"][:10], question_ids=[f"q{i}" for i in range(10)])
    with pytest.raises(BenchError, match=r"memini-hybrid has 12 questions and memini-keyword 10: 2 only in the "
                                         r"first, 0 only in the second \(e\.g\. 'q10'\)"):
        compare_run([_run("memini-hybrid"), other], [5])
    moved = {**GOLD, "q3": ("elsewhere",)}
    with pytest.raises(BenchError, match="question 'q3': gold differs"):
        compare_run([_run("memini-hybrid"), _run("memini-keyword", gold=moved)], [5])


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"ks": [5, 9]}, "-k 9: memini-hybrid ranks at most 8 hits per question; choose K <= 8"),
    ({"ks": [5], "reference": "memini-rerank"}, "no system 'memini-rerank' in the run (it has memini-hybrid, "),
])
def test_run_comparison_errors(kwargs, fragment):
    with pytest.raises(BenchError) as exc:
        compare_run(_results(), **kwargs)
    assert fragment in str(exc.value)
    with pytest.raises(BenchError, match="only memini-hybrid"):
        compare_run(_results()[:1], [5])


def test_results_file_is_refused_with_the_fix(tmp_path):
    pretty = tmp_path / "locomo.json"
    write_json(pretty, {"config": {"dataset": "locomo"}, "results": [{"system": "memini-hybrid", "k": 5}]})
    one_line = tmp_path / "one-line.json"
    one_line.write_text(json.dumps({"config": {}, "results": []}))
    for path in (pretty, one_line):
        with pytest.raises(BenchError, match="per-system scores only.*rerun with -per-question FILE.jsonl"):
            read_per_question(path)


@pytest.mark.parametrize(("lines", "fragment"), [
    (["not json"], ":1: not a JSON line"),
    ([{"system": "s", "id": "q", "gold": ["a"]}], ":1: ranked: missing (expected an array)"),
    ([{"system": "s", "id": "q", "gold": ["a"], "ranked": ["a"]}], "each a list of item ids"),
    ([{"system": "s", "id": "q", "gold": ["a"], "ranked": [["a"]], "first_gold_rank": 3}], "disagrees"),
    ([{"system": "s", "id": "q", "gold": ["a"], "ranked": [["a"]]}] * 2, ":2: question 'q' appears twice"),
    ([], "no rows"),
])
def test_malformed_per_question_lines(tmp_path, lines, fragment):
    path = tmp_path / "bad.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    with pytest.raises(BenchError) as exc:
        read_per_question(path)
    assert fragment in str(exc.value) and str(path) in str(exc.value)
    with pytest.raises(BenchError, match="no such file"):
        read_per_question(tmp_path / "absent.jsonl")


def test_files_without_a_common_system(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(a, per_question_rows(_results()[:2]))
    write_jsonl(b, per_question_rows([_run("memini-vector")]))
    with pytest.raises(BenchError, match="no system in common"):
        compare_files(a, b, [5])
    with pytest.raises(BenchError, match=f"{b}: no system 'memini-hybrid' \\(it has memini-vector\\)"):
        compare_files(a, b, [5], systems=["memini-hybrid"])


def test_real_locomo_run_read_back_matches_its_results_file(tmp_path, capsys, locomo_path):
    pq = tmp_path / "pq.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["-suite", "locomo", "-data", str(locomo_path), "-embedder", "hash", "-k", "5,10", "-limit", "400",
              "-out", str(tmp_path), "-per-question", str(pq)])
    capsys.readouterr()
    assert exc.value.code == 0
    doc = json.loads((tmp_path / "locomo-limit400-emb-hash.json").read_text())
    expected = {(r["system"], r["k"]): r for r in doc["results"]}
    sig = compare_file_systems(pq, [5, 10], resamples=2000)
    assert len(sig.rows) == 10 and sig.questions == 400
    for c in sig.rows:
        if c.metric.startswith("recall_any@"):
            k = int(c.metric.split("@")[1])
            assert c.mean_a == pytest.approx(expected[("memini-hybrid", k)]["scores"][f"recall_any@{k}"])
            assert c.mean_b == pytest.approx(expected[(c.system_b, k)]["scores"][f"recall_any@{k}"])
            assert c.p == pytest.approx(1.0 if c.only_a + c.only_b == 0
                                        else binomtest(c.only_a, c.only_a + c.only_b, 0.5).pvalue, rel=1e-9)
        elif c.metric == "mrr":
            assert c.mean_b == pytest.approx(expected[(c.system_b, 5)]["scores"]["mrr"])
