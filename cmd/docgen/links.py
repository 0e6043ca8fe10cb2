"""Relative links of the README and the docs pages: each must name an existing file and, for ``page.md#anchor``, a
heading of that page.

An anchor is GitHub's slug of a heading: lower case, every character that is not a letter, digit, ``_``, ``-`` or
a space dropped (backticks, apostrophes, parentheses, colons), each space turned into ``-``; a repeated slug gets
``-1``, ``-2``... Headings and links inside fenced code blocks and inline code are not headings or links.
Absolute links (``https:``, ``mailto:``) are not checked (no network here).
"""

from __future__ import annotations

import re
from pathlib import Path

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`[^`]*`")


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (see the module docstring)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor the headings of a markdown page define."""
    seen: dict[str, int] = {}
    out = set()
    for _, line in _prose_lines(text):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline link outside code."""
    return [(n, m.group(1)) for n, line in _prose_lines(text) for m in LINK.finditer(CODE_SPAN.sub("", line))]


def broken(page: Path) -> list[str]:
    """One line per relative link of ``page`` whose file or anchor does not exist."""
    text = page.read_text()
    out = []
    for n, target in links(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page.resolve()
        if not dest.exists():
            out.append(f"{page.name}:{n}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            out.append(f"{page.name}:{n}: {target}: no heading with anchor #{anchor}")
    return out
