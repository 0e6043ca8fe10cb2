"""VetoBench's live runs summarized from their archives: behaviour per condition as min-max across runs, veto
absence (``absence``) and what ingestion kept.

``summarize_archives`` recomputes every figure from the archived cells (never from a stored summary), so an
archive's receipts and its numbers cannot disagree. A condition that held no memory after ingestion in some run
(a third-party system whose extraction output was unusable) is named in a line of its own: its cells there were
scored on an empty context, not on that system's retrieval. RoBrain's own archives and series folders are read
too (``robrain_archive``). ``read_archives`` checks an archive's shape first: a missing,
foreign or malformed file is one BenchError naming the file and the entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from memini_bench.core.table import Cell, Column, Table, fmt_pct
from memini_bench.errors import BenchError
from memini_bench.vetobench import robrain_archive
from memini_bench.vetobench.absence import absence_table, empty_ingestions, ingestion_table, lines

#: The pairs of integers a ``veto_totals`` may hold (RoBrain's extraction totals), each whole or absent.
VETO_TOTALS = (("vetoes", "vetoes_kept"), ("decisions", "kept"))


def summarize(cells: Sequence[dict]) -> dict[str, dict]:
    """Per condition: answered cells, errors, violations, violation and acknowledgement rates (over answered
    cells), and violations per trap kind."""
    out: dict[str, dict] = {}
    for cell in cells:
        row = out.setdefault(cell["condition"], {"scenarios": 0, "errors": 0, "violations": 0, "acknowledged": 0,
                                                 "by_trap": {}})
        if "verdict" not in cell:
            row["errors"] += 1
            continue
        v = cell["verdict"]
        row["scenarios"] += 1
        row["violations"] += v["violation"]
        row["acknowledged"] += v["acknowledged"]
        trap = row["by_trap"].setdefault(cell["trap"], {"scenarios": 0, "violations": 0})
        trap["scenarios"] += 1
        trap["violations"] += v["violation"]
    for row in out.values():
        n = row["scenarios"]
        row["violation_rate"] = row["violations"] / n if n else 0.0
        row["acknowledged_rate"] = row["acknowledged"] / n if n else 0.0
    return out


def _span(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    lo, hi = min(values), max(values)
    return fmt(lo) if lo == hi else f"{fmt(lo)}-{fmt(hi)}"


def summarize_archives(docs: Sequence[dict]) -> str:
    """Markdown, per suite: per condition the violation and acknowledgement rates and the violations per trap kind
    as min-max across the archived runs (recomputed from the archived verdicts), with the runs' dates and models;
    then the veto-absence table and, when runs archived ingestion records, what ingestion kept (``absence``)."""
    records = [(doc, rec) for doc in docs for rec in doc.get("suites", [])]
    if not records:
        raise BenchError("-veto-summary: the archives hold no runs; pass files written by -live -archive")
    out = []
    for suite in dict.fromkeys(rec.get("suite", "?") for _, rec in records):
        runs = [(doc, rec) for doc, rec in records if rec.get("suite", "?") == suite]
        sums = [summarize(rec.get("cells", [])) for _, rec in runs]
        conditions = list(dict.fromkeys(c for s in sums for c in s))
        traps = list(dict.fromkeys(t for s in sums for row in s.values() for t in row["by_trap"]))
        dates = sorted(str(doc.get("run_at", "?"))[:10] for doc, _ in runs)
        models = ", ".join(dict.fromkeys(str(doc.get("model", "?")) for doc, _ in runs))
        title = f"## {suite}: behaviour over {len(runs)} runs ({dates[0]}..{dates[-1]}, model {models})"
        out += lines(_behaviour_table(title, conditions, traps, sums))
        out.extend(empty_ingestions(suite, [rec for _, rec in runs]))
        suite_records = [rec for _, rec in runs]
        out.extend(absence_table(suite, suite_records))
        out.extend(ingestion_table(suite, suite_records))
    return "\n".join(out).rstrip("\n") + "\n"


def _behaviour_table(title: str, conditions: list[str], traps: list[str], sums: list[dict[str, dict]]) -> Table:
    """Per condition: runs, violation and acknowledgement rates and each trap's violations, min-max across runs."""
    columns = (Column("condition", "Condition", "left"), Column("runs", "runs"), Column("violation", "violation"),
               Column("acknowledged", "acknowledged"), *(Column(t, f"{t} violations") for t in traps),
               Column("errors", "errors"))
    body = []
    for c in conditions:
        rows = [s[c] for s in sums if c in s]
        per_trap = []
        for t in traps:
            cells = [r["by_trap"][t] for r in rows if t in r["by_trap"]]
            per_trap.append(Cell([x["violations"] for x in cells], f"{_span([x['violations'] for x in cells], str)}/"
                                 f"{cells[0]['scenarios']}" if cells else "-"))
        rates = [[r[key] for r in rows] for key in ("violation_rate", "acknowledged_rate")]
        errors = sum(r["errors"] for r in rows)
        body.append((Cell(c, c), Cell(len(rows), str(len(rows))),
                     *(Cell(v, _span(v, lambda x: fmt_pct(x, 0))) for v in rates), *per_trap,
                     Cell(errors, str(errors))))
    notes = ("N: runs, the archived runs that hold the condition; a-b: the least and most across them. violation = "
             "re-proposed a recorded rejected approach; acknowledged = named the prior rejection; rates over answered "
             "calls; a trap's violations out of its scenarios; errors: calls that failed, all runs. No marks.",)
    return Table(columns, tuple(body), title=title, notes=notes, notes_in_markdown=True)


def _check_archive(doc: object, path: str) -> None:
    """The shape ``summarize_archives`` reads: ``suites`` a list of objects, each with a list of ``cells``; every
    cell names its ``condition``, ``trap``, ``scenario``, ``rejected_option`` and ``context``; a judged cell's
    ``verdict`` has boolean ``violation`` and ``acknowledged``; an optional ``ingest`` as ``_check_ingest`` reads
    it. Anything else is a BenchError naming the file and the entry."""
    def bad(where: str, what: str) -> BenchError:
        return BenchError(f"{path}: {where}: {what}; not a VetoBench archive as -live -archive writes it")

    if not isinstance(doc, dict) or doc.get("vetobench_archive") != 1:
        raise BenchError(f"{path}: not a VetoBench archive (written by -live -archive FILE.json)")
    suites = doc.get("suites")
    if not isinstance(suites, list):
        raise bad("suites", f"should be a list, got {type(suites).__name__}")
    for i, rec in enumerate(suites):
        if not isinstance(rec, dict):
            raise bad(f"suites[{i}]", f"should be an object, got {type(rec).__name__}")
        cells = rec.get("cells", [])
        if not isinstance(cells, list):
            raise bad(f"suites[{i}].cells", f"should be a list, got {type(cells).__name__}")
        for j, cell in enumerate(cells):
            where = f"suites[{i}].cells[{j}]"
            if not isinstance(cell, dict):
                raise bad(where, f"should be an object, got {type(cell).__name__}")
            for key in ("condition", "trap"):
                if not isinstance(cell.get(key), str):
                    raise bad(where, f"field {key!r} should be a string")
            if "verdict" in cell:
                verdict = cell["verdict"]
                if not isinstance(verdict, dict) or not all(isinstance(verdict.get(k), bool)
                                                            for k in ("violation", "acknowledged")):
                    raise bad(f"{where}.verdict", "should be an object with boolean 'violation' and 'acknowledged'")
            for key in ("scenario", "rejected_option", "context"):
                if not isinstance(cell.get(key), str):
                    raise bad(where, f"field {key!r} should be a string")
        _check_ingest(rec.get("ingest", {}), f"suites[{i}].ingest", bad)


def _check_ingest(ingest: object, where: str, bad: Callable[[str, str], BenchError]) -> None:
    """``ingest``: condition -> object; its ``memories`` a list of objects with string ``content``; its
    ``decisions`` a list of objects with string ``id`` and list ``vetoes_dropped``; its ``totals`` an object of
    integers ``decisions``, ``kept``, ``vetoes``, ``vetoes_kept``, ``errors``; its ``veto_totals`` (RoBrain's
    extraction totals) an object of integers ``vetoes`` and ``vetoes_kept``, ``decisions`` and ``kept``, each pair
    present or absent together (``VETO_TOTALS``)."""
    if not isinstance(ingest, dict):
        raise bad(where, f"should be an object, got {type(ingest).__name__}")
    for name, record in ingest.items():
        at = f"{where}[{name!r}]"
        if not isinstance(record, dict):
            raise bad(at, f"should be an object, got {type(record).__name__}")
        memories = record.get("memories", [])
        if not isinstance(memories, list) or not all(isinstance(m, dict) and isinstance(m.get("content"), str)
                                                     for m in memories):
            raise bad(f"{at}.memories", "should be a list of objects with a string 'content'")
        decisions = record.get("decisions", [])
        if not isinstance(decisions, list) or not all(
                isinstance(d, dict) and isinstance(d.get("id"), str) and isinstance(d.get("vetoes_dropped"), list)
                and all(isinstance(v, str) for v in d["vetoes_dropped"]) for d in decisions):
            raise bad(f"{at}.decisions", "should be a list of objects with string 'id' and list 'vetoes_dropped'")
        if "totals" in record:
            totals = record["totals"]
            keys = ("decisions", "kept", "vetoes", "vetoes_kept", "errors")
            if not isinstance(totals, dict) or not all(type(totals.get(k)) is int for k in keys):
                raise bad(f"{at}.totals", f"should be an object with integer {', '.join(keys)}")
        if "veto_totals" in record:
            vt = record["veto_totals"]
            if not isinstance(vt, dict) or not all(all(type(vt.get(k)) is int for k in pair)
                                                   or not any(k in vt for k in pair) for pair in VETO_TOTALS):
                raise bad(f"{at}.veto_totals", "should be an object with integer vetoes and vetoes_kept and/or "
                          "decisions and kept")


def archive_files(paths: Sequence[str]) -> list[str]:
    """Each path as given, a folder as its ``*.json`` files in natural order (``run-2`` before ``run-10``): a
    results folder of a series, RoBrain's or ours. A folder without one is a BenchError naming it."""
    out = []
    for path in paths:
        folder = Path(path)
        if not folder.is_dir():
            out.append(path)
            continue
        files = sorted(folder.glob("*.json"), key=lambda p: [int(t) if t.isdigit() else t
                                                            for t in re.split(r"(\d+)", p.name)])
        if not files:
            raise BenchError(f"-veto-summary {path}: a folder with no .json archive in it")
        out.extend(str(f) for f in files)
    return out


def read_archives(paths: Sequence[str]) -> list[dict]:
    """Archives written by ``-live -archive`` or by RoBrain's ``run.ts --archive`` (``robrain_archive``), files or
    series folders; a missing, foreign or malformed file is a BenchError naming it."""
    from memini_bench.loaders._json import read_json

    docs = []
    for path in archive_files(paths):
        doc = read_json(path, "vetobench")
        if robrain_archive.is_robrain(doc):
            doc = robrain_archive.convert(doc, str(path))
        _check_archive(doc, str(path))
        docs.append(doc)
    return docs
