"""Reading back the per-question JSONL that ``-per-question`` writes (``report.per_question_rows``) as RunResults.

A path ending in ``.gz`` is read as gzip-compressed JSONL (the committed results' per-question records,
``results/<stem>.jsonl.gz``, which leave out scores and latency). One row per (system, question): ``system, id,
group, category, gold, ranked, scores, first_gold_rank, latency_ms``. Rows are grouped by system (in
first-appearance order) into ``runner.RunResult`` objects of
``runner.QuestionRun`` / ``dataset.Question``, so every metric of a file comes from ``metrics`` exactly as it
does for a live run. What the file does not hold stays empty: the query text, token counts (``tokens = ()``),
ingest time and corpus size (0). A run's ``depth`` is the longest ranking in it (a lower bound on the depth it
was recalled at). The file's ``first_gold_rank`` column must agree with the one recomputed from gold and ranked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from memini_bench.core.dataset import Question
from memini_bench.core.inputs import read_regular
from memini_bench.core.runs import QuestionRun, RunResult, first_gold_rank
from memini_bench.errors import BenchError
from memini_bench.loaders._json import expect, field_of

RESULTS_FILE_HINT = ("a results file holds per-system scores only, and a paired test needs each question's "
                     "ranking; rerun with -per-question FILE.jsonl and compare those files")

#: How long a per-question FIFO may stay silent (no writer) before it is refused.
FIFO_WAIT_S = 3.0


def read_per_question(path: str | Path) -> list[RunResult]:
    """Every system's RunResult in the per-question JSONL at ``path`` (errors name the file and the line)."""
    p = Path(path)
    if not p.exists() or p.is_dir():
        what = "is a directory" if p.is_dir() else "no such file"
        raise BenchError(f"{p}: {what}; pass a per-question JSONL file written by -per-question")
    # a FIFO (-compare <(...)) is read once, with a wait and a cap; a device or socket is refused before reading
    data = read_regular(p, fifo_wait=FIFO_WAIT_S)
    if p.suffix == ".gz":
        data = _gunzip(p, data)
    lines = data.splitlines()
    by_system: dict[str, dict[str, QuestionRun]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{p}:{number}"
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            _refuse_results_file(p, where)
            raise BenchError(f"{where}: not a JSON line; pass a per-question JSONL file written by "
                             "-per-question") from None
        if isinstance(row, dict) and "results" in row and "config" in row:
            raise BenchError(f"{p}: {RESULTS_FILE_HINT}")
        system, run = _question_run(row, where)
        runs = by_system.setdefault(system, {})
        expect(run.question.id not in runs, where, f"question {run.question.id!r} appears twice for system "
               f"{system!r}; is this two runs concatenated? Compare them as two files")
        runs[run.question.id] = run
    if not by_system:
        raise BenchError(f"{p}: no rows; pass a per-question JSONL file written by -per-question")
    return [RunResult(system=system, dataset=p.stem, depth=max((len(r.ranked_ids) for r in runs.values()),
                                                               default=0),
                      ingest_ms=0.0, corpus_tokens=0, questions=tuple(runs.values()))
            for system, runs in by_system.items()]


def _gunzip(path: Path, data: bytes) -> bytes:
    """A ``.gz`` per-question file's text (``results.write.write_jsonl`` compresses on that suffix)."""
    import gzip
    import zlib

    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        raise BenchError(f"{path}: not a gzip file; a .jsonl.gz per-question file is gzip-compressed JSONL "
                         "(written by -per-question FILE.jsonl.gz)") from None


def _question_run(row: Any, where: str) -> tuple[str, QuestionRun]:
    system = field_of(row, "system", str, where)
    gold = field_of(row, "gold", list, where)
    ranked = field_of(row, "ranked", list, where)
    scores = field_of(row, "scores", list, where, required=False, default=[])
    expect(all(isinstance(g, str) for g in gold), where, "field 'gold' should be a list of item ids")
    expect(all(isinstance(ids, list) and all(isinstance(i, str) for i in ids) for ids in ranked), where,
           "field 'ranked' should be a list of hits, each a list of item ids")
    expect(all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores), where,
           "field 'scores' should be a list of numbers")
    question = Question(id=field_of(row, "id", str, where), query="", gold=tuple(gold),
                        group=field_of(row, "group", str, where, required=False, default=""),
                        category=field_of(row, "category", str, where, required=False, default=""))
    run = QuestionRun(question=question, ranked_ids=tuple(tuple(ids) for ids in ranked),
                      scores=tuple(float(s) for s in scores), tokens=(),
                      latency_ms=float(field_of(row, "latency_ms", (int, float), where, required=False, default=0.0)))
    stated = field_of(row, "first_gold_rank", int, where, required=False)
    expect(stated is None or stated == first_gold_rank(run), where,
           f"first_gold_rank {stated} disagrees with gold and ranked ({first_gold_rank(run)}); the file was edited "
           "or is not from -per-question")
    return system, run


def _refuse_results_file(path: Path, where: str) -> None:
    """A pretty-printed results JSON fails line by line: say what it is instead of 'not a JSON line'."""
    try:
        doc = orjson.loads(read_regular(path))
    except orjson.JSONDecodeError:
        return
    if isinstance(doc, dict) and "results" in doc:
        raise BenchError(f"{path}: {RESULTS_FILE_HINT}")
