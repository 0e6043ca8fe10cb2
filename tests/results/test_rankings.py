"""Reading rankings made elsewhere (``results.rankings``): any bytes give rankings or one BenchError; ``write_trec``
reads back to the same rankings; the TREC order and the scores agree with ir_measures (trec_eval's arithmetic)."""

from __future__ import annotations

import string

import ir_measures
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_measures import RR, Success

from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.errors import BenchError
from memini_bench.evaluation.external import as_result, questions_from_qrels
from memini_bench.evaluation.metrics import recall_any, reciprocal_rank
from memini_bench.results.rankings import read_qrels, read_rankings
from memini_bench.results.write import write_trec

SETTINGS = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.binary(max_size=400))
def test_any_bytes_read_or_refused_in_one_line(tmp_path, data):
    path = tmp_path / "fuzz.run"
    path.write_bytes(data)
    for reader in (read_rankings, read_qrels):
        try:
            reader(path)
        except BenchError as exc:
            assert "\n" not in str(exc) and str(path) in str(exc)


_token = st.text(alphabet=string.ascii_letters + string.digits + " %#\t:/é", min_size=1, max_size=6)
_lines = st.lists(st.tuples(st.sampled_from(["{", "q"]), _token, st.lists(_token, max_size=3)), max_size=5)


@SETTINGS
@given(_lines)
def test_near_valid_lines_read_or_refused(tmp_path, rows):
    """Lines close to both forms (JSON objects and TREC columns with odd ids) never raise anything but BenchError."""
    import json

    out = []
    for kind, qid, ids in rows:
        out.append(json.dumps({"question_id": qid, "ranked_ids": ids}) if kind == "{" else
                   f"{qid} Q0 {' '.join(ids) or 'd'} 1 0.5 t")
    path = tmp_path / "near.run"
    path.write_text("\n".join(out))
    try:
        read_rankings(path)
    except BenchError as exc:
        assert "\n" not in str(exc)


_ids = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)


@SETTINGS
@given(st.dictionaries(_ids, st.lists(_ids, unique=True, min_size=1, max_size=6), min_size=1, max_size=6),
       st.sampled_from(["sys", "a b/c", "%x"]))
def test_write_trec_reads_back_to_the_same_rankings(tmp_path, ranked, system):
    questions = tuple(QuestionRun(Question(id=qid, query="", gold=tuple(ids[:1])), tuple((i,) for i in ids),
                                  (), (), 0.0) for qid, ids in ranked.items())
    result = RunResult(system=system, dataset="d", depth=6, ingest_ms=0.0, corpus_tokens=0, questions=questions)
    folder = tmp_path / "trec"
    paths = write_trec(folder, "d", [result])
    qrels = read_qrels(paths[0])
    assert qrels == {qid: tuple(ids[:1]) for qid, ids in ranked.items() if ids}
    back = read_rankings(paths[1])
    assert back.system == system
    assert back.ranked == {qid: tuple(ids) for qid, ids in ranked.items() if ids}


@SETTINGS
@given(st.data())
def test_scores_agree_with_ir_measures_with_tied_scores(tmp_path, data):
    """Random runs whose scores tie often: recall_any@K (Success@K) and MRR (RR) as ir_measures computes them."""
    docs = [f"d{i}" for i in range(8)]
    qrels, run_lines = [], []
    for q in range(data.draw(st.integers(1, 6))):
        gold = data.draw(st.lists(st.sampled_from(docs), min_size=1, max_size=3, unique=True))
        ranked = data.draw(st.lists(st.sampled_from(docs), max_size=8, unique=True))
        qrels += [ir_measures.Qrel(f"q{q}", d, 1) for d in gold]
        run_lines += [(f"q{q}", d, float(data.draw(st.integers(0, 3)))) for d in ranked]
    (tmp_path / "q.qrels").write_text("".join(f"{r.query_id} 0 {r.doc_id} 1\n" for r in qrels))
    (tmp_path / "r.run").write_text("".join(f"{q} Q0 {d} {n} {s} t\n" for n, (q, d, s) in enumerate(run_lines)))
    qrels_read = read_qrels(tmp_path / "q.qrels")
    run = read_rankings(tmp_path / "r.run") if run_lines else None
    if run is None:
        return
    result = as_result(run, questions_from_qrels("d", qrels_read)).result
    theirs: dict[tuple[str, object], float] = {}
    for m in ir_measures.iter_calc([Success @ 1, Success @ 3, RR], qrels,
                                   [ir_measures.ScoredDoc(q, d, s) for q, d, s in run_lines]):
        theirs[m.query_id, m.measure] = m.value
    for r in result.questions:  # a question the run does not rank: 0 for us, absent for trec_eval
        qid = r.question.id
        for k in (1, 3):
            assert recall_any(r, k) == theirs.get((qid, Success @ k), 0.0), (qid, k)
        assert reciprocal_rank(r) == pytest.approx(theirs.get((qid, RR), 0.0)), qid
