"""The generated blocks of README.md and every ``docs/*.md`` page: every number table from the committed
``results/`` files (never typed by hand, see ``docgen.blocks``) and the flag reference from the CLI itself
(``docgen.flags``: one section per verb).

A block is the text between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``; it may sit in any page, and each
page's blocks are rewritten wherever their markers are. ``python cmd/results_table.py`` rewrites them all;
``--check`` rewrites nothing and exits 1 when a page is out of date (a test runs the same comparison). A marker
whose NAME has no renderer, a begin without its end, or a known block that no page holds is bad input (one line,
exit 2): a block never silently disappears from the docs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.console import run_command
from memini_bench.core.settings import command, setting
from memini_bench.errors import BenchError

FLAGS = ("<!-- flags:begin -->", "<!-- flags:end -->")
BEGIN = re.compile(r"^<!-- (\S+):begin -->$", re.M)  # a marker is a line of its own (not one quoted in text)


def blocks() -> dict[str, Callable[[Path], str]]:
    """Block name -> renderer(results_dir) -> markdown (``docgen.blocks`` and friends)."""
    from devbench.ray_estimate import readme_block as ray_estimate_block
    from docgen import bench_blocks as bb
    from docgen import blocks as rb

    return {"results": rb.main_table, "reference-rows": rb.reference_rows, "reproduction": rb.reproduction,
            "temporal": rb.temporal_boost,
            "rerank": rb.rerank_table, "extractors": rb.extractor_diff, "vecgate": rb.vec_gate,
            "quality": rb.quality_table, "vetobench": rb.vetobench_table, "vetoscale": rb.vetobench_scale,
            "sweeps": rb.sweeps, "selection": rb.selection, "legs": rb.legs, "studies": studies_sections,
            "peers": rb.peers, "protocol": rb.protocol, "corrections": rb.corrections,
            "corrections-longmemeval": rb.corrections_longmemeval, "time-ordered": rb.time_ordered,
            "ray-estimate": ray_estimate_block, "scale": bb.scale_block,
            "speed": bb.speed_block, "gpu": bb.gpu_block}


def renderers() -> dict[str, Callable[[Path], str]]:
    """Every block a page may hold: the results blocks and ``flags`` (which reads the CLI, not results/)."""
    from docgen import datasets, flags, manifest, reference
    from docgen.docs_studies import block as study_rows

    return {**blocks(), "flags": lambda _results: flags.reference(), "study-rows": study_rows,
            "reference-held": reference.held, "reference-full": reference.full, "reference-depth": reference.depth,
            "claimants": reference.claimants, "embedders": reference.embedders,
            "reference-selection": reference.selection, "reference-adaptive": reference.adaptive,
            "reference-goal": reference.goal,
            "datasets": datasets.table, "data-catalog": datasets.catalog_table,
            "results-manifest": lambda _results: manifest.markdown() + "\n"}


def studies_sections(results_dir: Path) -> str:
    from docgen.studies import sections

    text = sections(results_dir)
    return text if text.strip() else "_(no study results are committed yet: `make results` writes them)_\n"


def updated(text: str, block: tuple[str, str], body: str) -> str:
    """``text`` with the block between the markers ``block`` replaced by ``body``."""
    begin, end = block
    first = re.search(f"^{re.escape(begin)}$", text, re.M)
    last = first and re.compile(f"^{re.escape(end)}$", re.M).search(text, first.end())
    if not (first and last):
        raise BenchError(f"no {begin} ... {end} block (each marker on a line of its own)")
    return f"{text[:first.start()]}{begin}\n{body}{end}{text[last.end():]}"


def rendered(text: str, results_dir: Path, where: str = "page") -> str:
    """``text`` (one page) with every block it holds rewritten from ``results_dir`` and the CLI."""
    known = renderers()
    for name in dict.fromkeys(BEGIN.findall(text)):
        if name not in known:
            raise BenchError(f"{where}: unknown generated block {name!r}; known: {', '.join(sorted(known))}")
        marker = (f"<!-- {name}:begin -->", f"<!-- {name}:end -->")
        if not re.search(f"^{re.escape(marker[1])}$", text, re.M):
            raise BenchError(f"{where}: {marker[0]} has no {marker[1]}; add the end marker")
        text = updated(text, marker, known[name](results_dir))
    return text


def pages(readme: Path, docs: Path) -> list[Path]:
    """README.md and every page under ``docs/`` (``docs/**/*.md``), in a fixed order."""
    return [readme, *sorted(docs.rglob("*.md"))]


def rewritten(paths: list[Path], results_dir: Path) -> dict[Path, tuple[str, str]]:
    """Each page -> (its text now, its text with current blocks); every known block must sit in some page."""
    out = {p: (p.read_text(), "") for p in paths}
    out = {p: (old, rendered(old, results_dir, str(p))) for p, (old, _) in out.items()}
    held = {name for old, _ in out.values() for name in BEGIN.findall(old)}
    missing = sorted(set(renderers()) - held)
    if missing:
        raise BenchError(f"no page holds the generated block(s) {', '.join(missing)}; put "
                         f"<!-- NAME:begin --> / <!-- NAME:end --> in README.md or a docs/*.md page")
    return out


@dataclass(frozen=True)
class TableOptions:
    """The flags of ``results-table`` (each ``-name`` and ``--name``)."""

    readme: str = setting("readme", "README.md", "the README whose generated blocks are rewritten")
    docs: str = setting("docs", "docs", "the folder of docs pages (*.md) whose generated blocks are rewritten")
    results: str = setting("results", "results", "the committed results folder")
    check: bool = setting("check", False, "exit 1 if a generated block of the README or a docs page is out of date")


@command(TableOptions, name="results-table")
def main_command(args: TableOptions) -> int | None:
    readme = Path(args.readme)
    if not readme.is_file():
        raise BenchError(f"-readme {args.readme}: not a file; run from the project root or pass -readme PATH")
    texts = rewritten(pages(readme, Path(args.docs)), Path(args.results))
    stale = [str(p) for p, (old, new) in texts.items() if old != new]
    if args.check:
        if stale:
            print(f"{', '.join(stale)}: generated blocks are out of date; run python cmd/results_table.py",
                  file=sys.stderr)
            sys.exit(1)
        return None
    for path, (old, new) in texts.items():
        if old != new:
            path.write_text(new)
    return None


def main(argv: list[str] | None = None) -> int | None:
    """The entry point: ``main_command`` with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
