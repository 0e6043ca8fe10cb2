"""The README's generated blocks: the results table from the committed ``results/*.json`` (never typed by hand)
and the flag table from the CLI itself.

``python cmd/results_table.py`` rewrites the blocks between ``<!-- results:begin -->`` / ``<!-- results:end -->``
and ``<!-- flags:begin -->`` / ``<!-- flags:end -->`` in README.md; ``--check`` exits 1 when the README is out of
date (a test runs it). Results rows: one system of one results file, R@5 / R@10 / RecallAll@10 / MRR / nDCG@10,
p50 latency.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

RESULTS = ("<!-- results:begin -->", "<!-- results:end -->")
FLAGS = ("<!-- flags:begin -->", "<!-- flags:end -->")
# The files the table shows, in order (anything else in results/ is left out of the README).
TABLE_FILES = ("locomo.json", "locomo-sessions.json", "longmemeval.json", "longmemeval-shared.json")


def _pct(x: float) -> str:
    return f"{x * 100:.1f}"


def render(results_dir: Path) -> str:
    lines = ["| data set | questions | system | embedder | R@5 | R@10 | RecallAll@10 | MRR | nDCG@10 | p50 ms |",
             "|---|--:|---|---|--:|--:|--:|--:|--:|--:|"]
    for name in TABLE_FILES:
        path = results_dir / name
        if not path.exists():
            continue
        doc = orjson.loads(path.read_bytes())
        config = doc["config"]
        rows: dict[str, dict[int, dict]] = {}
        for r in doc["results"]:
            rows.setdefault(r["system"], {})[r["k"]] = r
        for system, by_k in rows.items():
            r5, r10 = by_k.get(5), by_k.get(10)
            if not (r5 and r10):
                continue
            embedder = config.get("embed_model", "") if system != "memini-keyword" else "-"
            embedder = embedder.replace("st:sentence-transformers/", "").replace("|max_tokens=", " @")
            lines.append(f"| {config['dataset']} | {r10['questions']} | {system} | {embedder} | "
                         f"{_pct(r5['recall_at_k'])} | {_pct(r10['recall_at_k'])} | {_pct(r10['recall_all_at_k'])} | "
                         f"{_pct(r10['mrr'])} | {_pct(r10['ndcg_at_k'])} | {r10['p50_ms']:.2f} |")
    return "\n".join(lines) + "\n"


def flags_table() -> str:
    """Every CLI flag with its default and help, read from the click command."""
    from memini_bench.cli import command

    lines = ["| flag | default | meaning |", "|---|---|---|"]
    for param in command.params:
        names = [o for o in param.opts if o.startswith("--")]
        if not names or param.name == "version":
            continue
        default = "" if param.is_flag or param.default in ("", None) else f"`{param.default}`"
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--readme", default="README.md")
    parser.add_argument("--results", default="results")
    parser.add_argument("--check", action="store_true", help="exit 1 if the README table is out of date")
    args = parser.parse_args(argv)
    readme = Path(args.readme).read_text()
    new = updated(updated(readme, RESULTS, render(Path(args.results))), FLAGS, flags_table())
    if args.check:
        if new != readme:
            print(f"{args.readme}: results table is out of date; run python cmd/results_table.py", file=sys.stderr)
            sys.exit(1)
        return
    Path(args.readme).write_text(new)
