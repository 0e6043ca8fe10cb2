"""Output: memini's markdown tables, the JSON results file, the per-question JSONL and the TREC files, all written
atomically (``atomic_io``, whose ``atomic_write`` and ``check_destinations`` are re-exported here).

Markdown: one table per K (ascending), rows sorted by recall_any@K descending (stable), then the per-category
table of ``memini-hybrid`` (or the first system) at the largest K. JSON: ``{"config": {...}, "results": [...]}``
(fractions in 0..1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import orjson

from memini_bench.core.dataset import file_safe_name
from memini_bench.core.runs import RunResult, first_gold_rank
from memini_bench.core.settings import setting
from memini_bench.errors import BenchError
from memini_bench.results.atomic_io import atomic_write, check_destinations
from memini_bench.results.schema import CompareResults, ResultsFile, Score

__all__ = ["OutputOptions", "atomic_write", "check_destinations", "markdown", "per_question_rows",
           "results_document", "trec_id", "write_json", "write_jsonl", "write_trec"]

HYBRID = "memini-hybrid"


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

    def __post_init__(self) -> None:
        if self.no_write and (self.per_question or self.trec):
            flag = "-per-question" if self.per_question else "-trec"
            raise BenchError(f"{flag}: cannot be combined with -no-write (which writes nothing); drop one of them")
        if not self.out.strip():
            raise BenchError("-out '': give a folder for the results file (the default is runs/; '.' is this folder)")
        if self.name and (set(self.name) & set('/\\\0') or self.name.startswith(".")):
            raise BenchError(f"-name {self.name!r}: use a plain label (no slashes, not starting with a dot)")


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def ingest_columns(s: Score) -> tuple[float, float, float]:
    """The table's load, embed and ingest (the store's own share) columns; a Score of an older file, which did not
    split its ``ingest_ms``, shows it whole as ingest."""
    if not (s.model_load_ms or s.embed_ms or s.store_ingest_ms):
        return 0.0, 0.0, s.ingest_ms
    return s.model_load_ms, s.embed_ms, s.store_ingest_ms


def markdown(scores: Sequence[Score], dataset: str, category_labels: dict[str, str] | None = None, *,
             leaks: bool = False, categories: Sequence[str] | None = None) -> str:
    """memini's tables (plus recall_all and nDCG columns; memini's one ingest column split into the model load,
    the embedding and the store's own ingest) and the per-category table of ``categories`` (system names; default
    the hybrid, else the first system). ``leaks`` (or any leaked hit) adds a ``leaked`` column: the
    hits of another group dropped before scoring (``-leaks count``)."""
    if not scores:
        return ""
    out: list[str] = []
    ks = sorted({s.k for s in scores})
    leaks = leaks or any(s.leaked for s in scores)
    for k in ks:
        rows = sorted((s for s in scores if s.k == k), key=lambda s: -s.recall_at_k)
        out.append(f"## {dataset} — {rows[0].questions} questions, recall_any@{k}\n")
        out.append(f"| System | Recall@{k} | RecallAll@{k} | MRR | nDCG@{k} | inj tok | tok-eff | p50 (ms) "
                   "| p95 (ms) | load (ms) | embed (ms) | ingest (ms) |" + (" leaked |" if leaks else ""))
        out.append("|--------|---------:|---------:|----:|--------:|--------:|--------:|---------:|---------:"
                   "|----------:|-----------:|------------:|" + ("-------:|" if leaks else ""))
        for s in rows:
            load, embed, store = ingest_columns(s)
            out.append(f"| {s.system} | {_pct(s.recall_at_k)} | {_pct(s.recall_all_at_k)} | {_pct(s.mrr)} | "
                       f"{_pct(s.ndcg_at_k)} | {s.tokens_injected_mean:.0f} | {s.token_efficiency * 100:.3f}% | "
                       f"{s.p50_ms:.2f} | {s.p95_ms:.2f} | {load:.1f} | {embed:.1f} | {store:.1f} |"
                       + (f" {s.leaked} |" if leaks else ""))
        out.append("")
    names = list(dict.fromkeys(s.system for s in scores))
    for lead in categories or [HYBRID if HYBRID in names else names[0]]:
        top = [s for s in scores if s.system == lead and s.k == ks[-1]]
        if top and top[0].per_category:
            labels = category_labels or {}
            out.append(f"### {lead} by category (recall_any@{ks[-1]} / recall_all@{ks[-1]})\n")
            out.append("| Category | n | Recall | RecallAll |")
            out.append("|---|--:|--:|--:|")
            for cat, value in top[0].per_category.items():
                name = f"{cat} ({labels[cat]})" if cat in labels else cat
                out.append(f"| {name} | {top[0].per_category_questions[cat]} | {_pct(value)} | "
                           f"{_pct(top[0].per_category_all.get(cat, 0.0))} |")
            out.append("")
    return "\n".join(out) + "\n"


def write_json(path: Path, doc: object, *, results: bool = False) -> None:
    """``doc`` as indented JSON, atomically (``results``: a results file, which may replace one)."""
    atomic_write(path, lambda w: w(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
                                   + b"\n"), results=results)


def results_document(config: dict, scores: Sequence[Score], **extra: object) -> CompareResults:
    """A normal run's results file (kind ``run``): the config, one row per system and K, and ``extra`` keys."""
    return CompareResults(config=config, scores=tuple(scores), extra=dict(extra))


def write_results_file(path: Path, doc: ResultsFile) -> None:
    """Write a typed results document (``results.schema``) atomically, as its ``to_dict()``."""
    write_json(path, doc.to_dict(), results=True)


def per_question_rows(results: Iterable[RunResult]) -> Iterable[dict]:
    for result in results:
        for run in result.questions:
            yield {
                "system": result.system, "id": run.question.id, "group": run.question.group,
                "category": run.question.category, "gold": list(run.question.gold),
                "ranked": [list(ids) for ids in run.ranked_ids], "scores": list(run.scores),
                "first_gold_rank": first_gold_rank(run), "latency_ms": run.latency_ms,
            }


def trec_id(text: str) -> str:
    """``text`` as one TREC column: every character outside printable ASCII (spaces, tabs, line breaks, controls,
    non-ASCII), ``%`` itself and ``#`` become ``%XX`` per UTF-8 byte, as in a URL; the empty id is ``%``. Readers
    split TREC lines on any whitespace, so ``a b`` would be two columns; the escape is one-to-one, so no two ids
    collide (``urllib.parse.unquote`` gives the id back)."""
    if not text:
        return "%"
    return "".join(c if "!" <= c <= "~" and c not in "%#" else "".join(f"%{b:02X}" for b in c.encode())
                   for c in text)


def trec_run_names(systems: Sequence[str]) -> dict[str, str]:
    """Each system's TREC run file name part: the name itself when it is a safe file name, else its safe form
    (``file_safe_name``) and ``-`` and 8 hex digits of its SHA-1, so two systems never share a file (``x/y`` and
    ``x_y`` would); a clash left (two systems of one name) is a BenchError."""
    import hashlib

    out: dict[str, str] = {}
    for system in systems:
        safe = file_safe_name(system)
        if safe != system:
            safe = f"{safe}-{hashlib.sha1(system.encode()).hexdigest()[:8]}"
        out[system] = safe
    if len(set(out.values())) != len(out):
        raise BenchError(f"-trec: two systems would write one run file ({', '.join(systems)}); rename one")
    return out


def write_trec(directory: Path, dataset: str, results: Sequence[RunResult]) -> list[Path]:
    """TREC files for trec_eval / ir_measures: ``<dataset>.qrels`` (``qid 0 docid 1`` per gold id) and one
    ``<dataset>.<system>.run`` per system (``qid Q0 docid rank score system``; a hit standing for several items
    is written under its first id). The score column is ``depth - rank``: trec_eval orders by score and breaks
    ties by docid, so tied system scores would otherwise be re-ordered; the systems' own scores are in the
    per-question JSONL. Question ids, document ids and system names are escaped by ``trec_id``; file names are
    made safe and one-to-one, never cut (``trec_run_names``: a system ``memini-hybrid/hash`` writes
    ``<dataset>.memini-hybrid_hash-<8 hex>.run``; a name too long for the file system is a BenchError)."""
    written = []
    folder = Path(directory)
    stem = file_safe_name(dataset, None)  # never cut: a cut could give two runs one name
    qrels = folder / f"{stem}.qrels"
    questions = results[0].questions if results else ()
    atomic_write(qrels, lambda w: [w(f"{trec_id(r.question.id)} 0 {trec_id(g)} 1\n".encode())
                                   for r in questions for g in dict.fromkeys(r.question.gold)])
    written.append(qrels)
    run_names = trec_run_names([r.system for r in results])
    for result in results:
        path = folder / f"{stem}.{run_names[result.system]}.run"
        tag = trec_id(result.system)

        def emit(w: Callable[[bytes], object], result: RunResult = result, tag: str = tag) -> None:
            for run in result.questions:
                qid = trec_id(run.question.id)
                for rank, ids in enumerate(run.ranked_ids):
                    w(f"{qid} Q0 {trec_id(ids[0])} {rank + 1} {result.depth - rank} {tag}\n".encode())

        atomic_write(path, emit)
        written.append(path)
    return written


def write_jsonl(path: Path, rows: Iterable[dict]) -> None:
    def emit(w: Callable[[bytes], object]) -> None:
        for row in rows:
            w(orjson.dumps(row) + b"\n")

    atomic_write(path, emit)
