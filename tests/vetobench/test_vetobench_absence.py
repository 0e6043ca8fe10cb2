"""Veto absence over archives, on hand-built archives whose figures are counted by hand below."""

from __future__ import annotations

import json

import pytest

from memini_bench.cli import main
from memini_bench.vetobench.absence import absence, veto_present
from memini_bench.vetobench.summary import summarize_archives


@pytest.mark.parametrize("context, option, present", [
    ("REJECTED: Styled Components — runtime CSS", "styled-components", True),
    ("an expressive middleware model", "Express", False),
    ("We tried jest, then node:test.", "Jest", True),
    ("anything", "", False),
    ("- In-process memory-cache: breaks", "in-process memory cache", True),
    ("REST with OpenAPI", "GraphQL", False),
    ("", "Redis", False),
])
def test_veto_present_matches_whole_normalised_words(context, option, present):
    assert veto_present(context, option) is present


def _cell(condition, scenario, option, context, violation=None, trap="direct"):
    cell = {"condition": condition, "scenario": scenario, "trap": trap, "rejected_option": option,
            "context": context}
    if violation is not None:
        cell["verdict"] = {"violation": violation, "acknowledged": not violation}
    else:
        cell["error"] = "HTTP 500"
    return cell


def _doc(cells, ingest=None, day="2026-07-01"):
    record = {"suite": "toy", "cells": cells, **({"ingest": ingest} if ingest is not None else {})}
    return {"vetobench_archive": 1, "run_at": f"{day}T00:00:00+00:00", "model": "m", "suites": [record]}


def _archives():
    """Two runs of two conditions over scenarios a (option Express) and b (option Redis).

    run 1: sys: a absent (Express in memory -> not retrieved), violated; b present, fine.
           flat: a present, fine; b present, violated.
    run 2: sys: a absent (in no memory -> lost at ingestion), violated; b absent (not in memory), fine.
           flat: a present, unanswered (error); b present, fine.
    """
    run1 = _doc([_cell("sys", "a", "Express", "Hono stays", True), _cell("sys", "b", "Redis", "no redis here", False),
                 _cell("flat", "a", "Express", "REJECTED: Express", False),
                 _cell("flat", "b", "Redis", "REJECTED: Redis", True)],
                {"sys": {"memories": [{"ids": ["m1"], "content": "Express was declined"}]}})
    run2 = _doc([_cell("sys", "a", "Express", "Hono stays", True), _cell("sys", "b", "Redis", "caching layer", False),
                 _cell("flat", "a", "Express", "REJECTED: Express"),
                 _cell("flat", "b", "Redis", "REJECTED: Redis", False)],
                {"sys": {"memories": [{"ids": ["m1"], "content": "Hono stays"}]}}, day="2026-07-02")
    return run1, run2


def test_absence_counts_by_hand():
    rows = absence([d["suites"][0] for d in _archives()])
    s, f = rows["sys"], rows["flat"]
    assert (s.cells, s.absent, s.absent_every_run) == (4, 3, ["a"])
    assert (s.judged_present, s.violations_present, s.judged_absent, s.violations_absent) == (1, 0, 3, 2)
    assert (s.lost_at_ingestion, s.not_retrieved, s.unknown_memory) == (2, 1, 0)
    assert (f.cells, f.absent, f.absent_every_run) == (4, 0, [])
    assert (f.judged_present, f.violations_present, f.judged_absent) == (3, 1, 0)


def test_summary_prints_absence_and_the_split():
    out = summarize_archives(list(_archives()))
    assert "### toy: is the veto in the agent's context? (2 runs)" in out
    assert "| sys | 4 | 3/4 (75%) | a | 0/1 (0%) | 2/3 (67%) | 2 / 1 |" in out
    assert "| flat | 4 | 0/4 (0%) | - | 1/3 (33%) | - | - |" in out
    assert "| sys | 2 | - | - | 1 | 0-1/2 | - | - |" in out  # what ingestion kept: 1 memory; Express in it once


def test_ingestion_table_quotes_extraction_records():
    ingest = {"x": {"totals": {"decisions": 3, "kept": 2, "lost": 1, "vetoes": 4, "vetoes_kept": 3, "errors": 0},
                    "decisions": [{"id": "d1", "vetoes_dropped": ["Redis"]}, {"id": "d2", "vetoes_dropped": []}],
                    "memories": [{"ids": ["d2"], "content": "REJECTED: Express"}]}}
    other = {"x": {"totals": {"decisions": 3, "kept": 3, "lost": 0, "vetoes": 4, "vetoes_kept": 4, "errors": 1},
                   "decisions": [], "memories": [{"ids": ["d1"], "content": "Redis"}, {"ids": ["d2"],
                                                                                       "content": "Express"}]}}
    cells = [_cell("x", "a", "Express", "REJECTED: Express", False), _cell("x", "b", "Redis", "", True)]
    out = summarize_archives([_doc(cells, ingest), _doc(cells, other)])
    assert "| x | 2 | 2-3/3 | 3-4/4 | 1-2 | 1-2/2 | Redis (d1) 1/2 | 1 |" in out
    assert "| x | 4 | 2/4 (50%) | b | 0/2 (0%) | 2/2 (100%) | 1 / 1 |" in out


@pytest.mark.parametrize("ingest, message", [
    ([], "suites[0].ingest: should be an object, got list"),
    ({"x": 3}, "suites[0].ingest['x']: should be an object, got int"),
    ({"x": {"memories": [{"ids": []}]}}, "suites[0].ingest['x'].memories: should be a list of objects"),
    ({"x": {"decisions": [{"id": "d1"}]}}, "suites[0].ingest['x'].decisions: should be a list of objects"),
    ({"x": {"totals": {"decisions": 1}}}, "suites[0].ingest['x'].totals: should be an object with integer"),
])
def test_malformed_ingest_records_are_one_line(tmp_path, capsys, ingest, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_doc([], ingest)))
    with pytest.raises(SystemExit) as exc:
        main(["-veto-summary", str(path)])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and f"{path}: {message}" in err and err.count("\n") == 1


def test_a_cell_without_its_context_is_refused(tmp_path, capsys):
    path = tmp_path / "old.json"
    cell = _cell("none", "a", "Express", "")
    del cell["context"]
    path.write_text(json.dumps(_doc([cell])))
    with pytest.raises(SystemExit) as exc:
        main(["-veto-summary", str(path)])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and "suites[0].cells[0]: field 'context' should be a string" in err
