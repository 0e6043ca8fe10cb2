"""The example commands of README.md and docs/*.md (see the package docstring): ``extract``, ``Example``."""


from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_FENCES = {"", "sh", "bash", "console", "shell"}
FENCE = re.compile(r"^\s*```\s*(\w*)\s*$")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PYTHON = re.compile(r"^(\.venv/bin/)?python3?$")
# A placeholder the reader replaces: an upper-case word (TOPIC, NAME, FILES, PATH, DIR, ARGS...) or ...
PLACEHOLDER = re.compile(r"\b(TOPIC|NAME|FILES|PATH|DIR|URL|KEY|N)\b|\.\.\.|my_module")


class ExampleError(Exception):
    """A documented command that does not parse, or that its mode would refuse."""


@dataclasses.dataclass(frozen=True)
class Example:
    """One documented command: where it is written and its words (comment and prompt dropped)."""

    page: str
    line: int
    argv: tuple[str, ...]
    inline: bool = False

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def text(self) -> str:
        return shlex.join(self.argv)

    @property
    def program(self) -> tuple[str, str, tuple[str, ...]]:
        """(kind, name, arguments): ("memini-bench", "", args), ("module", "quality.scoreboard", args), ("script",
        "cmd/speed.py", args) or ("make", "target", args)."""
        words = list(self.argv)
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            words.pop(0)  # VAR=value before the command
        if not words:
            return ("", "", ())
        head = words[0]
        if head.endswith("memini-bench"):
            return ("memini-bench", "", tuple(words[1:]))
        if PYTHON.match(head) and len(words) > 2 and words[1] == "-m":
            if words[2] == "memini_bench":
                return ("memini-bench", "", tuple(words[3:]))
            return ("module", words[2], tuple(words[3:]))
        if PYTHON.match(head) and len(words) > 1:
            return ("script", words[1], tuple(words[2:]))
        if head == "make":
            rest = [w for w in words[1:] if "=" not in w]
            return ("make", rest[0] if rest else "", tuple(w for w in words[1:] if "=" in w))
        return ("", head, tuple(words[1:]))


def runs_ours(argv: list[str]) -> bool:
    """Whether a command line runs a command of this project (see the module docstring)."""
    words = [w for w in argv if not re.fullmatch(r"[A-Z_]+=\S*", w)][:3]
    if not words:
        return False
    head = words[0]
    if head in ("memini-bench", ".venv/bin/memini-bench", "make"):
        return True
    if PYTHON.match(head) and len(words) > 1:
        return (words[1] == "-m" and len(words) > 2 and re.match(r"(memini_bench|quality)(\.|$)", words[2])
                is not None) or words[1].startswith("cmd/")
    return False


def _commands(line: str) -> Iterator[list[str]]:
    """The commands of one shell line: comment dropped, split at ``&&``, ``;`` and ``|``... (a ``|`` between
    alternatives in prose stays a word, so the placeholder rule sees it)."""
    line = re.sub(r"^\s*\$\s+", "", line)
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        words = line.split()
    part: list[str] = []
    for word in words:
        if word in ("&&", ";", "||"):
            yield part
            part = []
        else:
            part.append(word)
    yield part


def _page_examples(path: Path, name: str) -> Iterator[Example]:
    lines = path.read_text(encoding="utf-8").splitlines()
    fence: str | None = None
    pending, start = "", 0
    for n, raw in enumerate(lines, 1):
        m = FENCE.match(raw)
        if m:
            fence = m.group(1) if fence is None else None
            continue
        if fence is None:
            for span in CODE_SPAN.findall(raw):
                for words in _commands(span):
                    if runs_ours(words):
                        yield Example(name, n, tuple(words), inline=True)
            continue
        if fence not in SHELL_FENCES:
            continue
        if not pending:
            start = n
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line, pending = pending + raw, ""
        for words in _commands(line):
            if runs_ours(words):
                yield Example(name, start, tuple(words))


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def extract(root: Path = ROOT) -> list[Example]:
    """Every example command of the README and the docs pages, in page order."""
    return [ex for page in pages(root) for ex in _page_examples(page, str(page.relative_to(root)))]


# --- classification ------------------------------------------------------------------------------------------------
