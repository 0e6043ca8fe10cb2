"""Where a run's results go (``OutputOptions``, the output flags), apart from the writers (``results.write``) so that
building the CLI's flags imports no results code."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from memini_bench.core.settings import setting
from memini_bench.errors import BenchError

if TYPE_CHECKING:
    from memini_bench.core.metrics import Metric


@dataclasses.dataclass(frozen=True)
class OutputOptions:
    """Where results go. The results file is ``<out>/<stem>.json`` with the stem from
    ``memini_bench.results.identity``."""

    GROUP = "outputs"

    out: str = setting("out", "runs", "Directory for the JSON results file (named after the data set and every "
                       "non-default setting; see -name).")
    name: str = setting("name", "", "Label for the results file instead of the settings suffix: "
                        "<out>/<dataset>-<LABEL>.json.")
    per_question: str = setting("per-question", "", "Also write per-question JSONL (id, gold, ranked ids and "
                                "scores, rank, latency) to this file.")
    trec: str = setting("trec", "", "Also write TREC files to this folder: <stem>.qrels and <stem>.<system>.run "
                        "(for trec_eval / ir_measures).")
    plot: bool = setting("plot", False, "Also write a PNG: the per-category bar chart of a normal run "
                         "(<out>/<stem>-categories.png), the sweep's chart, VetoBench's scale curve (with -scale).")
    no_write: bool = setting("no-write", False, "Print tables only; write no file (not combinable with "
                             "-per-question or -trec).")
    metrics: str = setting("metrics", "", "Comma-separated metrics to print, one column each (e.g. "
                           "recall_frac@5,mrr@10; without @K: at each -k), also stored in the results file; "
                           "memini-bench -list metrics lists them. Default: the standard tables.")

    def __post_init__(self) -> None:
        if self.no_write and (self.per_question or self.trec):
            flag = "-per-question" if self.per_question else "-trec"
            raise BenchError(f"{flag}: cannot be combined with -no-write (which writes nothing); drop one of them")
        if not self.out.strip():
            raise BenchError("-out '': give a folder for the results file (the default is runs/; '.' is this folder)")
        if self.name and (set(self.name) & set('/\\\0') or self.name.startswith(".")):
            raise BenchError(f"-name {self.name!r}: use a plain label (no slashes, not starting with a dot)")
        if self.metrics:
            from memini_bench.core.metrics import parse_list

            parse_list(self.metrics, flag="-metrics")  # an unknown name: one line naming the closest, before work

    def metric_list(self) -> tuple[Metric, ...]:
        """The ``-metrics`` asked for (none: the standard tables)."""
        from memini_bench.core.metrics import parse_list

        return parse_list(self.metrics, flag="-metrics") if self.metrics else ()
