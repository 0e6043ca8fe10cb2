"""The generated table of docs/datasets.md (``datasets``): the committed runs of memini's three systems on the
data sets' other units and suites (BEAM, LoCoMo's observations and summaries, LongMemEval at turn granularity),
each with its items, scored questions and what its notes say was left out, and recall_any@10 / recall_all@10 /
nDCG@10 per system.
"""

from __future__ import annotations

from pathlib import Path

from docgen.blocks import get
from memini_bench.results.schema import CompareResults

FILES = ("beam-100k.json", "locomo-observations.json", "locomo-summaries.json",
         "longmemeval-turns-oracle-sample97.json", "longmemeval-turns-s-single.json",
         "longmemeval-turns-oracle-examples.json")
SYSTEMS = ("memini-hybrid", "memini-vector", "memini-keyword")


def _cell(doc: CompareResults, system: str, k: int) -> str:
    s = doc.score(system, k)
    if s is None:
        return "-"
    return f"{s.recall_at_k * 100:.1f} / {s.recall_all_at_k * 100:.1f} / {s.ndcg_at_k * 100:.1f}"


def table(results_dir: Path) -> str:
    docs = [(name, doc) for name in FILES if (doc := get(Path(results_dir), name, CompareResults)) is not None]
    if not docs:
        return "_(none of these results files is committed yet: the commands above write them)_\n"
    k = max(s.k for _, d in docs for s in d.scores)
    out = ["| file | items | questions | notes | " + " | ".join(SYSTEMS) + " |",
           "|---|--:|--:|---|" + "---|" * len(SYSTEMS)]
    for name, doc in docs:
        notes = "; ".join(n for n in doc.config.get("notes", []) if "skipped" in n or "left out" in n or
                          "excluded" in n or "misses" in n).replace("|", "/")
        out.append(f"| `results/{name}` | {doc.config.get('items', '?')} | {doc.config.get('questions', '?')} | "
                   f"{notes or '-'} | " + " | ".join(_cell(doc, s, k) for s in SYSTEMS) + " |")
    return (f"recall_any@{k} / recall_all@{k} / nDCG@{k} (percent):\n\n" + "\n".join(out) + "\n")


def catalog_table(results_dir: Path) -> str:
    """The ``data-catalog`` block: every registered set (``memini_bench/data/catalog.json``) with its suite, file
    count, size, license and where its checksums come from."""
    from memini_bench.data.registry import catalog

    out = ["| name | suite | files | size | license | checksum source |", "|---|---|--:|--:|---|---|"]
    for ds in catalog().values():
        size = f"{ds.size:,} B" if ds.size is not None else (
            "partly unknown" if any(f.size for f in ds.files) else "unknown (SHA-256 only)")
        out.append(f"| `{ds.name}` | {ds.suite} | {len(ds.files)} | {size} | {ds.license} | "
                   f"{ds.checksum_source.replace('|', '/')} |")
    return "\n".join(out) + "\n"
