"""``memini-bench score``'s own flags (``ScoreOptions``), apart from the mode (``modes.score``) so that building the
CLI's flags imports no scorer. Everything else ``score`` reads is a flag of the other verbs, declared once where
it lives: ``-suite``, ``-data``, ``-k`` (``core.options``), ``-metrics``, ``-out`` (``results.options``), ``-leaks``,
``-quiet``, ``-traceback`` (``evaluation.hits``), ``-exclude`` and the loader flags (``loaders.LoadOptions``),
``-significance``, ``-resamples``, ``-seed``, ``-categories`` (``modes.specs.SystemsRunOptions``)."""

from __future__ import annotations

from dataclasses import dataclass

from memini_bench.core.settings import Real, setting
from memini_bench.errors import BenchError


@dataclass(frozen=True)
class ScoreOptions:
    run: tuple[str, ...] = setting("run", (), "A run file to score: TREC (qid Q0 docid rank score tag) or JSONL "
                                   "({question_id, ranked_ids}); repeat for several (-significance tests every "
                                   "pair).", multiple=True)
    qrels: str = setting("qrels", "", "TREC qrels with the gold (qid iter docid rel; rel > 0 is gold, graded).")
    alpha: float = setting("alpha", 0.05, "Significance level of the paired tests (after Holm).",
                           type=Real(min=0, max=1, min_open=True))

    def __post_init__(self) -> None:
        object.__setattr__(self, "run", tuple(self.run or ()))
        if len(set(self.run)) != len(self.run):
            raise BenchError("-run: the same file is given twice; give each run once")
