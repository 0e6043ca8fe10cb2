"""RoBrain's own VetoBench archives (``node dist/run.js --live --archive results/<series>/run-N.json``) read as ours.

RoBrain's ``packages/vetobench/src/run.ts`` writes one JSON file per run; a series is a results folder of such
files (``results/mem0-series-2026-07-07/run-1.json`` .. ``run-5.json``). A file holds:

- ``run_at`` (ISO time), ``agent_provider``, ``agent_model``, ``adapters`` (``[{name, description}]``), optional
  ``adapter_reports`` (adapter -> report; ``robrain-e2e`` reports ``{"extraction": [{id, vetoes_dropped, ...}]}``)
  and ``summary`` (RoBrain's own, not read: every figure is recomputed from the cells);
- ``cells``: ``{adapter, scenario, rejected_option, context, reply, verdict}`` per judged call, the verdict
  ``{scenarioId, adapter, trap, violation, acknowledged, matchedOn?}``; a failed call has ``error`` instead of
  ``reply`` and ``verdict``.

``convert`` turns one into our archive shape (``summary._check_archive``): one suite record whose cells name
their ``condition`` (the adapter) and ``trap`` (the verdict's; a failed call takes its scenario's trap from the
run's other cells, else ``unknown``); the suite is ``vetobench-lifecycle`` when a trap is a lifecycle one
(``stale-named`` / ``stale-unnamed``, RoBrain's ``--suite lifecycle``), else ``vetobench`` (the archive does not
name it). ``robrain-e2e``'s extraction records become its ``ingest`` decisions (``vetoes_dropped`` per decision),
and the extraction's totals, counted from the same records as ``e2e-adapter.ts`` counts them (each record's
``vetoes_in_fixture`` and ``vetoes_kept`` lists of option names, its ``extracted_decision`` null when the decision
was lost), its ``veto_totals`` (``{"vetoes", "vetoes_kept", "decisions", "kept"}``: the "vetoes kept" and
"decisions kept" columns of the ingestion table).
RoBrain's archives list no memories held after ingestion, so the absence table cannot split an absent veto into
lost at ingestion / not retrieved for them. A malformed file is one BenchError naming the file and the entry.
"""

from __future__ import annotations

from memini_bench.errors import BenchError

LIFECYCLE_TRAPS = ("stale-named", "stale-unnamed")


def is_robrain(doc: object) -> bool:
    """A RoBrain archive: an object with ``cells`` and ``agent_model`` and none of our ``vetobench_archive`` mark."""
    return isinstance(doc, dict) and "vetobench_archive" not in doc and "cells" in doc and "agent_model" in doc


def _bad(path: str, where: str, what: str) -> BenchError:
    return BenchError(f"{path}: {where}: {what}; not a RoBrain VetoBench archive as run.ts --archive writes it")


def _cells(doc: dict, path: str) -> list[dict]:
    cells = doc["cells"]
    if not isinstance(cells, list):
        raise _bad(path, "cells", f"should be a list, got {type(cells).__name__}")
    for j, cell in enumerate(cells):
        where = f"cells[{j}]"
        if not isinstance(cell, dict):
            raise _bad(path, where, f"should be an object, got {type(cell).__name__}")
        for key in ("adapter", "scenario", "rejected_option", "context"):
            if not isinstance(cell.get(key), str):
                raise _bad(path, where, f"field {key!r} should be a string")
        if "verdict" in cell:
            v = cell["verdict"]
            if not isinstance(v, dict) or not isinstance(v.get("trap"), str) or not all(
                    isinstance(v.get(k), bool) for k in ("violation", "acknowledged")):
                raise _bad(path, f"{where}.verdict", "should be an object with string 'trap' and boolean "
                           "'violation' and 'acknowledged'")
        elif not isinstance(cell.get("error"), str):
            raise _bad(path, where, "has neither a 'verdict' nor an 'error'")
    return cells


def _ingest(doc: dict, path: str) -> dict:
    reports = doc.get("adapter_reports", {})
    if not isinstance(reports, dict):
        raise _bad(path, "adapter_reports", f"should be an object, got {type(reports).__name__}")
    out = {}
    for name, report in reports.items():
        extraction = report.get("extraction") if isinstance(report, dict) else None
        if extraction is None:
            continue
        where = f"adapter_reports[{name!r}].extraction"
        if not isinstance(extraction, list) or not all(
                isinstance(e, dict) and isinstance(e.get("id"), str) and _strings(e.get("vetoes_dropped"))
                for e in extraction):
            raise _bad(path, where, "should be a list of objects with string 'id' and list 'vetoes_dropped'")
        out[name] = {"kind": "robrain-extraction",
                     "decisions": [{"id": e["id"], "vetoes_dropped": list(e["vetoes_dropped"])} for e in extraction]}
        totals = _extraction_totals(extraction, path, where)
        if totals:
            out[name]["veto_totals"] = totals
    return out


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _extraction_totals(extraction: list[dict], path: str, where: str) -> dict[str, int]:
    """The extraction's totals as e2e-adapter.ts counts them in its log line, from its per-decision records:
    ``vetoes`` (the ``vetoes_in_fixture`` lists' lengths summed) and ``vetoes_kept`` (the ``vetoes_kept`` lists'),
    when every record has both lists; ``decisions`` and ``kept`` (records whose ``extracted_decision`` is not
    null), when every record has that field. Nothing of a part some record lacks."""
    for j, e in enumerate(extraction):
        for key in ("vetoes_in_fixture", "vetoes_kept"):
            if key in e and not _strings(e[key]):
                raise _bad(path, f"{where}[{j}]", f"field {key!r} should be a list of strings")
        fixture, kept = e.get("vetoes_in_fixture"), e.get("vetoes_kept")
        if fixture is not None and kept is not None and not set(kept) <= set(fixture):
            raise _bad(path, f"{where}[{j}]", "field 'vetoes_kept' should hold only vetoes of 'vetoes_in_fixture' "
                       f"(got {kept!r} of {fixture!r})")
        if "extracted_decision" in e and not isinstance(e["extracted_decision"], str | None):
            raise _bad(path, f"{where}[{j}]", "field 'extracted_decision' should be a string or null")
    totals = {}
    if all("vetoes_in_fixture" in e and "vetoes_kept" in e for e in extraction):
        totals = {"vetoes": sum(len(e["vetoes_in_fixture"]) for e in extraction),
                  "vetoes_kept": sum(len(e["vetoes_kept"]) for e in extraction)}
    if all("extracted_decision" in e for e in extraction):
        totals |= {"decisions": len(extraction),
                   "kept": sum(e["extracted_decision"] is not None for e in extraction)}
    return totals


def convert(doc: dict, path: str) -> dict:
    """A RoBrain archive as our archive document (see the module docstring)."""
    for key in ("run_at", "agent_model"):
        if not isinstance(doc.get(key), str):
            raise _bad(path, key, "should be a string")
    cells = _cells(doc, path)
    traps = {c["scenario"]: c["verdict"]["trap"] for c in cells if "verdict" in c}
    ours = []
    for c in cells:
        cell = {"condition": c["adapter"], "scenario": c["scenario"], "trap": traps.get(c["scenario"], "unknown"),
                "rejected_option": c["rejected_option"], "context": c["context"]}
        if "verdict" in c:
            cell.update(reply=c.get("reply"), verdict=c["verdict"])
        else:
            cell["error"] = c["error"]
        ours.append(cell)
    suite = "vetobench-lifecycle" if any(t in LIFECYCLE_TRAPS for t in traps.values()) else "vetobench"
    return {"vetobench_archive": 1, "source": "robrain", "run_at": doc["run_at"], "model": doc["agent_model"],
            "endpoint": str(doc.get("agent_provider", "")), "suites": [{"suite": suite, "cells": ours,
                                                                        "ingest": _ingest(doc, path)}]}
