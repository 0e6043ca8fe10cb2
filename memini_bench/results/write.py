"""Output: memini's markdown tables, the JSON results file, the per-question JSONL and the TREC files, all written
atomically (``atomic_io``, whose ``atomic_write`` and ``check_destinations`` are re-exported here).

Markdown (through the one table model, ``core.table``): one table per K (ascending), one column per metric the
rows hold under its registered name, rows sorted by recall_any@K descending (stable), then the per-category table
of ``memini-hybrid`` (or the first system) at the largest K; with ``-metrics``, one table of those metrics in place
of the per-K tables. JSON: ``{"config": {...}, "results": [...]}`` (fractions in 0..1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import orjson

from memini_bench.core.dataset import file_safe_name
from memini_bench.core.metrics import Metric
from memini_bench.core.metrics import parse as parse_metric
from memini_bench.core.runs import RunResult, first_gold_rank
from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_pct
from memini_bench.core.table import markdown as render_markdown
from memini_bench.errors import BenchError
from memini_bench.results.atomic_io import atomic_write, check_destinations
from memini_bench.results.options import OutputOptions
from memini_bench.results.schema import CompareResults, ResultsFile, Score

__all__ = ["OutputOptions", "atomic_write", "check_destinations", "markdown", "per_question_rows",
           "results_document", "trec_id", "write_json", "write_jsonl", "write_per_question", "write_trec"]

HYBRID = "memini-hybrid"


def ingest_columns(s: Score) -> tuple[float, float, float]:
    """The table's load, embed and ingest (the store's own share) columns; a Score of an older file, which did not
    split its ``ingest_ms``, shows it whole as ingest."""
    if not (s.model_load_ms or s.embed_ms or s.store_ingest_ms):
        return 0.0, 0.0, s.ingest_ms
    return s.model_load_ms, s.embed_ms, s.store_ingest_ms


def metric_names(rows: Sequence[Score], categories: bool = False) -> list[str]:
    """The metric names the rows hold, in the order the scorer wrote them (``core.metrics.row_metrics``; with
    ``categories``, those of their categories): what a table of the rows shows, one column each."""
    if categories:
        return list(dict.fromkeys(n for s in rows for v in s.categories.values() for n in v))
    return list(dict.fromkeys(n for s in rows for n in s.scores))


def _run_table(rows: Sequence[Score], dataset: str, k: int, leaks: bool) -> Table:
    """memini's table at one K: one column per metric the rows hold (its registered name; the defaults, then what
    ``-metrics`` asked for), then memini's one ingest column split in three (model load, embedding, the store)."""
    metrics = [parse_metric(n, k) for n in metric_names(rows)]
    cols = [Column("system", "System", "left", rule="--------")]
    cols += [Column(m.name, m.name, rule="-" * max(4, len(m.name)) + ":") for m in metrics]
    cols += [Column("load", "load (ms)", rule="----------:"), Column("embed", "embed (ms)", rule="-----------:"),
             Column("ingest", "ingest (ms)", rule="------------:")]
    if leaks:
        cols.append(Column("leaked", "leaked", rule="-------:"))
    body = []
    for s in rows:
        load, embed, store = ingest_columns(s)
        cells = [Cell(s.system, s.system)]
        cells += [Cell(s.scores.get(m.name), format_metric(m, s.scores.get(m.name))) for m in metrics]
        cells += [Cell(load, fmt_num(load, 1)), Cell(embed, fmt_num(embed, 1)), Cell(store, fmt_num(store, 1))]
        body.append(tuple(cells + ([Cell(s.leaked, str(s.leaked))] if leaks else [])))
    return Table(tuple(cols), tuple(body), title=f"## {dataset} — {rows[0].questions} questions, recall_any@{k}")


def category_table(lead: str, top: Score, k: int, labels: dict[str, str]) -> Table:
    """One system's metrics per category (recall_any@K, recall_all@K and the fractions ``-metrics`` asked for),
    with each category's N."""
    metrics = [parse_metric(n, k) for n in metric_names([top], categories=True)]
    cols = (Column("category", "Category", "left", rule="---"), Column("n", "n"),
            *(Column(m.name, m.name) for m in metrics))
    body = tuple((Cell(cat, f"{cat} ({labels[cat]})" if cat in labels else cat),
                  Cell(top.per_category_questions[cat], str(top.per_category_questions[cat])),
                  *(Cell(values.get(m.name), format_metric(m, values.get(m.name))) for m in metrics))
                 for cat, values in top.categories.items())
    note = "N: n, the questions of each category. No marks: no test is run between categories."
    names = " / ".join(m.name for m in metrics)
    return Table(cols, body, title=f"### {lead} by category ({names})", notes=(note,), notes_in_markdown=True)


def format_metric(metric: Metric, value: float | None) -> str:
    """A metric's value as the tables print it: a fraction as a percent to one decimal, a ratio to three, ms to
    two decimals, tokens whole."""
    if metric.unit == "ms":
        return fmt_num(value)
    if metric.unit == "tokens":
        return fmt_num(value, 0)
    return fmt_pct(value, 3 if metric.unit == "ratio" else 1)


def metrics_table(scores: Sequence[Score], dataset: str, metrics: Sequence[Metric]) -> Table:
    """``-metrics``: one row per system, one column per metric (a metric without its cut-off: one per K of the
    run), the best of each column bold; the notes say N and what bold means."""
    ks = sorted({s.k for s in scores})
    wanted: list[Metric] = []
    for m in metrics:
        wanted += [m.at(k) for k in ks] if m.k is None and m.cutoff == "required" else [m]
    cols = [Column("system", "System", "left", rule="---")]
    cols += [Column(m.name, m.name, better="higher" if m.higher_is_better else "lower") for m in wanted]
    body = []
    for system in dict.fromkeys(s.system for s in scores):
        mine = [s for s in scores if s.system == system]
        cells = [Cell(system, system)]
        for m in wanted:
            value = next((s.scores[m.name] for s in mine if m.name in s.scores), None)
            cells.append(Cell(value, format_metric(m, value)))
        body.append(tuple(cells))
    n = scores[0].questions
    table = Table(tuple(cols), tuple(body), title=f"## {dataset} — {n} questions", notes_in_markdown=True,
                  bold_best=True, notes=(f"N = {n} questions per system; bold: the best of each column "
                                         "(ties all bold; no test of the difference).",))
    return table.with_best()


def markdown(scores: Sequence[Score], dataset: str, category_labels: dict[str, str] | None = None, *,
             leaks: bool = False, categories: Sequence[str] | None = None, metrics: Sequence[Metric] = (),
             caption: str = "") -> str:
    """memini's tables (plus recall_all and nDCG columns; memini's one ingest column split into the model load,
    the embedding and the store's own ingest) and the per-category table of ``categories`` (system names; default
    the hybrid, else the first system). ``leaks`` (or any leaked hit) adds a ``leaked`` column: the
    hits of another group dropped before scoring (``-leaks count``). ``metrics`` (``-metrics``) replaces the
    per-K tables with one table of those metrics (``metrics_table``). ``caption``, when given, is a line under
    each table's heading (the protocol and the known-bad list's status: ``loaders.protocols.caption``)."""
    if not scores:
        return ""
    ks = sorted({s.k for s in scores})
    leaks = leaks or any(s.leaked for s in scores)
    if metrics:
        tables = [metrics_table(scores, dataset, metrics)]
    else:
        tables = [_run_table(sorted((s for s in scores if s.k == k), key=lambda s: -s["recall_any@{k}"]), dataset,
                             k, leaks) for k in ks]
    if caption:  # a line under each table's heading
        tables = [dataclasses.replace(t, title=f"{t.title}\n\n{caption}.") for t in tables]
    names = list(dict.fromkeys(s.system for s in scores))
    for lead in categories or [HYBRID if HYBRID in names else names[0]]:
        top = [s for s in scores if s.system == lead and s.k == ks[-1]]
        if top and top[0].categories:
            tables.append(category_table(lead, top[0], ks[-1], category_labels or {}))
    return "".join(render_markdown(t) + "\n" for t in tables)


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


def write_per_question(path: Path, results: Iterable[RunResult]) -> None:
    """``-per-question FILE``: every (system, question) row; a ``FILE.jsonl.gz`` is the compact record kept beside
    committed results: gzip-compressed, without the per-hit scores and the latency (what a paired test, a
    receipt's ranking and its first gold rank need stays: ids, gold, the ranked ids, first_gold_rank)."""
    rows = per_question_rows(results)
    if path.suffix == ".gz":
        rows = ({k: v for k, v in row.items() if k not in ("scores", "latency_ms")} for row in rows)
    write_jsonl(path, rows)


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
    """One JSON object a line; a path ending in ``.gz`` is gzip-compressed (level 9, no name and mtime 0 in the
    header, so the same rows always give the same bytes: the committed per-question records)."""
    if path.suffix == ".gz":
        import gzip

        body = b"".join(orjson.dumps(row) + b"\n" for row in rows)
        data = gzip.compress(body, compresslevel=9, mtime=0)
        atomic_write(path, lambda w: w(data))
        return

    def emit(w: Callable[[bytes], object]) -> None:
        for row in rows:
            w(orjson.dumps(row) + b"\n")

    atomic_write(path, emit)
