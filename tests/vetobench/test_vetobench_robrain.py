"""-veto-summary on RoBrain's own archive format (run.ts --archive; a series is a folder of run-N.json files).

The fixture is a five-run mem0 series written here in RoBrain's documented format (top-level run_at,
agent_provider, agent_model, adapters, summary, cells; a cell {adapter, scenario, rejected_option, context, reply,
verdict {scenarioId, adapter, trap, violation, acknowledged}}), planned so that it carries RoBrain's published mem0
figures (packages/vetobench/README.md): violation rates 20, 20, 0, 20, 0 %; the veto absent from the context in 19
of 50 cells, in every run for s01, s04 and s10; violations 1/31 where the veto is present and 5/19 where absent.
The plan below is the oracle: every expected count is counted from it by hand."""

from __future__ import annotations

import json

import pytest
from cli_run import run_cli

from memini_bench.vetobench.summary import read_archives, summarize_archives

OPTIONS = {"s01": "Express", "s02": "Redux Toolkit", "s03": "Prisma", "s04": "axios", "s05": "localStorage",
           "s06": "Jest", "s07": "styled-components", "s08": "Redis", "s09": "auto-generated migrations",
           "s10": "GraphQL"}
DIRECT = {"s02", "s06", "s07", "s08"}                                    # 4 direct traps, 6 implicit
# per run: scenarios whose veto is absent, scenarios violated, how many cells acknowledge the rejection
ABSENT = [{"s01", "s04", "s10", "s02"}, {"s01", "s04", "s10", "s02"}, {"s01", "s04", "s10", "s05"},
          {"s01", "s04", "s10", "s05"}, {"s01", "s04", "s10"}]           # 4 + 4 + 4 + 4 + 3 = 19
VIOLATED = [{"s04", "s01"}, {"s04", "s03"}, set(), {"s04", "s05"}, set()]  # s03 in run 2 is the one with the veto
ACKNOWLEDGED = [5, 8, 9, 8, 6]                                           # 50-90 %


def _run_file(run: int) -> dict:
    cells = []
    acknowledged = ACKNOWLEDGED[run]
    for sid, option in OPTIONS.items():
        context = ("Relevant memories for this task (from team memory):\n- User settled on the current stack."
                   if sid in ABSENT[run] else
                   f"Relevant memories for this task (from team memory):\n- {option} was evaluated and declined.")
        violation = sid in VIOLATED[run]
        ack = not violation and acknowledged > 0
        acknowledged -= ack
        cells.append({"adapter": "mem0", "scenario": sid, "rejected_option": option, "context": context,
                      "reply": {"proposal": "p", "key_technologies": [option] if violation else [],
                                "acknowledged_rejections": [option] if ack else []},
                      "verdict": {"scenarioId": sid, "adapter": "mem0", "trap": "direct" if sid in DIRECT
                                  else "implicit", "violation": violation, "acknowledged": ack}})
    return {"run_at": f"2026-07-07T2{run}:00:00.000Z", "agent_provider": "anthropic",
            "agent_model": "claude-haiku-4-5-20251001",
            "adapters": [{"name": "mem0", "description": "Mem0 OSS (infer:true extraction)"}],
            "summary": [{"adapter": "mem0", "scenarios": 10, "violations": 99}],   # never read: recomputed
            "cells": cells}


@pytest.fixture
def series(tmp_path):
    folder = tmp_path / "mem0-series-2026-07-07"
    folder.mkdir()
    for run in range(5):
        (folder / f"run-{run + 1}.json").write_text(json.dumps(_run_file(run)))
    return folder


def test_the_plan_is_robrains_published_series():
    cells = [(run, sid) for run in range(5) for sid in OPTIONS]
    absent = [(r, s) for r, s in cells if s in ABSENT[r]]
    assert len(absent) == 19 and sum(s in VIOLATED[r] for r, s in absent) == 5
    assert sum(s in VIOLATED[r] for r, s in cells if (r, s) not in absent) == 1
    assert [len(v) * 10 for v in VIOLATED] == [20, 20, 0, 20, 0]


def test_a_robrain_series_folder_reproduces_its_published_mem0_figures(series, capsys):
    code, out, err = run_cli(["-veto-summary", str(series)], capsys)
    assert code == 0, err
    assert "## vetobench: behaviour over 5 runs (2026-07-07..2026-07-07, model claude-haiku-4-5-20251001)" in out
    assert "| mem0 | 5 | 0%-20% | 50%-90% | 0-2/6 | 0/4 | 0 |" in out
    assert "| mem0 | 50 | 19/50 (38%) | s01, s04, s10 | 1/31 (3%) | 5/19 (26%) | - |" in out


def test_files_are_read_in_run_order_and_a_failed_call_keeps_its_scenarios_trap(series, capsys):
    (series / "run-10.json").write_text(json.dumps({**_run_file(4), "run_at": "2026-07-08T00:00:00.000Z"}))
    docs = read_archives([str(series)])
    assert [d["run_at"][:10] for d in docs] == ["2026-07-07"] * 5 + ["2026-07-08"]  # run-10 after run-5
    doc = _run_file(0)
    doc["cells"][1] = {k: v for k, v in doc["cells"][1].items() if k not in ("reply", "verdict")} | {"error": "429"}
    path = series / "run-11.json"
    path.write_text(json.dumps(doc))
    cell = read_archives([str(path)])[0]["suites"][0]["cells"][1]
    assert cell["error"] == "429" and cell["trap"] == "unknown" and "verdict" not in cell   # s02 only here
    text = summarize_archives(read_archives([str(path)]))
    assert "| mem0 | 1 | 22% | 44% | 2/6 | 0/3 | 1 |" in text   # of 9 answered: 2 violated, 4 acknowledged


def test_lifecycle_traps_name_the_suite_and_e2e_extraction_reports_are_ingestion_records(tmp_path):
    doc = _run_file(4)
    for cell in doc["cells"]:
        cell["verdict"]["trap"] = "stale-named"
    doc["adapter_reports"] = {"mem0": {"extraction": [{"id": "d101", "vetoes_dropped": ["Express"]},
                                                      {"id": "d102", "vetoes_dropped": []}]}}
    path = tmp_path / "run-1.json"
    path.write_text(json.dumps(doc))
    text = summarize_archives(read_archives([str(path)]))
    assert "## vetobench-lifecycle: behaviour over 1 runs" in text
    assert "| mem0 | 1 | - | - | - | - | Express (d101) 1/1 | - |" in text


# RoBrain's robrain-e2e extraction records (e2e-adapter.ts ExtractionRecord) for a four-decision corpus, per run:
# the fixture's vetoes, the ones the extractor kept, and whether it kept the decision (extracted_decision null if
# not). Run 2 drops MobX; run 3 loses d103 (and its veto) entirely.
E2E_FIXTURE = {"d101": ["Express", "Fastify"], "d102": ["Redux Toolkit", "MobX"], "d103": ["TypeORM"], "d104": []}
E2E_KEPT = [E2E_FIXTURE, {**E2E_FIXTURE, "d102": ["Redux Toolkit"]}, {**E2E_FIXTURE, "d103": []}]
E2E_LOST = [set(), set(), {"d103"}]


def _e2e_run_file(run: int) -> dict:
    """One run.ts --archive file of a robrain-e2e series, shaped as RoBrain writes it: adapter_reports holds
    ``{"robrain-e2e": {"extraction": [ExtractionRecord]}}`` and each record carries its own ``vetoes_in_fixture``,
    ``vetoes_kept`` and ``vetoes_dropped`` lists of option names and ``extracted_decision`` (null when the decision
    was lost); there are no report-level totals (e2e-adapter.ts only logs them). Upstream: github.com/adelinamart/
    robrain, packages/vetobench/src/e2e-adapter.ts (``report: () => ({ extraction: records })``) and the archives
    packages/vetobench/results/robrain-e2e-series-2026-07-08/run-1.json .. run-5.json, commit
    6bc052ce1d86ce17c6a950c24a16efeb30906198 (unchanged at 379b4f4)."""
    doc = _run_file(run)
    for cell in doc["cells"]:
        cell["adapter"] = cell["verdict"]["adapter"] = "robrain-e2e"
    records = []
    for did, fixture in E2E_FIXTURE.items():
        kept = E2E_KEPT[run][did]
        lost = did in E2E_LOST[run]
        records.append({"id": did, "extracted_decision": None if lost else f"decision {did}",
                        "extracted_rationale": None if lost else "why", "confidence": 0.9,
                        "extracted_rejected": [{"option": o, "reason": "declined"} for o in kept],
                        "vetoes_in_fixture": fixture, "vetoes_kept": kept,
                        "vetoes_dropped": [v for v in fixture if v not in kept]})
    doc["adapters"] = [{"name": "robrain-e2e", "description": "RoBrain full pipeline"}]
    doc["adapter_reports"] = {"robrain-e2e": {"extraction": records}}
    doc["summary"] = [{"adapter": "robrain-e2e", "scenarios": 10, "violations": 0}]
    return doc


def test_e2e_extraction_records_fill_the_decisions_and_vetoes_kept_columns(tmp_path):
    """The extraction totals are counted from RoBrain's per-decision records (they printed '-'): vetoes 5 in the
    fixture, kept 5, 4, 4; decisions 4, kept 4, 4, 3; MobX dropped in run 2, TypeORM in run 3."""
    series = tmp_path / "robrain-e2e-series-2026-07-08"
    series.mkdir()
    for run in range(3):
        (series / f"run-{run + 1}.json").write_text(json.dumps(_e2e_run_file(run)))
    text = summarize_archives(read_archives([str(series)]))
    assert "| robrain-e2e | 3 | 3-4/4 | 4-5/5 | - | - | MobX (d102) 1/3, TypeORM (d103) 1/3 | - |" in text, text
    doc = _e2e_run_file(0)
    for record in doc["adapter_reports"]["robrain-e2e"]["extraction"]:
        del record["extracted_decision"]   # records without the field: the decisions column is not known
    (series / "run-1.json").write_text(json.dumps(doc))
    text = summarize_archives(read_archives([str(series / "run-1.json")]))
    assert "| robrain-e2e | 1 | - | 5/5 | - | - | - | - |" in text, text


def _e2e_record(change):
    def edit(doc: dict) -> None:
        doc.update(adapter_reports=_e2e_run_file(1)["adapter_reports"])
        change(doc["adapter_reports"]["robrain-e2e"]["extraction"][1])
    return edit


@pytest.mark.parametrize("change, fragment", [
    (_e2e_record(lambda r: r.update(vetoes_kept=["Redux Toolkit", "Vuex"])),
     "adapter_reports['robrain-e2e'].extraction[1]: field 'vetoes_kept' should hold only vetoes of"),
    (_e2e_record(lambda r: r.update(vetoes_in_fixture=2)),
     "extraction[1]: field 'vetoes_in_fixture' should be a list of strings"),
    (_e2e_record(lambda r: r.update(extracted_decision=5)),
     "extraction[1]: field 'extracted_decision' should be a string or null"),
    (lambda d: d.update(cells={}), "cells: should be a list"),
    (lambda d: d["cells"][3].pop("context"), "cells[3]: field 'context' should be a string"),
    (lambda d: d["cells"][2]["verdict"].update(violation="yes"), "cells[2].verdict: should be an object"),
    (lambda d: d["cells"][0].pop("verdict"), "cells[0]: has neither a 'verdict' nor an 'error'"),
    (lambda d: d.update(adapter_reports={"x": {"extraction": [{"id": 1}]}}), "adapter_reports['x'].extraction"),
])
def test_a_malformed_robrain_file_is_one_line_naming_it(tmp_path, capsys, change, fragment):
    doc = _run_file(0)
    change(doc)
    path = tmp_path / "run-1.json"
    path.write_text(json.dumps(doc))
    code, out, err = run_cli(["-veto-summary", str(path)], capsys)
    assert code == 2 and fragment in err and str(path) in err and "Traceback" not in err and not out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli(["-veto-summary", str(empty)], capsys)
    assert code == 2 and "a folder with no .json archive" in err


def test_a_condition_that_held_no_memory_is_named_not_scored_silently(tmp_path):
    cells = [{"condition": "mem0", "scenario": sid, "trap": "direct", "rejected_option": option, "context": "",
              "verdict": {"violation": False, "acknowledged": False}} for sid, option in OPTIONS.items()]
    runs = [{"vetobench_archive": 1, "run_at": f"2026-07-0{i}T00:00:00+00:00", "model": "m",
             "suites": [{"suite": "vetobench", "cells": cells,
                         "ingest": {"mem0": {"memories": [] if i != 2 else [{"content": "Express declined"}]}}}]}
            for i in (1, 2, 3)]
    text = summarize_archives(runs)
    assert ("**mem0 held 0 memories after ingestion in 2 of 3 vetobench runs** (run 1, 3): its ingestion kept "
            "nothing usable") in text
    assert "held 0 memories" not in summarize_archives(runs[1:2])
