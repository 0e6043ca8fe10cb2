"""``memini-bench score``: a real ``-trec`` / ``-per-question`` run read back gives the run's own numbers exactly
(TREC qrels + runs, and JSONL rankings against -suite/-data), the paired tests of several runs, and one line with
exit code 2 for every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.loaders.known_bad import for_suite

#: The registered metrics every round trip compares (``{k}``: the row's K).
METRICS = ("recall_any@{k}", "recall_all@{k}", "mrr", "ndcg@{k}")


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory, locomo_path):
    """One real LoCoMo run (hash embedder): its results file, TREC folder and per-question file."""
    from memini_bench.cli import main

    tmp = tmp_path_factory.mktemp("run")

    try:
        main(["-suite", "locomo", "-data", str(locomo_path), "-embedder", "hash", "-k", "5,10", "-out",
              str(tmp / "runs"), "-trec", str(tmp / "trec"), "-per-question", str(tmp / "pq.jsonl"), "-quiet"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    results = json.loads(next((tmp / "runs").glob("*.json")).read_text())
    return tmp, results


class _Row:
    """A results row read as schema 3 (``Score.from_row``), indexed by registered metric names (``{k}`` the row's
    K) or by its fields (``questions``, ``categories``)."""

    def __init__(self, row: dict) -> None:
        from memini_bench.results.schema import Score

        self.score = Score.from_row(row)

    def __getitem__(self, name: str):
        key = name.format(k=self.score.k)
        if key in ("questions", "categories", "leaked"):
            return getattr(self.score, key)
        return self.score.scores.get(key)


def _rows(doc: dict) -> dict[tuple[str, int], _Row]:
    return {(r["system"], r["k"]): _Row(r) for r in doc["results"]}


def _score_doc(out: Path) -> dict:
    return json.loads(next(out.glob("score-*.json")).read_text())


def test_trec_round_trip_gives_the_runs_own_numbers(locomo_run, tmp_path, capsys):
    tmp, run = locomo_run
    trec = tmp / "trec"
    qrels = next(trec.glob("*.qrels"))
    runs = sorted(trec.glob("*.run"))
    assert len(runs) == 3
    args = ["score", "-qrels", str(qrels), "-k", "5,10", "-significance", "-resamples", "200", "-out", str(tmp_path)]
    for r in runs:
        args += ["-run", str(r)]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    scored, own = _rows(_score_doc(tmp_path)), _rows(run)
    assert set(scored) == set(own)
    for key, row in own.items():
        assert scored[key]["questions"] == row["questions"] == 1982
        for metric in METRICS:
            assert scored[key][metric] == row[metric], (key, metric)
    hybrid5 = own["memini-hybrid", 5]
    assert f"| memini-hybrid | {hybrid5['recall_any@{k}'] * 100:.1f}% |" in out
    # recall_any@5: the score table's header, then the three pairs' rows
    assert "Every pair of runs" in out and "McNemar" in out and out.count("| recall_any@5 |") == 1 + 3


def _jsonl(tmp: Path, system: str, dest: Path, sha: str = "", edit=None) -> Path:
    rows = [json.loads(line) for line in (tmp / "pq.jsonl").read_text().splitlines()]
    lines = []
    for r in rows:
        if r["system"] != system:
            continue
        row = {"question_id": r["id"], "ranked_ids": [ids[0] for ids in r["ranked"]]}
        if sha:
            row["data_sha256"] = sha
        lines.append(row)
    if edit is not None:
        edit(lines)
    dest.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return dest


def test_jsonl_round_trip_against_the_suite(locomo_run, locomo_path, tmp_path, capsys):
    tmp, run = locomo_run
    sha = run["config"]["data_sha256"]
    files = [_jsonl(tmp, s, tmp_path / f"{s}.jsonl", sha) for s in ("memini-hybrid", "memini-keyword")]
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["score", "-suite", "locomo", "-data", str(locomo_path), "-k", "5,10",
                              "-significance", "-resamples", "200", "-out", str(out_dir), "-run", str(files[0]),
                              "-run", str(files[1])], capsys)
    assert code == 0, err
    scored, own = _rows(_score_doc(out_dir)), _rows(run)
    for system in ("memini-hybrid", "memini-keyword"):
        for k in (5, 10):
            mine, theirs = scored[system, k], own[system, k]
            for metric in (*METRICS, "tokens_injected@{k}", "token_efficiency@{k}", "categories"):
                assert mine[metric] == theirs[metric], (system, k, metric)
            assert mine.score.categories == theirs.score.categories, (system, k)
    held = len(for_suite("locomo").ids & {q["question_id"] for q in map(json.loads, files[0].read_text().splitlines())})
    assert "protocol turn" in out and f"{held} listed questions scored, not excluded" in out
    assert "| 1 (multi-hop) |" in out


def test_exclude_known_bad_changes_n_by_the_listed_count(locomo_run, locomo_path, tmp_path, capsys):
    from memini_bench.loaders import LoadOptions, load

    kb = for_suite("locomo")
    full, cut = load("locomo", str(locomo_path)), load("locomo", str(locomo_path), LoadOptions(exclude="known-bad"))
    held = kb.ids & {q.id for q in full.questions}
    assert len(full.questions) - len(cut.questions) == len(held) > 0
    assert not kb.ids & {q.id for q in cut.questions}
    assert {e.question_id for e in kb.entries if e.problem == "dangling-gold"} <= held
    tmp, _ = locomo_run
    run = _jsonl(tmp, "memini-hybrid", tmp_path / "h.jsonl")
    code, out, err = run_cli(["score", "-suite", "locomo", "-data", str(locomo_path), "-run", str(run), "-exclude",
                              "known-bad"], capsys)
    assert code == 0, err
    n, kept = len(full.questions), len(cut.questions)
    assert f"## locomo — {kept} questions" in out
    assert f"{len(held)} listed questions excluded (-exclude known-bad)" in out
    assert f"excluded by -exclude known-bad: {n} -> {kept} questions" in err


def _refused(capsys, args: list[str], fragment: str, out_dir: Path) -> None:
    code, out, err = run_cli(["score", *args, "-out", str(out_dir)], capsys)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert lines[-1].startswith(("memini-bench score: error:", "memini-bench: error:")), err
    assert fragment in lines[-1], err
    assert "Traceback" not in err
    assert not out_dir.exists() or not list(out_dir.iterdir())


@pytest.mark.parametrize("edit, fragment", [
    (lambda rows: rows.append({"question_id": "conv-99/qa1", "ranked_ids": []}), "is not among the"),
    (lambda rows: rows.append(dict(rows[0])), "appears twice"),
    (lambda rows: rows[0]["ranked_ids"].insert(0, "conv-26/D99:99"), "which is no item of the data set"),
    (lambda rows: rows[0]["ranked_ids"].insert(0, "conv-30/D1:1"), "a leak"),
    (lambda rows: rows[0].update(data_sha256="0" * 64), "was made from a data file with sha256"),
    (lambda rows: rows[0].update(ranked_ids="conv-26/D1:1"), "should be a list of item id strings"),
    (lambda rows: [r.update(question_id="x" + r["question_id"]) for r in rows], "is it a run over another data"),
])
def test_bad_jsonl_is_one_line(locomo_run, locomo_path, tmp_path, capsys, edit, fragment):
    tmp, _ = locomo_run
    run = _jsonl(tmp, "memini-hybrid", tmp_path / "bad.jsonl", edit=edit)
    _refused(capsys, ["-suite", "locomo", "-data", str(locomo_path), "-run", str(run)], fragment, tmp_path / "out")


def test_leaks_count_drops_and_counts(locomo_run, locomo_path, tmp_path, capsys):
    tmp, _ = locomo_run
    run = _jsonl(tmp, "memini-hybrid", tmp_path / "leak.jsonl",
                 edit=lambda rows: rows[0]["ranked_ids"].insert(0, "conv-30/D1:1"))
    code, out, err = run_cli(["score", "-suite", "locomo", "-data", str(locomo_path), "-run", str(run), "-leaks",
                              "count"], capsys)
    assert code == 0, err
    assert "| leaked |" in out and " 1 |" in out


@pytest.mark.parametrize("text, fragment", [
    ("q1 Q0 d1 1 x tag\n", "is not a finite number"),
    ("q1 Q0 d1 1 1.0\n", "5 columns, not 6"),
    ("q1 Q0 d1 1 1.0 a\nq1 Q0 d1 2 0.5 a\n", "ranks 'd1' twice"),
    ("q1 Q0 d1 1 1.0 a\nq1 Q0 d2 2 0.5 b\n", "2 run tags"),
    ("\n\n", "blank"),
])
def test_bad_trec_run_is_one_line(tmp_path, capsys, text, fragment):
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "r.run"
    run.write_text(text)
    _refused(capsys, ["-qrels", str(qrels), "-run", str(run)], fragment, tmp_path / "out")


@pytest.mark.parametrize("args, fragment", [
    ([], "give -run FILE"),
    (["-run", "r.run"], "give the gold once"),
    (["-run", "r.run", "-qrels", "q", "-suite", "locomo"], "give the gold once"),
    (["-run", "r.run", "-qrels", "q", "-exclude", "known-bad"], "needs the data set"),
    (["-run", "r.run", "-run", "r.run", "-qrels", "q"], "given twice"),
    (["-run", "r.run", "-suite", "sample", "-exclude", "known-bad"], "has no list of known bad gold"),
    (["-run", "r.run", "-qrels", "q", "-unit", "summary"], "-unit: needs the data set"),
    (["-run", "r.run", "-qrels", "q", "-significance"], "give two or more -run files"),
    (["-run", "r.run", "-run", "s.run", "-qrels", "q", "-resamples", "200"], "add -significance"),
    (["-run", "r.run", "-qrels", "q", "-metrics", "latency_p50"], "records no recall latency"),
    (["-run", "r.run", "-qrels", "q", "-pool", "30"], "no such flag -pool"),
    (["-run", "r.run", "-qrels", "q", "-limit", "3"], "no such flag -limit"),
    (["-run", "r.run", "-qrelz", "q"], "no such flag -qrelz; did you mean -qrels?"),
    (["-run", "r.run", "-suite", "locomo", "-granularity", "turn"], "-granularity: not used by -suite locomo"),
    (["-run", "missing.run", "-qrels", "q"], "no such file"),
])
def test_bad_flags_are_one_line(tmp_path, capsys, args, fragment):
    _refused(capsys, args, fragment, tmp_path / "out")


def test_longmemeval_bare_session_ids_are_read_inside_the_questions_haystack(lme_dir, tmp_path, capsys):
    """LongMemEval's logs rank bare session ids; the loader names them <question id>/<session id>."""
    from memini_bench.loaders import load

    data = lme_dir / "longmemeval_s_single.json"
    (q,) = load("longmemeval", str(data)).questions
    gold = q.gold[0].split("/", 1)[1]
    others = [i.id.split("/", 1)[1] for i in load("longmemeval", str(data)).items if i.id != q.gold[0]][:4]
    run = tmp_path / "lme.jsonl"
    run.write_text(json.dumps({"question_id": q.id, "ranked_ids": [*others, gold]}) + "\n")
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["score", "-suite", "longmemeval", "-data", str(data), "-run", str(run), "-k", "1,5",
                              "-out", str(out_dir)], capsys)
    assert code == 0, err
    rows = _rows(_score_doc(out_dir))
    assert rows["lme", 1]["recall_any@{k}"] == 0.0 and rows["lme", 5]["recall_any@{k}"] == 1.0
    assert rows["lme", 5]["mrr"] == 1 / 5
    assert "protocol answerable-470" in out
    run.write_text(json.dumps({"question_id": q.id, "ranked_ids": ["no_such_session"]}) + "\n")
    _refused(capsys, ["-suite", "longmemeval", "-data", str(data), "-run", str(run)], "which is no item",
             tmp_path / "out2")


_line = st.tuples(st.sampled_from(["q1", "q2", "q3", "%", "q%201"]), st.sampled_from(["d1", "d2", "d3", "%25"]),
                  st.sampled_from(["1", "0.5", "-2", "nan", "x"]), st.sampled_from(["a", "b"]))


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(_line, max_size=6), min_size=1, max_size=3), st.sampled_from(["1", "1,3", "2,50"]))
def test_any_trec_runs_score_or_fail_in_one_line(tmp_path, capsys, runs, ks):
    """Whatever TREC runs (valid or not) meet a qrels: exit 0 with tables, or one line and exit 2."""
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq2 0 d3 0\n")
    args = ["score", "-qrels", str(qrels), "-k", ks] + (["-significance", "-resamples", "100"] if len(runs) > 1 else [])
    for n, lines in enumerate(runs):
        path = tmp_path / f"r{n}.run"
        path.write_text("".join(f"{q} Q0 {d} 1 {s} {t}\n" for q, d, s, t in lines))
        args += ["-run", str(path)]
    code, out, err = run_cli(args, capsys)
    assert code in (0, 2), err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("memini-bench score: error:") and out == ""
    else:
        assert "questions, recall_any@" in out


def test_longmemeval_official_protocol_round_trip(lme_dir, tmp_path, capsys):
    """-granularity turn (protocol official): score gives the run's numbers and its session-from-turn table."""
    data = lme_dir / "longmemeval_oracle_sample97.json"
    pq, runs = tmp_path / "pq.jsonl", tmp_path / "runs"
    code, run_out, err = run_cli(["-suite", "longmemeval", "-data", str(data), "-granularity", "turn", "-embedder",
                                  "hash", "-k", "5,10", "-systems", "keyword", "-per-question", str(pq), "-out",
                                  str(runs), "-quiet"], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in pq.read_text().splitlines()]
    ranked = tmp_path / "memini-keyword.jsonl"
    ranked.write_text("".join(json.dumps({"question_id": r["id"], "ranked_ids": [i[0] for i in r["ranked"]]}) + "\n"
                              for r in rows))
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["score", "-suite", "longmemeval", "-data", str(data), "-granularity", "turn", "-k",
                              "5,10", "-run", str(ranked), "-out", str(out_dir)], capsys)
    assert code == 0, err
    own = _rows(json.loads(next(runs.glob("*.json")).read_text()))
    doc = _score_doc(out_dir)
    for key, row in _rows(doc).items():
        for metric in METRICS:
            assert row[metric] == own[key][metric], (key, metric)
    table = run_out[run_out.index("### LongMemEval's retrieval metrics"):].split("\n\n")[:2]
    assert "\n\n".join(table) in out
    assert "protocol official" in out and doc["config"]["protocol"] == "official"
