"""The MCP adapter end to end through the CLI: a real stdio server (``fault_server.py``, on the ``mcp`` SDK), the
contract across the wire (one line, exit 2, nothing written, no server left in ``ps``) and the transport's cost
against the same system in process (``mcp:bm25s-served`` must rank exactly as ``bm25s``)."""

from __future__ import annotations

import json

import pytest

from tests.cli_run import run_cli
from tests.protocol.common import fault_mapping, processes_with, two_groups

pytest.importorskip("mcp", reason="needs the mcp extra: pip install 'memini-bench[mcp]'")


def _run(tmp_path, capsys, system: str, *extra: str) -> tuple[int, str, str]:
    data = two_groups(tmp_path)
    return run_cli(["run", "-suite", "file", "-data", str(data), "-systems", system, "-k", "1,2",
                    "-out", str(tmp_path / "out"), *extra], capsys)


def _no_results(tmp_path) -> bool:
    out = tmp_path / "out"
    return not out.exists() or not any(out.iterdir())


def test_a_working_server_is_measured_and_ended(tmp_path, capsys):
    mapping = fault_mapping(tmp_path)
    code, out, err = _run(tmp_path, capsys, f"mcp:{mapping}", "-per-question", str(tmp_path / "pq.jsonl"))
    assert code == 0, err
    assert "| mcp:fault |" in out
    written = list((tmp_path / "out").glob("*.json"))
    assert len(written) == 1
    doc = json.loads(written[0].read_text())
    described = doc["config"]["systems"][0]
    assert described["transport"]["servers_started"] == 1
    assert described["transport"]["ingest_calls"] == 6 and described["transport"]["recall_calls"] == 4
    assert described["server"]["name"] == "fault-server"
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    # word overlap ranks each question's gold first (hand-checked: the gold shares the most words)
    assert all(r["ranked"][0] == [r["gold"][0]] for r in rows), rows
    assert processes_with(str(tmp_path)) == []


@pytest.mark.parametrize(("fault", "said"), [
    ("die", "tool recall failed: MCPError: Connection closed (the server process ended"),
    ("hang", "tool recall failed: no answer within 2 s (raise it with ?timeout=SECONDS)"),
    ("garbage", "the reply is text, not JSON (reply: '<html>503 upstream</html>')"),
    ("unknown", "the server returned 'm999999', which is no item this run ingested"),
    ("leak", "a recall in group 'alice' returned item 'b1' of group 'bob'; the server leaks across groups"),
    ("exit_at_start", "start-up (initialize and tools/list) failed"),
])
def test_a_failing_server_is_one_line_exit_2_nothing_written_no_orphan(tmp_path, capsys, fault, said):
    mapping = fault_mapping(tmp_path, fault)
    code, out, err = _run(tmp_path, capsys, f"mcp:{mapping}?timeout=2")
    lines = [ln for ln in err.splitlines() if not ln.startswith(("progress:", "dataset "))]
    assert code == 2, err
    assert len(lines) == 1 and said in lines[0], lines
    assert "Traceback" not in err
    assert _no_results(tmp_path)
    assert processes_with(str(tmp_path)) == []


def test_a_mapping_naming_a_missing_tool_is_refused_before_any_write(tmp_path, capsys):
    mapping = fault_mapping(tmp_path)
    mapping.write_text(mapping.read_text().replace('tool = "recall"', 'tool = "search_everything"'))
    code, _, err = _run(tmp_path, capsys, f"mcp:{mapping}")
    assert code == 2
    assert "[recall] tool 'search_everything' is not one of the server's tools (recall, remember)" in err
    assert _no_results(tmp_path)
    assert processes_with(str(tmp_path)) == []


@pytest.mark.parametrize(("old", "new", "said"), [
    ('group = "{group_key}" }\n[recall]', 'group = "{group_key}", colour = "red" }\n[recall]',
     "passes argument 'colour' to tool remember, whose schema has no such argument (it takes: content, group, key)"),
    ('content = "{content}", ', "", "tool remember requires argument 'content', which the mapping's [ingest] does "
                                   "not give"),
])
def test_an_argument_the_schema_lacks_or_requires_is_named(tmp_path, capsys, old, new, said):
    mapping = fault_mapping(tmp_path)
    text = mapping.read_text()
    assert old in text
    mapping.write_text(text.replace(old, new, 1))
    code, _, err = _run(tmp_path, capsys, f"mcp:{mapping}")
    assert code == 2 and said in err, err
    assert processes_with(str(tmp_path)) == []


def test_groups_process_starts_one_server_per_group(tmp_path, capsys):
    mapping = fault_mapping(tmp_path, "leak", groups='groups = "process"')
    code, _, err = _run(tmp_path, capsys, f"mcp:{mapping}", "-per-question", str(tmp_path / "pq.jsonl"))
    # a server that puts another group's item first cannot when it only ever holds one group
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    assert all(r["ranked"][0] == [r["gold"][0]] for r in rows)
    assert processes_with(str(tmp_path)) == []


def test_the_served_system_ranks_exactly_as_in_process(tmp_path, capsys):
    """The transport changes the latency, never the ranking: bm25s behind MCP against bm25s itself."""
    pytest.importorskip("bm25s")
    code, out, err = _run(tmp_path, capsys, "bm25s,mcp:bm25s-served", "-per-question",
                          str(tmp_path / "pq.jsonl"))
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    by = {}
    for r in rows:
        by.setdefault(r["id"], {})[r["system"]] = r["ranked"]
    assert by and all(v["bm25s"] == v["mcp:bm25s-served"] for v in by.values())


def test_plan_checks_the_mapping_against_the_server_and_renders_a_dry_call(tmp_path, capsys):
    mapping = fault_mapping(tmp_path)
    code, out, err = _run(tmp_path, capsys, f"mcp:{mapping}", "--plan")
    assert code == 0, err
    assert "checked against fault-server" in out and "remember, recall present, arguments match" in out
    assert "ingest: remember {'key': 'm000000', 'content': 'Alice adopted a grey cat named Pixel in March'" in out
    assert "recall: recall {'query': 'What cat did Alice adopt?', 'group': 'g0', 'k': 2}" in out
    assert _no_results(tmp_path) and processes_with(str(tmp_path)) == []
    mapping.write_text(mapping.read_text().replace('tool = "remember"', 'tool = "store"'))
    code, out, err = _run(tmp_path, capsys, f"mcp:{mapping}", "--plan")
    assert code == 2 and "[ingest] tool 'store' is not one of the server's tools" in err
    assert processes_with(str(tmp_path)) == []
