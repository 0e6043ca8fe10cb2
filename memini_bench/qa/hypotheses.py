"""``-qa-hypotheses FILE``: grade answers produced elsewhere with this run's judge and prompts (LongMemEval's
``evaluate_qa`` input): JSON Lines of ``{"question_id": ..., "hypothesis": ...}``, one per question.

The answers form one arm, ``answers:<file stem>``, beside any retrieval arms of the run (paired with them by
question); no reader is called for it (its reader call is archived as ``external``, zero tokens). Only the
questions the file answers are graded, and the note says how many of the data set's that is. Bad input is one
line naming the file and line: not JSON, a missing or non-string field, a question answered twice, a question
the data set (after ``-qa-categories`` / ``-qa-exclude``) does not hold.
"""

from __future__ import annotations

from pathlib import Path

from memini_bench.core.dataset import Dataset
from memini_bench.errors import BenchError
from memini_bench.qa import prompts
from memini_bench.qa.engine import Task
from memini_bench.results.rankings import json_objects

#: The ``system`` of the hypotheses arm (``summary.Arm``).
SYSTEM = "hypotheses"
HINT = "give JSON Lines of {\"question_id\": ..., \"hypothesis\": ...} (LongMemEval's evaluate_qa input)"


def arm_name(path: str) -> str:
    return f"answers:{Path(path).stem}"


def read(path: str, ds: Dataset) -> dict[str, str]:
    """Question id -> hypothesis, in file order, checked against ``ds``'s questions."""
    p = Path(path)
    try:
        lines = p.read_bytes().splitlines()
    except FileNotFoundError:
        raise BenchError(f"-qa-hypotheses {path}: no such file; {HINT}") from None
    except OSError as exc:
        raise BenchError(f"-qa-hypotheses {path}: cannot read ({exc.strerror or exc}); {HINT}") from None
    known = {q.id for q in ds.questions}
    out: dict[str, str] = {}
    for _, where, row in json_objects(lines, f"-qa-hypotheses {path}", HINT):
        qid, answer = row.get("question_id"), row.get("hypothesis")
        if not isinstance(qid, str) or not isinstance(answer, str):
            raise BenchError(f"{where}: needs string fields question_id and hypothesis; {HINT}")
        if qid in out:
            raise BenchError(f"{where}: question {qid!r} is answered twice; give one hypothesis per question")
        if qid not in known:
            raise BenchError(f"{where}: question {qid!r} is not among the {len(known)} questions graded of "
                             f"{ds.name}; grade answers to this data set (same -suite, -data, -qa-categories)")
        out[qid] = answer
    if not out:
        raise BenchError(f"-qa-hypotheses {path}: no answers in the file; {HINT}")
    return out


def tasks(ds: Dataset, answers: dict[str, str], arm: str) -> list[Task]:
    """One task per answered question, in the data set's order."""
    return [Task(arm, index, q, prompts.qa_category(q.category, q.id), (), (), hypothesis=answers[q.id])
            for index, q in enumerate(ds.questions) if q.id in answers]
