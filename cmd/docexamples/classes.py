"""Each example's class: ``CLASSES`` (each with its reason) and the first matching rule of ``RULES``."""


from __future__ import annotations

import re
from collections.abc import Callable

from docexamples.reading import PLACEHOLDER, Example

#: Every class, with why an example of it is (or is not) run by tests/docs/test_examples.py.
CLASSES: dict[str, str] = {
    "run": "runnable here offline in seconds: run in a fresh clone, then git status must be empty",
    "slow": "runnable here offline, a minute or more (MiniLM over a full set, make report's site of every committed "
            "run): run like `run` under -m slow",
    "long": "a measurement script of many minutes: parsed and its destinations checked, not run",
    "maintainer": "regenerates committed files by design (results/, the generated README and docs blocks, "
                  "the report's pictures in docs/): make results, make screenshots and their kin; parsed and "
                  "checked, not run",
    "toolchain": "builds .venv (pip, network) or runs the test suite and linters themselves; they write only .venv/ "
                 "and tool caches, checked to be ignored",
    "llm": "needs an LLM endpoint (MEMINI_LLM_*): -qa, VetoBench -live, or the archives a -live run writes",
    "gpu": "needs a CUDA GPU",
    "network": "downloads a data set (memini-bench data fetch, a registry -data NAME not fetched here)",
    "absent": "reads a file that is neither in the repository nor in ../shared/data (LongMemEval-S's 500 questions, "
              "the user's prices.toml)",
    "placeholder": "a template, not a command: TOPIC, NAME, FILES, PATH, DIR, '...', 'a | b' alternatives",
    "mention": "prose naming a command (inline, no arguments beyond a subcommand: `memini-bench report`, a study's "
               "module in its heading), not an invocation",
}

MAINTAINER_MAKE = {"results", "results-beam", "speed", "speed-overhead", "scale", "ray-estimate", "quality",
                   "screenshots", "report-scale", "reference-search", "reference-held",
                   "embed-throughput",
                   "results-embedders"}
TOOLCHAIN_MAKE = {"install", "test", "test-all", "lint", "clean"}


def _args(ex: Example) -> tuple[str, ...]:
    return ex.program[2]


def _flag(ex: Example, *names: str) -> str | None:
    """The value of a flag (any of ``names``, Go- or GNU-style, ``-f v`` or ``-f=v``) in ``ex``; "" for a bare flag
    followed by another flag or nothing; None when absent."""
    args = list(_args(ex))
    spellings = {f"-{n}" for n in names} | {f"--{n}" for n in names}
    for i, word in enumerate(args):
        key, eq, value = word.partition("=")
        if key in spellings:
            if eq:
                return value
            return args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("-") else ""
    return None


def _mentions(ex: Example, pattern: str) -> bool:
    return re.search(pattern, " ".join(ex.argv)) is not None


def _minilm(ex: Example) -> bool:
    """Runs the default embedder (MiniLM here) or names it."""
    return _flag(ex, "embedder") in (None, "minilm", "auto")


#: (class, rule): the first rule an example matches decides its class (``classify``); the reason is the class's.
RULES: list[tuple[str, Callable[[Example], bool]]] = [
    ("mention", lambda ex: ex.inline and ex.program[0] in ("memini-bench", "module") and len(_args(ex)) <= (
        1 if _args(ex)[:1] in (("report",), ("data",), ("score",)) else 0)),
    ("placeholder", lambda ex: _mentions(ex, r"(^|\s)\|(\s|$)") or PLACEHOLDER.search(" ".join(ex.argv)) is not None),
    ("maintainer", lambda ex: ex.program[0] == "make" and ex.program[1] in MAINTAINER_MAKE),
    ("gpu", lambda ex: ex.program[0] == "make" and ex.program[1] == "gpu" or _flag(ex, "device") == "cuda"),
    ("toolchain", lambda ex: ex.program[0] == "make" and ex.program[1] in TOOLCHAIN_MAKE),
    ("maintainer", lambda ex: ex.program[1] in ("cmd/results_table.py", "cmd/reference_select.py")
     or (_flag(ex, "out", "o") or "").rstrip("/").split("/")[0] in ("results", "docs")
     or (_flag(ex, "screenshot") or "").startswith("docs/")),
    ("llm", lambda ex: any(_flag(ex, f) is not None for f in ("qa", "live", "llm-rerank", "veto-summary"))
     and _flag(ex, "estimate") is None),
    ("network", lambda ex: ex.program[0] == "memini-bench" and _args(ex)[:2] == ("data", "fetch")
     or re.fullmatch(r"[\w-]+", _flag(ex, "data") or "/") is not None),
    ("absent", lambda ex: "longmemeval_s_cleaned.json" in ex.argv or _mentions(ex, r"prices\.toml")),
    ("long", lambda ex: ex.program[1] in ("cmd/speed.py", "cmd/ray_estimate.py", "cmd/scale.py",
                                          "cmd/report_scale.py", "cmd/import_time.py")),
    ("slow", lambda ex: (_mentions(ex, r"\.\./shared/data/(locomo|longmemeval)") and _minilm(ex))
     or _mentions(ex, r"-suite vetobench") or ex.program[0] == "module"
     or ex.program[:2] == ("make", "report")),
    ("run", lambda ex: True),
]


def classify(ex: Example) -> str:
    return next(name for name, rule in RULES if rule(ex))
