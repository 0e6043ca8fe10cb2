"""What the protocol tests share: a two-group data set in the normalized schema, mapping files written for the
test, and the ``ps`` check that no server process outlived a run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

ITEMS = [
    ("a1", "Alice adopted a grey cat named Pixel in March", "alice"),
    ("a2", "Alice runs the Berlin marathon every autumn", "alice"),
    ("a3", "Alice works as a nurse at the city hospital", "alice"),
    ("b1", "Bob adopted a dog named Rex from the shelter", "bob"),
    ("b2", "Bob plays the cello in a string quartet", "bob"),
    ("b3", "Bob is learning Japanese for a trip to Kyoto", "bob"),
]
QUESTIONS = [
    ("qa1", "What cat did Alice adopt?", ["a1"], "alice"),
    ("qa2", "Which marathon does Alice run?", ["a2"], "alice"),
    ("qb1", "What dog did Bob adopt?", ["b1"], "bob"),
    ("qb2", "Which instrument does Bob play in the quartet?", ["b2"], "bob"),
]


def two_groups(folder: Path) -> Path:
    """A data set of two groups (``-suite file -data PATH``)."""
    path = folder / "two-groups.json"
    path.write_text(json.dumps({
        "name": "two-groups",
        "items": [{"id": i, "content": c, "group": g} for i, c, g in ITEMS],
        "questions": [{"id": i, "query": q, "gold": gold, "group": g} for i, q, gold, g in QUESTIONS]}))
    return path


def fault_mapping(folder: Path, fault: str = "", marker: str = "", **changes: str) -> Path:
    """A mapping of ``fault_server.py`` (module docstring there) with ``FAULT`` set; ``changes`` replace lines."""
    lines = {
        "name": 'name = "fault"',
        "command": f'command = [{json.dumps(sys.executable)}, {json.dumps(str(HERE / "fault_server.py"))}, '
                   f'{json.dumps(marker or str(folder))}]',
        "env": f'env = {{ FAULT = "{fault}" }}',
        "timeout": "timeout = 5",
        "startup_timeout": "startup_timeout = 60",
    }
    lines.update(changes)
    body = "\n".join(lines.values()) + """
[ingest]
tool = "remember"
arguments = { key = "{key}", content = "{content}", group = "{group_key}" }
[recall]
tool = "recall"
arguments = { query = "{query}", group = "{group_key}", k = "{k}" }
results = "$.hits"
id = "key"
score = "score"
"""
    path = folder / f"fault-{fault or 'none'}.toml"
    path.write_text(body)
    return path


def processes_with(marker: str, *, mine: bool = False) -> list[str]:
    """The ``ps`` lines of live processes whose command line holds ``marker`` (zombies excluded); ``mine``: only the
    descendants of this process (a server another run started elsewhere is not this test's)."""
    import os

    out = subprocess.run(["ps", "-eo", "pid,ppid,stat,args"], capture_output=True, text=True, check=True).stdout
    rows = [line.split(None, 3) for line in out.splitlines()[1:]]
    ours = {os.getpid()}
    if mine:
        grew = True
        while grew:
            before = len(ours)
            ours |= {int(pid) for pid, ppid, *_ in rows if int(ppid) in ours}
            grew = len(ours) > before
    return [" ".join(r) for r in rows if len(r) == 4 and marker in r[3] and "ps -eo" not in r[3]
            and r[2][:1] != "Z" and (not mine or int(r[0]) in ours)]
