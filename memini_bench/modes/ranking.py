"""Scoring each strategy's whole ranked list per category (memini ``bench/recency.go``: ``score``, ``finalize``,
``RerankMarkdown``), shared by ``-rerank`` and the rerank tier, through the one metrics path.

Each strategy's lists become a ``runner.RunResult`` (one ``QuestionRun`` per question holding the strategy's
entire candidate list), scored by ``metrics.score`` on the questions of each category:

    R@1 = metrics recall_any@1      R@K = metrics recall_any@K      MRR = metrics MRR over the whole list

(``rank`` = the 0-based position of the first gold id, -1 if absent; MRR is not cut at K, as memini's.) Every
question also counts in the category ``all``; a question without a category counts only there. Rows: categories
sorted, strategies in run order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult, first_gold_rank
from memini_bench.core.table import Cell, Column, Table, fmt_pct, render
from memini_bench.evaluation.metrics import score_by_category
from memini_bench.results.schema import RankRow

ALL = "all"


class RankTally:
    """Collects each strategy's ranked list per question; ``rows()`` scores them with ``metrics``."""

    def __init__(self, k: int, dataset: str = "") -> None:
        self.k = k
        self.dataset = dataset
        self._runs: dict[str, list[QuestionRun]] = {}

    def add(self, system: str, question: Question, ranked_ids: Iterable[str]) -> int:
        """Record ``system``'s list for ``question``; returns the first gold rank (-1 if absent)."""
        run = QuestionRun(question, tuple((i,) for i in ranked_ids), (), (), 0.0)
        self._runs.setdefault(system, []).append(run)
        return first_gold_rank(run)

    def results(self) -> list[RunResult]:
        return [RunResult(system, self.dataset, max((len(r.ranked_ids) for r in runs), default=0), 0.0, 0,
                          tuple(runs)) for system, runs in self._runs.items()]

    def rows(self) -> list[RankRow]:
        by_system = {r.system: (score_by_category(r, 1, ALL), score_by_category(r, self.k, ALL))
                     for r in self.results()}
        categories = sorted({c for at1, _ in by_system.values() for c in at1})
        out = []
        for cat in categories:
            for system, (at1, atk) in by_system.items():
                if cat in at1:
                    out.append(RankRow(system, cat, atk[cat].questions, at1[cat]["recall_any@{k}"],
                                       atk[cat]["recall_any@{k}"], atk[cat]["mrr"]))
                else:
                    out.append(RankRow(system, cat, 0, 0.0, 0.0, 0.0))
        return out


def table(rows: Sequence[RankRow], k: int, title: str, labels: dict[str, str] | None = None) -> Table:
    """memini's RerankMarkdown table (``title`` replaces its heading's subject), with a footnote stating N."""
    labels = labels or {}
    columns = (Column("category", "Category", "left"), Column("system", "System", "left"), Column("questions", "Q"),
               Column("recall_any_at_1", "recall_any@1", better="higher"),
               Column("recall_any_at_k", f"recall_any@{k}", better="higher"), Column("mrr", "mrr", better="higher"))
    body = tuple((Cell(r.category, f"{r.category} ({labels[r.category]})" if r.category in labels else r.category),
                  Cell(r.system, r.system), Cell(r.questions, str(r.questions)),
                  *(Cell(v, fmt_pct(v)) for v in (r.recall_any_at_1, r.recall_any_at_k, r.mrr))) for r in rows)
    note = (f"N: Q, the questions of each category (all: every question). recall_any at 1 and {k}; mrr over "
            "each strategy's whole list (not cut at K). No marks: no test is run between the strategies.")
    return Table(columns, body, title=f"## {title} (recall_any@1 / recall_any@{k} / mrr)", notes=(note,),
                 notes_in_markdown=True)


def markdown(rows: Sequence[RankRow], k: int, title: str, labels: dict[str, str] | None = None) -> str:
    return render(table(rows, k, title, labels), "md")
