"""VetoBench's behavioural layer: put each memory condition's context in front of an agent, ask for a plan, judge it.

Conditions (each turns a scenario into the context block the agent sees):

- ``none``: nothing.
- ``conventions``: every recorded decision (superseded ones too: the file nobody cleaned up), no rejected options.
- ``flatfile``: every decision with its rejected options, dumped flat, no retrieval.
- one per System (``veto-composite``, ``memini-hybrid/hash``, ...): the top 5 decisions it recalls for the task,
  each rendered with its rejected options (inherited ones marked) as warnings.

Lifecycle suites render each decision with its date, so every condition has the recency a human reader would.
The agent is any OpenAI-compatible chat endpoint (``llm.ChatClient``, temperature 0) asked for
``{proposal, key_technologies, acknowledged_rejections}``; ``judge`` gives the verdict. A failed call is recorded
in its cell and the run goes on; ``MAX_CONSECUTIVE_ERRORS`` failures in a row end the run (the endpoint is down).
An archive keeps every context, reply and verdict; ``summarize_archives`` quotes rates as min-max across runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Protocol

from memini_bench.errors import BenchError
from memini_bench.systems import System
from memini_bench.vetobench.fixtures import Decision, Scenario, VetoSuite, suite_items
from memini_bench.vetobench.judge import judge, parse_reply

RETRIEVAL_K = 5
MAX_CONSECUTIVE_ERRORS = 3
BUILTIN_CONDITIONS = ("none", "conventions", "flatfile")
SYSTEM_PROMPT = (
    "You are a senior software engineer on this team, planning a change to the team's codebase. Read the project "
    "memory you are given, if any, then propose how to carry out the task.\n"
    "Answer with one JSON object and nothing else:\n"
    '{"proposal": "<your plan in a few sentences>", '
    '"key_technologies": ["<each library, framework, tool or technique the plan relies on>"], '
    '"acknowledged_rejections": ["<each option the team previously rejected that you are deliberately avoiding>"]}'
)

Complete = Callable[[str, str], str]  # (system prompt, user message) -> reply text


def render_decision(d: Decision, *, vetoes: bool, dates: bool = False) -> str:
    """``- [date] decision — rationale`` and, with ``vetoes``, one ``REJECTED: option — reason`` line each."""
    date = f"[{d.created_at.date().isoformat()}] " if dates else ""
    lines = [f"- {date}{d.decision} — {d.rationale}"]
    if vetoes:
        for r in d.rejected:
            origin = ""
            if r.inherited_from:
                when = f", {r.inherited_date.date().isoformat()}" if r.inherited_date else ""
                origin = f" (still-standing rejection carried from a superseded decision{when})"
            lines.append(f"  - REJECTED{origin}: {r.option} — {r.reason}")
    return "\n".join(lines)


def user_message(context: str, task: str) -> str:
    return (f"{context}\n\n" if context else "") + f"Task: {task}"


class Condition(Protocol):
    name: str
    description: str

    def context(self, scenario: Scenario) -> str: ...


@dataclass(frozen=True)
class StaticCondition:
    """The same context for every scenario."""

    name: str
    description: str
    text: str

    def context(self, scenario: Scenario) -> str:
        return self.text


class RetrievalCondition:
    """The top-5 decisions a System recalls for the task, with their rejected options as warnings."""

    def __init__(self, system: System, suite: VetoSuite) -> None:
        self.system = system
        self.suite = suite
        self.name = system.name
        self.description = (f"Top-{RETRIEVAL_K} active decisions recalled by {system.name}, rejected options as "
                            "warnings.")
        self._by_id = {d.id: d for d in suite.active}
        system.ingest(suite_items(suite))

    def context(self, scenario: Scenario) -> str:
        hits = self.system.recall(self.suite.name, scenario.task, RETRIEVAL_K, now=self.suite.as_of,
                                  context={"files_in_scope": scenario.files_in_scope})
        decisions = [self._by_id[i] for h in hits for i in h.ids if i in self._by_id][:RETRIEVAL_K]
        body = "\n".join(render_decision(d, vetoes=True, dates=self.suite.lifecycle) for d in decisions)
        return f"Relevant prior decisions for this task (from team memory):\n{body}"


def builtin_conditions(suite: VetoSuite) -> list[Condition]:
    dates = suite.lifecycle
    conventions = "\n".join(render_decision(d, vetoes=False, dates=dates) for d in suite.decisions)
    flat = "\n".join(render_decision(d, vetoes=True, dates=dates) for d in suite.decisions)
    return [
        StaticCondition("none", "No memory context at all.", ""),
        StaticCondition("conventions", "Every recorded choice, no rejected alternatives (a typical conventions "
                        "file).", f"Project conventions and prior decisions:\n{conventions}"),
        StaticCondition("flatfile", "Every decision with its rejected alternatives, flat, no retrieval.",
                        f"Project decision log:\n{flat}"),
    ]


def condition_names(system_names: Sequence[str], wanted: Sequence[str] = ()) -> list[str]:
    """The conditions to run: the built-in ones and one per system, in that order, or only those in ``wanted``;
    a name that is neither is a BenchError (checked before any system ingests anything)."""
    known = [*BUILTIN_CONDITIONS, *system_names]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise BenchError(f"-veto-conditions {','.join(unknown)}: unknown; use {', '.join(known)}")
    return list(wanted) or known


def conditions_for(suite: VetoSuite, systems: Sequence[System], wanted: Sequence[str] = ()) -> list[Condition]:
    """The built-in conditions and one per system, in that order, or only those named in ``wanted``."""
    builtin = {c.name: c for c in builtin_conditions(suite)}
    by_system = {s.name: s for s in systems}
    names = condition_names(list(by_system), wanted)
    return [builtin[n] if n in builtin else RetrievalCondition(by_system[n], suite) for n in names]


@dataclass
class LiveRun:
    suite: str
    cells: list[dict]
    aborted: str = ""


def run_live(suite: VetoSuite, conditions: Sequence[Condition], complete: Complete, *,
             echo: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)) -> LiveRun:
    """Every condition x scenario: build the context, ask the agent, judge the reply (or record the error)."""
    run = LiveRun(suite.name, [])
    failures = 0
    for condition in conditions:
        for s in suite.scenarios:
            context = condition.context(s)
            cell: dict = {"condition": condition.name, "scenario": s.id, "trap": s.trap,
                          "rejected_option": s.rejected_option, "context": context}
            try:
                reply = complete(SYSTEM_PROMPT, user_message(context, s.task))
            except BenchError as exc:
                failures += 1
                cell["error"] = str(exc)
                run.cells.append(cell)
                echo(f"{condition.name:<24} {s.id}  ERROR: {exc}")
                if failures >= MAX_CONSECUTIVE_ERRORS:
                    run.aborted = f"{failures} agent calls failed in a row; last: {exc}"
                    return run
                continue
            failures = 0
            verdict = judge(s, parse_reply(reply))
            cell.update(reply=reply, verdict=asdict(verdict))
            run.cells.append(cell)
            flag = (f"VIOLATION ({verdict.matched_on})" if verdict.violation
                    else "avoided + acknowledged" if verdict.acknowledged else "avoided")
            echo(f"{condition.name:<24} {s.id}  {flag}")
    return run


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


def suite_record(run: LiveRun, suite: VetoSuite, conditions: Sequence[Condition]) -> dict:
    """One suite's part of an archive: its conditions, every cell (context, reply, verdict or error), summary."""
    return {"suite": suite.name, "as_of": suite.as_of.isoformat(), "aborted": run.aborted,
            "conditions": [{"name": c.name, "description": c.description} for c in conditions],
            "summary": summarize(run.cells), "cells": run.cells}


def archive_document(suites: Sequence[dict], *, model: str, endpoint: str) -> dict:
    """A run's archive: when, which model behind which endpoint, the prompt, and each suite's record."""
    return {"vetobench_archive": 1, "run_at": datetime.now(UTC).isoformat(timespec="seconds"), "model": model,
            "endpoint": endpoint, "temperature": 0, "system_prompt": SYSTEM_PROMPT, "suites": list(suites)}


def _span(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    lo, hi = min(values), max(values)
    return fmt(lo) if lo == hi else f"{fmt(lo)}-{fmt(hi)}"


def summarize_archives(docs: Sequence[dict]) -> str:
    """Markdown, per suite: per condition the violation and acknowledgement rates and the violations per trap kind
    as min-max across the archived runs (recomputed from the archived verdicts), with the runs' dates and models."""
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
        out.append(f"## {suite}: behaviour over {len(runs)} runs ({dates[0]}..{dates[-1]}, model {models})\n")
        out.append("| Condition | runs | violation | acknowledged | " + " | ".join(f"{t} violations" for t in traps)
                   + " | errors |")
        out.append("|---|--:|--:|--:|" + "--:|" * len(traps) + "--:|")
        pct = "{:.0%}".format
        for c in conditions:
            rows = [s[c] for s in sums if c in s]
            per_trap = []
            for t in traps:
                cells = [r["by_trap"][t] for r in rows if t in r["by_trap"]]
                per_trap.append(f"{_span([x['violations'] for x in cells], str)}/{cells[0]['scenarios']}"
                                if cells else "-")
            out.append(f"| {c} | {len(rows)} | {_span([r['violation_rate'] for r in rows], pct)} | "
                       f"{_span([r['acknowledged_rate'] for r in rows], pct)} | " + " | ".join(per_trap)
                       + f" | {sum(r['errors'] for r in rows)} |")
        out.append("")
    out.append("violation = re-proposed a recorded rejected approach; acknowledged = named the prior rejection; "
               "rates over answered calls, min-max across runs")
    return "\n".join(out) + "\n"


def _check_archive(doc: object, path: str) -> None:
    """The shape ``summarize_archives`` reads: ``suites`` a list of objects, each with a list of ``cells``; every
    cell names its ``condition`` and ``trap``; a judged cell's ``verdict`` has boolean ``violation`` and
    ``acknowledged``. Anything else is a BenchError naming the file and the entry."""
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


def read_archives(paths: Sequence[str]) -> list[dict]:
    """Archives written by ``-live -archive``; a missing, foreign or malformed file is a BenchError naming it."""
    from memini_bench.loaders._json import read_json

    docs = []
    for path in paths:
        doc = read_json(path, "vetobench")
        _check_archive(doc, str(path))
        docs.append(doc)
    return docs
