"""The tables a data set asks for beside the normal ones, from the same run (nothing is recalled again).

``breakdowns(ds, results, ks)`` returns the markdown to print after the per-category table and the blocks to add to
the results file: LongMemEval's turn and session-from-turn metrics (``evaluation.longmemeval_turns``) where the
questions are turn-level, recall by evidence distance and LoCoMo's evidence recall (``evaluation.evidence``) where
the questions carry their evidence. A data set that asks for none gets ``("", {})``.
"""

from __future__ import annotations

from collections.abc import Sequence

from memini_bench.core.dataset import Dataset
from memini_bench.core.runs import RunResult
from memini_bench.evaluation import evidence, longmemeval_turns


def breakdowns(ds: Dataset, results: Sequence[RunResult], ks: Sequence[int]) -> tuple[str, dict]:
    text, blocks = "", {}
    for part in (longmemeval_turns.table(ds, results, ks), evidence.distance_table(results, ks),
                 evidence.evidence_table(ds, results, ks)):
        text += part[0]
        blocks.update(part[1])
    return text, blocks
