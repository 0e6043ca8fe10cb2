"""``Report``: what ``memini_bench.evaluate`` returns — the scores per system and K (and per category), the paired
tests, the provenance — and its renderings: the CLI's markdown, LaTeX, a dict (the results file's JSON), a pandas
DataFrame, and the results file itself (``save``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_points, latex
from memini_bench.errors import BenchError
from memini_bench.results.schema import CompareResults, Score

#: The metric columns of ``to_latex``: registered names, ``{k}`` the row's K.
METRICS = ("recall_any@{k}", "recall_all@{k}", "mrr", "ndcg@{k}", "latency_p50")


@dataclass(frozen=True)
class Report:
    """One run's results (see the module docstring). ``scores`` holds one ``results.schema.Score`` per system and
    K (fractions in 0..1); ``significance`` the paired tests' rows (empty without ``significance=True``);
    ``config`` the provenance (data set and its sha256, every setting, the identity, the systems, the embedder,
    the harness version and commit) exactly as the results file records it."""

    dataset: str
    ks: tuple[int, ...]
    scores: tuple[Score, ...]
    significance: tuple[dict, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    markdown: str = field(default="", repr=False)
    #: The name of the results file the CLI writes for this run (from the data set and the settings).
    file_name: str = ""

    @property
    def systems(self) -> list[str]:
        """The systems in run order."""
        return list(dict.fromkeys(s.system for s in self.scores))

    def score(self, system: str, k: int | None = None) -> Score:
        """The ``Score`` of ``system`` at ``k`` (default the first K)."""
        k = self.ks[0] if k is None else k
        found = next((s for s in self.scores if s.system == system and s.k == k), None)
        if found is None:
            raise BenchError(f"Report.score({system!r}, {k}): no such row; systems {', '.join(self.systems)}, "
                             f"K {', '.join(map(str, self.ks))}")
        return found

    def per_category(self, system: str, k: int | None = None) -> dict[str, float]:
        """recall_any@K of ``system`` per question category (label -> fraction; empty when the data set has
        none)."""
        labels = self.config.get("category_labels", {})
        return {labels.get(c, c): v for c, v in self.score(system, k).category("recall_any@{k}").items()}

    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per system and K: system, k, questions, one key per metric the run scored (its registered
        name: ``recall_any@5``, ``mrr``, ``latency_p50``, any ``-metrics`` asked for), the ingest timings and the
        leaked count."""
        return [{"system": s.system, "dataset": s.dataset, "k": s.k, "questions": s.questions, **s.scores,
                 "ingest_ms": s.ingest_ms, "model_load_ms": s.model_load_ms, "embed_ms": s.embed_ms,
                 "store_ingest_ms": s.store_ingest_ms, "leaked": s.leaked} for s in self.scores]

    def to_markdown(self) -> str:
        """The tables the CLI prints for the same run (the scores, the data set's own tables, the paired tests)."""
        return self.markdown

    def to_dict(self) -> dict[str, Any]:
        """The results file's JSON document (what ``save`` writes)."""
        return self.document().to_dict()

    def document(self) -> CompareResults:
        from memini_bench.results.write import results_document

        return results_document(self.config, self.scores, **self.extra)

    def to_latex(self, k: int | None = None) -> str:
        """A LaTeX ``tabular`` (booktabs rules, through the one table model) of every system at ``k`` (default the
        first K): recall_any@K, recall_all@K, MRR, nDCG@K as percentages with one decimal, and the p50 recall latency
        in ms; the best of each column bold, N and what bold means in comment lines under it."""
        k = self.ks[0] if k is None else k
        names = [name.format(k=k) for name in METRICS]
        cols = (Column("system", "system", "left"), *(Column(name, name, better="lower" if name == "latency_p50"
                                                             else "higher") for name in names))
        scores = [self.score(system, k) for system in self.systems]
        body = tuple((Cell(s.system, s.system), *(Cell(s[name], fmt_num(s[name]) if name == "latency_p50"
                                                       else fmt_points(s[name])) for name in names))
                     for s in scores)
        n = max((s.questions for s in scores), default=0)
        note = f"N = {n} questions per system; bold: the best of each column (ties all bold; no test of a difference)."
        return latex(Table(cols, body, notes=(note,)).with_best())

    def to_dataframe(self):
        """A pandas DataFrame, one row per system and K (``rows``); needs pandas."""
        try:
            import pandas
        except ImportError:
            raise BenchError("Report.to_dataframe: needs pandas; install it (pip install pandas) or use "
                             "Report.rows()") from None
        return pandas.DataFrame(self.rows())

    def save(self, path: str | Path) -> Path:
        """Write the results file the CLI writes for this run to ``path`` (a folder: the CLI's file name in it),
        refused when ``path`` holds a run with another identity; returns the path written."""
        from memini_bench.modes.common import write_results
        from memini_bench.results.atomic_io import RunOutputs

        target = Path(path)
        if target.is_dir():
            target = target / (self.file_name or f"{self.dataset}.json")
        with RunOutputs():
            write_results(target, self.document())
        return target
