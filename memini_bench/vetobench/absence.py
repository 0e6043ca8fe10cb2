"""Veto absence over archived live runs: did the veto reach the agent, and how do violations split on it?

A cell's context *carries the veto* when the scenario's rejected option occurs in it as a phrase: the judge's
normalisation (lowercase, every run of non-alphanumerics -> one space) of both, matched on word boundaries
(``" " + norm(option) + " "`` in ``" " + norm(context) + " "``). This is VetoBench's string check on the archived
contexts; it cannot tell a paraphrased veto from a lost one, and it counts the option's name in any sentence.

Per condition, over every run of a suite: cells, cells whose context lacks the veto, the scenarios whose veto was
absent in every run, and violations among judged cells with the veto present vs absent. Where a run archived the
memories a condition held after ingestion (``ingest[condition].memories``: a third-party system that lists them,
or ``extract-e2e``'s extracted decisions), an absent veto is split into *lost at ingestion* (in no memory) and
*not retrieved* (in some memory, not in the context). ``ingestion`` quotes, per condition with such records, the
extraction totals and the share of the scenarios' vetoes found in memory as min-max across runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memini_bench.core.table import Cell, Column, Table, fmt_pct, markdown
from memini_bench.vetobench.judge import normalize


def veto_present(context: str, option: str) -> bool:
    """The normalised ``option`` occurs in the normalised ``context`` as whole words (an empty option never)."""
    o = normalize(option)
    return bool(o) and f" {o} " in f" {normalize(context)} "


@dataclass
class Absence:
    """One condition's cells over the runs of one suite."""

    condition: str
    cells: int = 0
    absent: int = 0
    judged_present: int = 0
    violations_present: int = 0
    judged_absent: int = 0
    violations_absent: int = 0
    lost_at_ingestion: int = 0
    not_retrieved: int = 0
    unknown_memory: int = 0  # absent cells of runs that archived no memories for the condition
    presence: dict[str, list[bool]] = field(default_factory=dict)  # scenario -> present, per run

    @property
    def absent_every_run(self) -> list[str]:
        return [s for s, seen in self.presence.items() if seen and not any(seen)]


def _memory_texts(record: dict, condition: str) -> list[str] | None:
    ingest = record.get("ingest", {}).get(condition)
    if not isinstance(ingest, dict) or "memories" not in ingest:
        return None
    return [m["content"] for m in ingest["memories"]]


def absence(records: Sequence[dict]) -> dict[str, Absence]:
    """Per condition, in first-seen order, over the suite records (one per run) of one suite."""
    out: dict[str, Absence] = {}
    for record in records:
        memories: dict[str, list[str] | None] = {}
        for cell in record.get("cells", []):
            name = cell["condition"]
            row = out.setdefault(name, Absence(name))
            present = veto_present(cell["context"], cell["rejected_option"])
            row.cells += 1
            row.presence.setdefault(cell["scenario"], []).append(present)
            if not present:
                row.absent += 1
                if name not in memories:
                    memories[name] = _memory_texts(record, name)
                held = memories[name]
                if held is None:
                    row.unknown_memory += 1
                elif any(veto_present(m, cell["rejected_option"]) for m in held):
                    row.not_retrieved += 1
                else:
                    row.lost_at_ingestion += 1
            if "verdict" in cell:
                violation = cell["verdict"]["violation"]
                if present:
                    row.judged_present += 1
                    row.violations_present += violation
                else:
                    row.judged_absent += 1
                    row.violations_absent += violation
    return out


def _ratio(k: int, n: int) -> Cell:
    return Cell((k, n), f"{k}/{n} ({fmt_pct(k / n, 0)})" if n else "-")


def _text(value: object) -> Cell:
    return Cell(value, str(value))


def lines(table: Table) -> list[str]:
    """A table's Markdown as lines of a summary (``summary.summarize_archives`` joins them), a blank line after."""
    return [markdown(table).rstrip("\n"), ""]


def _span(values: Sequence[int]) -> str:
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def absence_table(suite: str, records: Sequence[dict]) -> list[str]:
    """Markdown lines: one row per condition, N and what the columns count in the footnote."""
    rows = absence(records)
    if not rows:
        return []
    scenarios = len({s for r in rows.values() for s in r.presence})
    columns = (Column("condition", "Condition", "left"), Column("cells", "cells"), Column("absent", "veto absent"),
               Column("absent_every_run", "absent in every run", "left"),
               Column("violations_present", "violations, veto present"),
               Column("violations_absent", "violations, veto absent"),
               Column("lost", "absent: lost at ingestion / not retrieved"))
    body = []
    for r in rows.values():
        always = r.absent_every_run
        listed = (f"all {len(always)}" if always and len(always) == scenarios else ", ".join(always) or "-")
        split = (f"{r.lost_at_ingestion} / {r.not_retrieved}" if r.absent and not r.unknown_memory
                 else "-" if not r.absent or r.unknown_memory == r.absent
                 else f"{r.lost_at_ingestion} / {r.not_retrieved} (+{r.unknown_memory} unknown)")
        body.append((_text(r.condition), _text(r.cells), _ratio(r.absent, r.cells), Cell(always, listed),
                     _ratio(r.violations_present, r.judged_present), _ratio(r.violations_absent, r.judged_absent),
                     Cell((r.lost_at_ingestion, r.not_retrieved, r.unknown_memory), split)))
    notes = (f"N: cells, the condition's (scenario, run) cells over {len(records)} runs; the violations over the "
             "judged cells with the veto present, or absent. No marks.",
             "veto absent = the rejected option does not occur (normalised, as whole words) in the context; "
             "lost at ingestion / not retrieved: from the memories archived after ingestion (- = none archived)")
    return lines(Table(columns, tuple(body), title=f"### {suite}: is the veto in the agent's context? "
                                                   f"({len(records)} runs)", notes=notes, notes_in_markdown=True))


def ingestion_table(suite: str, records: Sequence[dict]) -> list[str]:
    """Markdown lines, one row per condition that archived an ingestion record: decisions and vetoes kept by the
    extraction (when it has per-decision records), memories held, the scenarios' vetoes found in memory, and every
    dropped veto with the number of runs that dropped it."""
    options = {c["scenario"]: c["rejected_option"] for r in records for c in r.get("cells", [])}
    names = list(dict.fromkeys(n for r in records for n in r.get("ingest", {})))
    if not names:
        return []
    columns = (Column("condition", "Condition", "left"), Column("runs", "runs"), Column("kept", "decisions kept"),
               Column("vetoes_kept", "vetoes kept"), Column("memories", "memories held"),
               Column("found", "scenario vetoes in memory"), Column("dropped", "dropped vetoes (runs)", "left"),
               Column("errors", "calls failed"))
    body = []
    for name in names:
        ingests = [r["ingest"][name] for r in records if name in r.get("ingest", {})]
        totals = [i["totals"] for i in ingests if "totals" in i]
        theirs = [i["veto_totals"] for i in ingests if "veto_totals" in i]   # RoBrain's extraction totals
        decided = totals or [t for t in theirs if "decisions" in t]
        kept = f"{_span([t['kept'] for t in decided])}/{decided[0]['decisions']}" if decided else "-"
        counted = totals or [t for t in theirs if "vetoes" in t]
        vetoes = f"{_span([t['vetoes_kept'] for t in counted])}/{counted[0]['vetoes']}" if counted else "-"
        errors = str(sum(t["errors"] for t in totals)) if totals else "-"
        held = [[m["content"] for m in i["memories"]] for i in ingests if "memories" in i]
        count = _span([len(h) for h in held]) if held else "-"
        found = (f"{_span([sum(any(veto_present(m, o) for m in h) for o in options.values()) for h in held])}"
                 f"/{len(options)}" if held and options else "-")
        dropped: dict[str, int] = {}
        for i in ingests:
            for d in i.get("decisions", []):
                for v in d["vetoes_dropped"]:
                    dropped[f"{v} ({d['id']})"] = dropped.get(f"{v} ({d['id']})", 0) + 1
        listed = ", ".join(f"{k} {n}/{len(ingests)}" for k, n in dropped.items()) or "-"
        body.append(tuple(map(_text, (name, len(ingests), kept, vetoes, count, found, listed, errors))))
    note = (f"N: runs, those of the {len(records)} that archived the condition's ingestion; a-b: the least and most "
            "over those runs, out of the total after the slash. No marks.")
    return lines(Table(columns, tuple(body), title=f"### {suite}: what ingestion kept ({len(records)} runs)",
                       notes=(note,), notes_in_markdown=True))


def empty_ingestions(suite: str, records: Sequence[dict]) -> list[str]:
    """A markdown line per condition that archived its memories after ingestion and held none in some run (its
    cells in those runs were scored on an empty context), else nothing."""
    empty: dict[str, list[int]] = {}
    for run, record in enumerate(records, 1):
        for name, ingest in record.get("ingest", {}).items():
            if isinstance(ingest, dict) and ingest.get("memories") == []:
                empty.setdefault(name, []).append(run)
    return [f"**{name} held 0 memories after ingestion in {len(runs)} of {len(records)} {suite} runs** (run "
            f"{', '.join(map(str, runs))}): its ingestion kept nothing usable, so those runs' cells were scored on an "
            "empty context, not on its retrieval.\n" for name, runs in empty.items()]

