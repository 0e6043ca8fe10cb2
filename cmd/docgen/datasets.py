"""The generated table of docs/datasets.md (``datasets``): the committed runs of memini's three systems on the
data sets' other units and suites (BEAM, LoCoMo's observations and summaries, LongMemEval at turn granularity),
each with its items, scored questions and what its notes say was left out, and recall_any@10 / recall_all@10 /
nDCG@10 per system.
"""

from __future__ import annotations

from pathlib import Path

from docgen.blocks import get
from memini_bench.core.table import fmt_points, markdown, table_of
from memini_bench.results.schema import CompareResults

FILES = ("beam-100k.json", "locomo-observations.json", "locomo-summaries.json",
         "longmemeval-turns-oracle-sample97.json", "longmemeval-turns-s-single.json",
         "longmemeval-turns-oracle-examples.json")
SYSTEMS = ("memini-hybrid", "memini-vector", "memini-keyword")


def _cell(doc: CompareResults, system: str, k: int) -> str:
    s = doc.score(system, k)
    if s is None:
        return "-"
    return f"{fmt_points(s['recall_any@{k}'])} / {fmt_points(s['recall_all@{k}'])} / {fmt_points(s['ndcg@{k}'])}"


def table(results_dir: Path) -> str:
    docs = [(name, doc) for name in FILES if (doc := get(Path(results_dir), name, CompareResults)) is not None]
    if not docs:
        return "_(none of these results files is committed yet: the commands above write them)_\n"
    k = max(s.k for _, d in docs for s in d.scores)
    rows = []
    for name, doc in docs:
        notes = "; ".join(n for n in doc.config.get("notes", []) if "skipped" in n or "left out" in n or
                          "excluded" in n or "misses" in n).replace("|", "/")
        rows.append([f"`results/{name}`", str(doc.config.get("items", "?")), str(doc.config.get("questions", "?")),
                     notes or "-", *(_cell(doc, s, k) for s in SYSTEMS)])
    header = "|".join(["file:l", "items:r", "questions:r", "notes:l", *(f"{s}:l" for s in SYSTEMS)])
    return f"recall_any@{k} / recall_all@{k} / ndcg@{k} (percent):\n\n" + markdown(table_of(header, rows))


def catalog_table(results_dir: Path) -> str:
    """The ``data-catalog`` block: every registered set (``memini_bench/data/catalog.json``) with its suite, file
    count, size, license and where its checksums come from."""
    from memini_bench.data.registry import catalog

    rows = []
    for ds in catalog().values():
        size = f"{ds.size:,} B" if ds.size is not None else (
            "partly unknown" if any(f.size for f in ds.files) else "unknown (SHA-256 only)")
        rows.append([f"`{ds.name}`", ds.suite, str(len(ds.files)), size, ds.license,
                     ds.checksum_source.replace("|", "/")])
    return markdown(table_of("name:l|suite:l|files:r|size:r|license:l|checksum source:l", rows))
