"""VetoBench's behavioural layer: put each memory condition's context in front of an agent, ask for a plan, judge it.

The conditions (``conditions``) turn a scenario into the context block the agent sees. The agent is any
OpenAI-compatible chat endpoint (``llm.ChatClient``, temperature 0) asked for
``{proposal, key_technologies, acknowledged_rejections}``; ``judge`` gives the verdict. A failed call is recorded
in its cell and the run goes on; ``MAX_CONSECUTIVE_ERRORS`` failures in a row end the run (the endpoint is down).
An archive keeps every context, reply and verdict, and what each self-ingesting condition's ingestion produced
(``ingest``); ``summary.summarize_archives`` quotes rates as min-max across runs, with the veto-absence analysis.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from memini_bench.errors import BenchError
from memini_bench.loaders.vetobench import VetoSuite
from memini_bench.vetobench.conditions import Condition
from memini_bench.vetobench.judge import judge, parse_reply
from memini_bench.vetobench.summary import summarize

MAX_CONSECUTIVE_ERRORS = 3
SYSTEM_PROMPT = (
    "You are a senior software engineer on this team, planning a change to the team's codebase. Read the project "
    "memory you are given, if any, then propose how to carry out the task.\n"
    "Answer with one JSON object and nothing else:\n"
    '{"proposal": "<your plan in a few sentences>", '
    '"key_technologies": ["<each library, framework, tool or technique the plan relies on>"], '
    '"acknowledged_rejections": ["<each option the team previously rejected that you are deliberately avoiding>"]}'
)

Complete = Callable[[str, str], str]  # (system prompt, user message) -> reply text


def user_message(context: str, task: str) -> str:
    return (f"{context}\n\n" if context else "") + f"Task: {task}"


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


def suite_record(run: LiveRun, suite: VetoSuite, conditions: Sequence[Condition]) -> dict:
    """One suite's part of an archive: its conditions, what each self-ingesting one's ingestion produced
    (``ingest``: condition -> its ``ingest_record()``), every cell (context, reply, verdict or error), summary."""
    ingest = {c.name: c.ingest_record() for c in conditions if callable(getattr(c, "ingest_record", None))}
    return {"suite": suite.name, "as_of": suite.as_of.isoformat(), "aborted": run.aborted,
            "conditions": [{"name": c.name, "description": c.description} for c in conditions],
            "ingest": ingest, "summary": summarize(run.cells), "cells": run.cells}


def archive_document(suites: Sequence[dict], *, model: str, endpoint: str) -> dict:
    """A run's archive: when, which model behind which endpoint, the prompt, and each suite's record."""
    return {"vetobench_archive": 1, "run_at": datetime.now(UTC).isoformat(timespec="seconds"), "model": model,
            "endpoint": endpoint, "temperature": 0, "system_prompt": SYSTEM_PROMPT, "suites": list(suites)}
