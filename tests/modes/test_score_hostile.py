"""``score`` on hostile and tricky inputs (issue 42): special files are refused at once, a byte-order mark does
not change the first question, a JSONL run is read as JSONL even when its first line is broken, a run sharing no
question with the qrels is refused; valid but tricky TREC inputs are scored as trec_eval / ir_measures score them
(ties ordered by the docid column as written, %-escaped ids included; graded qrels; questions only in the run left
out and announced; questions only in the qrels scored as zero; contradictory qrels lines refused), compared with
ir_measures on the same files; and any bytes in either file end as tables or as one line with exit 2, nothing
written."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import ir_measures
import pytest
from cli_run import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.core.metrics import parse
from memini_bench.evaluation.external import as_result, questions_from_qrels
from memini_bench.results.rankings import read_judgements, read_rankings

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _score(capsys, tmp_path: Path, qrels: str | Path, *runs: str | Path, extra: tuple[str, ...] = ()):
    args = ["score", "-qrels", str(qrels), *extra, "-out", str(tmp_path / "out")]
    for r in runs:
        args += ["-run", str(r)]
    return run_cli(args, capsys)


def _refused(code: int, out: str, err: str, fragment: str, tmp_path: Path) -> None:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("memini-bench score: error:"), err
    assert fragment in err, err
    assert "Traceback" not in err and out == ""
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def _write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("which", ["run", "qrels"])
def test_a_fifo_is_refused_at_once(tmp_path, which):
    """In a child process with a bound: opening a FIFO nobody writes would block forever."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    plain = _write(tmp_path / ("q.qrels" if which == "run" else "r.run"),
                   "q1 0 d1 1\n" if which == "run" else "q1 Q0 d1 1 1.0 t\n")
    qrels, run = (plain, fifo) if which == "run" else (fifo, plain)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "memini_bench", "score", "-qrels", str(qrels), "-run", str(run)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and "is a FIFO (named pipe), not a regular file" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_refused_without_reading_it(tmp_path, capsys):
    qrels = _write(tmp_path / "q.qrels", "q1 0 d1 1\n")
    _refused(*_score(capsys, tmp_path, qrels, "/dev/zero"), "is a character device, not a regular file", tmp_path)
    run = _write(tmp_path / "r.run", "q1 Q0 d1 1 1.0 t\n")
    _refused(*_score(capsys, tmp_path, "/dev/zero", run), "is a character device", tmp_path)
    code, out, err = _score(capsys, tmp_path, "/dev/zero", run)
    assert "-limit" not in err  # score has no -limit flag to suggest


def test_a_byte_order_mark_does_not_change_the_first_question(tmp_path, capsys):
    """A UTF-8 mark is skipped (the first question stays q1, so it scores); a UTF-16 file is refused."""
    text_q, text_r = "q1 0 d1 1\nq2 0 d2 1\n", "q1 Q0 d1 1 2.0 t\nq2 Q0 d9 1 2.0 t\nq2 Q0 d2 2 1.0 t\n"
    (tmp_path / "bom").mkdir()
    plain = _score(capsys, tmp_path, _write(tmp_path / "q.qrels", text_q), _write(tmp_path / "r.run", text_r))
    marked = _score(capsys, tmp_path / "bom", _write(tmp_path / "bom" / "q.qrels", "\ufeff" + text_q),
                    _write(tmp_path / "bom" / "r.run", "\ufeff" + text_r))
    assert plain[0] == marked[0] == 0, marked[2]
    assert plain[1] == marked[1] and "| 100.0% |" in plain[1]
    jsonl = _write(tmp_path / "r.jsonl", '\ufeff{"question_id": "q1", "ranked_ids": ["d1"]}\n')
    assert read_rankings(jsonl).ranked == {"q1": ("d1",)}
    (tmp_path / "u16").mkdir()
    _refused(*_score(capsys, tmp_path / "u16", tmp_path / "q.qrels",
                     _write(tmp_path / "u16" / "r.run", text_r.encode("utf-16"))), "is UTF-16 text", tmp_path / "u16")


@pytest.mark.parametrize("first", ['{"question_id": "q1", "ranked_ids": ["d1"]', '{question_id: "q1"}', '[1, 2'])
def test_a_jsonl_run_whose_first_line_does_not_parse_is_refused_as_jsonl(tmp_path, capsys, first):
    qrels = _write(tmp_path / "q.qrels", "q1 0 d1 1\n")
    run = _write(tmp_path / "r.jsonl", first + '\n{"question_id": "q2", "ranked_ids": []}\n')
    _refused(*_score(capsys, tmp_path, qrels, run), "r.jsonl:1: not a JSON line", tmp_path)


def test_a_run_sharing_no_question_with_the_qrels_is_refused(tmp_path, capsys):
    qrels = _write(tmp_path / "q.qrels", "conv-1/qa1 0 d1 1\nconv-1/qa2 0 d2 1\n")
    run = _write(tmp_path / "r.run", "qa1 Q0 d1 1 1.0 t\n")
    _refused(*_score(capsys, tmp_path, qrels, run),
             "shares no question with q: it names 'qa1' where q's questions are named like 'conv-1/qa1' or "
             "'conv-1/qa2'", tmp_path)


def test_questions_only_in_the_run_are_left_out_and_announced(tmp_path, capsys):
    qrels = _write(tmp_path / "q.qrels", "q1 0 d1 1\nq2 0 d2 1\n")
    run = _write(tmp_path / "r.run", "q1 Q0 d1 1 1.0 t\nq9 Q0 d1 1 1.0 t\nq8 Q0 d1 1 1.0 t\n")
    code, out, err = _score(capsys, tmp_path, qrels, run)
    assert code == 0, err
    assert "## q — 2 questions" in out and "| t | 50.0% |" in out  # q2 (only in the qrels): a miss; q8, q9: out
    assert "ranks 2 questions the qrels do not hold (e.g. 'q9'); left out" in err
    assert "ranks no item for 1 of the 2 questions" in err


def test_contradictory_qrels_lines_are_refused_and_repeated_ones_read_once(tmp_path, capsys):
    run = _write(tmp_path / "r.run", "q1 Q0 d1 1 1.0 t\n")
    _refused(*_score(capsys, tmp_path, _write(tmp_path / "q.qrels", "q1 0 d1 1\nq1 0 d2 1\nq1 0 d1 0\n"), run),
             "q.qrels:3: question 'q1' grades 'd1' 0, but line 1 grades it 1", tmp_path)
    code, out, err = _score(capsys, tmp_path, _write(tmp_path / "q2.qrels", "q1 0 d1 1\nq1 0 d1 1\n"), run)
    assert code == 0 and "| t | 100.0% |" in out, err


def test_graded_qrels_give_graded_ndcg(tmp_path, capsys):
    """Grades are gains (trec_eval's ndcg_cut): d2 graded 3 ranked second beats d1 graded 1 ranked first."""
    qrels = _write(tmp_path / "q.qrels", "q1 0 d1 1\nq1 0 d2 3\nq1 0 d3 0\n")
    run = _write(tmp_path / "r.run", "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d3 3 1.0 t\n")
    code, out, err = _score(capsys, tmp_path, qrels, run, extra=("-k", "3", "-metrics", "ndcg@3,precision(rel=2)@3"))
    assert code == 0, err
    theirs = TREC_EVAL.calc_aggregate([ir_measures.nDCG @ 3, ir_measures.P(rel=2) @ 3],
                                        ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run)))
    ndcg, precision = theirs[ir_measures.nDCG @ 3], theirs[ir_measures.P(rel=2) @ 3]
    assert f"| **{ndcg * 100:.1f}%** | **{precision * 100:.1f}%** |" in out
    binary = (1 + 1 / math.log2(3)) / (1 + 1 / math.log2(3) + 0)  # d1 and d2 both gain 1: a perfect ranking
    assert ndcg < binary  # graded: d2 (grade 3) below d1 (grade 1) loses


#: Ids whose order by the column as written (trec_eval's strcmp) differs from the order of their unescaped text.
IDS = ["d1", "dB", "d%7A", "d%41", "d%25", "dC", "d%C3%A9"]
#: Our registered names and ir_measures' (computed by its trec_eval provider, pytrec_eval: its RR@K falls to the
#: MS MARCO script, which breaks ties in another order, so MRR is compared over the whole ranking).
MEASURES = {"recall_any@{k}": "Success@{k}", "mrr@50": "RR", "ndcg@{k}": "nDCG@{k}", "precision@{k}": "P@{k}",
            "recall_frac@{k}": "R@{k}", "r_precision": "Rprec"}
TREC_EVAL = ir_measures.providers.registry["pytrec_eval"]


@SETTINGS
@given(st.data())
def test_tricky_trec_files_score_as_ir_measures_scores_them(tmp_path_factory, data):
    """Random runs with many tied scores over %-escaped ids, graded qrels, questions only in the run and only in
    the qrels: per question, every measure equals trec_eval's (ir_measures' pytrec_eval provider) on the same
    files (read by ir_measures itself); a
    question only in the qrels is 0 (trec_eval -c), one only in the run is left out (as ir_measures leaves it)."""
    tmp = tmp_path_factory.mktemp("tricky")
    qrels_lines, run_lines = [], []
    for q in range(data.draw(st.integers(1, 5))):
        for doc in data.draw(st.lists(st.sampled_from(IDS), max_size=4, unique=True)):
            qrels_lines.append(f"q{q} 0 {doc} {data.draw(st.integers(0, 3))}\n")
    for q in range(data.draw(st.integers(0, 6))):
        for n, doc in enumerate(data.draw(st.lists(st.sampled_from(IDS), max_size=7, unique=True))):
            run_lines.append(f"q{q} Q0 {doc} {n} {data.draw(st.sampled_from(['1', '1.0', '2', '0.5']))} t\n")
    if not qrels_lines or not run_lines:
        return
    qrels, run = _write(tmp / "q.qrels", "".join(qrels_lines)), _write(tmp / "r.run", "".join(run_lines))
    judged = read_judgements(qrels)
    rankings = read_rankings(run)
    gold = questions_from_qrels("q", judged)
    if not set(rankings.ranked) & set(judged):
        return  # refused (another test): no question in common
    scored = as_result(rankings, gold)
    assert set(scored.ignored) == set(rankings.ranked) - set(judged)
    measures = {ours.format(k=k): ir_measures.parse_measure(theirs.format(k=k))
                for ours, theirs in MEASURES.items() for k in (1, 3, 5)}
    theirs = {(m.query_id, m.measure): m.value for m in TREC_EVAL.iter_calc(
        list(set(measures.values())), ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run)))}
    for question in scored.result.questions:
        qid = question.question.id
        for ours, measure in measures.items():
            expected = theirs.get((qid, measure), 0.0) if qid in rankings.ranked else 0.0
            assert parse(ours).per_question(question) == pytest.approx(expected), (qid, ours, run_lines)


_bytes = st.one_of(st.binary(max_size=80), st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"{", b"[", b"\x00"]).map(
    lambda head: head + b"q1 Q0 d1 1 1.0 t\n"))


@SETTINGS
@given(_bytes, _bytes, st.sampled_from([(), ("-k", "1,3"), ("-metrics", "ndcg@3,mrr")]))
def test_any_bytes_in_either_file_score_or_fail_in_one_line(tmp_path_factory, capsys, run_bytes, qrels_bytes, extra):
    tmp = tmp_path_factory.mktemp("bytes")
    run, qrels = _write(tmp / "r.run", run_bytes), _write(tmp / "q.qrels", qrels_bytes)
    code, out, err = _score(capsys, tmp, qrels, run, extra=extra)
    assert code in (0, 2), err
    if code == 2:
        _refused(code, out, err, "", tmp)
    else:
        assert "questions" in out and (tmp / "out").is_dir()
