"""The docs speak to users: no page of docs/, the README or the data catalog (which `memini-bench data list -v`
prints) cites an issue number, a private file (../shared/docs/...), an absolute path of a developer's machine or
"this machine" (the maintainers'; our measurements are labelled as ours).
A /tmp path may stand in an example (inside code); /work/, /root/ and /home/ may not stand anywhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "memini_bench" / "data" / "catalog.json"]
ANYWHERE = {
    "an issue number": re.compile(r"\bissues? #?\d+", re.I),
    "a private file": re.compile(r"\.\./shared/docs\b"),
    "a path of a developer's machine": re.compile(r"(?<![\w.~-])/(work|root|home)/"),
    # the maintainers' machine is not the reader's: "not on this machine" reads as "you cannot have it"; our
    # measurements say they are ours (on our measuring machine, we did not have)
    "the maintainers' machine as 'this machine'": re.compile(r"\bthis\s+machine\b", re.I),
}
OUTSIDE_CODE = {"a /tmp path outside an example": re.compile(r"(?<![\w.~-])/tmp/")}
CODE = re.compile(r"```.*?```|`[^`]+`", re.S)


def _prose(text: str) -> str:
    """``text`` with its code (fenced blocks and inline spans) blanked out, line numbers kept."""
    return CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _violations(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    prose = text if path.suffix == ".json" else _prose(text)
    found = []
    for rules, body in ((ANYWHERE, text), (OUTSIDE_CODE, prose)):
        for what, rule in rules.items():
            for m in rule.finditer(body):
                line = body.count("\n", 0, m.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {what}: {text.splitlines()[line - 1].strip()[:120]}")
    return found


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_numbers_private_files_or_machine_paths(path):
    assert _violations(path) == []


def test_the_rules_catch_what_they_are_for(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("As issue 23 said, see ../shared/docs/anchors.md and /work/shared/data/x.json; /tmp/out here.\n"
                    "Not on this\nmachine.\n"
                    "```\nmemini-bench -out /tmp/runs\n```\n`-o /tmp/site` and ~/tmp/x and a/tmp/b are fine.\n")
    original = ROOT
    try:
        globals()["ROOT"] = tmp_path
        found = _violations(page)
    finally:
        globals()["ROOT"] = original
    assert [f.split(": ")[1] for f in found] == ["an issue number", "a private file",
                                                 "a path of a developer's machine",
                                                 "the maintainers' machine as 'this machine'",
                                                 "a /tmp path outside an example"]
