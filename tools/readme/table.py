"""The README's generated blocks: every number table from the committed ``results/`` files (never typed by
hand, see ``readme_blocks``) and the flag table from the CLI itself.

``python cmd/results_table.py`` rewrites each block between ``<!-- NAME:begin -->`` / ``<!-- NAME:end -->`` in
README.md; ``--check`` exits 1 when the README is out of date (a test runs it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from memini_bench.core.console import run_command
from memini_bench.core.settings import command, setting

FLAGS = ("<!-- flags:begin -->", "<!-- flags:end -->")


def blocks() -> dict:
    """README block name -> renderer(results_dir) -> markdown (``tools.readme.blocks``)."""
    from memini_bench.bench.ray_estimate import readme_block as ray_estimate_block
    from tools.readme import bench_blocks as bb
    from tools.readme import blocks as rb

    return {"results": rb.main_table, "reproduction": rb.reproduction, "temporal": rb.temporal_boost,
            "rerank": rb.rerank_table, "extractors": rb.extractor_diff, "vecgate": rb.vec_gate,
            "quality": rb.quality_table, "vetobench": rb.vetobench_table, "vetoscale": rb.vetobench_scale,
            "sweeps": rb.sweeps, "selection": rb.selection, "legs": rb.legs, "studies": studies_sections,
            "peers": rb.peers, "ray-estimate": ray_estimate_block, "scale": bb.scale_block,
            "speed": bb.speed_block, "gpu": bb.gpu_block}


def studies_sections(results_dir: Path) -> str:
    from tools.readme.studies import sections

    text = sections(results_dir)
    return text if text.strip() else "_(no study results are committed yet: `make results` writes them)_\n"


def flags_table() -> str:
    """Every CLI flag with its default and help, read from the click command."""
    from memini_bench.cli import command

    lines = ["| flag | default | meaning |", "|---|---|---|"]
    for param in command.params:
        names = [o for o in param.opts if o.startswith("--")]
        if not names or param.name == "version" or not param.expose_value:
            continue
        empty = param.default in ("", None) or (isinstance(param.default, list | tuple) and not param.default)
        default = "" if param.is_flag or empty else f"`{param.default}`"
        text = (param.help or "").replace("|", "\\|")
        lines.append(f"| `-{names[0][2:]}` | {default} | {text} |")
    return "\n".join(lines) + "\n"


def updated(readme: str, block: tuple[str, str], text: str) -> str:
    begin, end = block
    if begin not in readme or end not in readme:
        raise SystemExit(f"README has no {begin} ... {end} block")
    head, rest = readme.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{text}{end}{tail}"


@dataclass(frozen=True)
class TableOptions:
    """The flags of ``results-table`` (each ``-name`` and ``--name``)."""

    readme: str = setting("readme", "README.md", "the README whose generated blocks are rewritten")
    results: str = setting("results", "results", "the committed results folder")
    check: bool = setting("check", False, "exit 1 if the README table is out of date")


@command(TableOptions, name="results-table")
def main_command(args: TableOptions) -> int | None:
    readme = Path(args.readme).read_text()
    new = updated(readme, FLAGS, flags_table())
    for name, render in blocks().items():
        marker = (f"<!-- {name}:begin -->", f"<!-- {name}:end -->")
        if marker[0] in new:
            new = updated(new, marker, render(Path(args.results)))
    if args.check:
        if new != readme:
            print(f"{args.readme}: results table is out of date; run python cmd/results_table.py", file=sys.stderr)
            sys.exit(1)
        return
    Path(args.readme).write_text(new)


def main(argv: list[str] | None = None) -> int | None:
    """The entry point: ``main_command`` with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(main_command, argv, "memini-bench")
