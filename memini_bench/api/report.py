"""``Report``: what ``memini_bench.evaluate`` and ``memini_bench.score`` return — the scores per system and K (and
per category), the paired tests, the provenance — and its renderings: the CLI's markdown, LaTeX, flat rows keyed
by the registered metric names (``core.metrics``), a pandas DataFrame with one column per metric and K, a dict
(the results file's JSON), and the results file itself (``save``). A metric a row does not hold (a scored run's
latency) is ``None`` in the rows, NaN in the DataFrame and ``-`` in the tables, never the best."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memini_bench.core.metrics import MRR, NDCG, Latency, Metric, RecallAllAtK, RecallAnyAtK
from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_points, latex
from memini_bench.errors import BenchError
from memini_bench.results.schema import CompareResults, Score

#: The fields of a row besides its metrics (``rows``), in order.
ROW_FIELDS = ("system", "dataset", "k", "questions", "leaked", "ingest_ms", "model_load_ms", "embed_ms",
              "store_ingest_ms")


def latex_metrics(k: int) -> tuple[Metric, ...]:
    """The columns of ``to_latex`` at K: recall_any@K, recall_all@K, mrr, ndcg@K and latency_p50."""
    return RecallAnyAtK(k=k), RecallAllAtK(k=k), MRR(), NDCG(k=k), Latency(p=50)


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
        """One flat dict per system and K: ``ROW_FIELDS``, then every metric the row holds by its registered name
        (``recall_any@5``, ``mrr``, ``latency_p50``...). Per category: ``per_category``."""
        return [{**{name: getattr(s, name) for name in ROW_FIELDS}, **s.scores} for s in self.scores]

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
        first K): ``latex_metrics`` by their registered names, fractions as percentages with one decimal, the p50
        recall latency in ms (``-`` where a row has none: a scored run's); the best of each column bold, N and what
        bold means in comment lines under it."""
        k = self.ks[0] if k is None else k
        metrics = latex_metrics(k)
        cols = (Column("system", "system", "left"), *(Column(m.name, m.name,
                                                             better="higher" if m.higher_is_better else "lower")
                                                      for m in metrics))
        scores = [self.score(system, k) for system in self.systems]
        body = tuple((Cell(s.system, s.system), *(Cell(s.scores.get(m.name), fmt_num(s.scores.get(m.name))
                                                       if m.unit == "ms" else fmt_points(s.scores.get(m.name)))
                                                  for m in metrics)) for s in scores)
        n = max((s.questions for s in scores), default=0)
        note = f"N = {n} questions per system; bold: the best of each column (ties all bold; no test of a difference)."
        return latex(Table(cols, body, notes=(note,)).with_best())

    def to_dataframe(self):
        """A pandas DataFrame, one row per system (its name the index), one column per metric and K (the
        registered names: ``recall_any@5``, ``recall_any@10``, ``mrr``...), after ``dataset`` and ``questions``;
        needs pandas (the ``api`` extra)."""
        try:
            import pandas
        except ImportError:
            raise BenchError("Report.to_dataframe: needs pandas; install it (pip install 'memini-bench[api]' or "
                             "pip install pandas) or use Report.rows()") from None
        wide: dict[str, dict[str, Any]] = {}
        for s in self.scores:
            row = wide.setdefault(s.system, {"dataset": s.dataset, "questions": s.questions})
            for name, value in s.scores.items():
                row.setdefault(name, value)
        frame = pandas.DataFrame.from_dict(wide, orient="index")
        frame.index.name = "system"
        return frame

    def __repr__(self) -> str:
        """One line: the data set, the systems, the K list, N and how many paired tests."""
        n = max((s.questions for s in self.scores), default=0)
        return (f"Report(dataset={self.dataset!r}, systems={self.systems!r}, ks={self.ks!r}, questions={n}, "
                f"significance={len(self.significance)} tests)")

    def save(self, path: str | Path) -> Path:
        """Write the results file the CLI writes for this run to ``path`` (a folder: the CLI's file name in it),
        refused when ``path`` holds a run with another identity; returns the path written. Every refusal names the
        argument and the fix."""
        import os

        from memini_bench.modes.common import write_results
        from memini_bench.results.atomic_io import RunOutputs
        from memini_bench.results.identity import _differs, results_identity

        if not isinstance(path, str | os.PathLike) or not os.fspath(path):
            raise BenchError(f"Report.save(path={path!r}): give a file or folder path (a str or a pathlib.Path)")
        target = Path(path)
        if target.is_dir():
            target = target / (self.file_name or f"{self.dataset}.json")
        identity = self.config.get("identity", {})
        differing = _differs(target, identity, results_identity)
        if differing is not None:
            raise BenchError(f"Report.save(path={os.fspath(path)!r}): {target} holds a run made with other settings "
                             f"({', '.join(differing)}); give another path, or a folder (the run's own file name in "
                             "it)")
        try:
            with RunOutputs():
                write_results(target, self.document())
        except BenchError as exc:
            raise BenchError(f"Report.save(path={os.fspath(path)!r}): {exc}") from None
        return target
