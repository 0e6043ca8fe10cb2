"""The command line: ``python -m memini_bench -suite locomo -data locomo10.json -k 5,10``.

Every flag works Go-style (``-suite locomo``, as memini's cmd/bench) and GNU-style (``--suite locomo``). Bad
input ends as one line on stderr naming the input and the fix, with exit code 2 and no results file written.
"""

from __future__ import annotations

import dataclasses
import sys

import click

from memini_bench import __version__
from memini_bench.errors import BenchError
from memini_bench.flags import flag
from memini_bench.loaders import LOADERS
from memini_bench.modes import dispatch, modes
from memini_bench.options import RunOptions, parse_ks


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@flag("suite", default="sample", type=click.Choice(list(LOADERS)), help="Data set format to load.")
@flag("data", default="", help="Data set path (required for every suite except sample).")
@flag("k", "k_list", default="5", help="Comma-separated K list; recall runs once at the largest K.")
@flag("dims", default=256, type=int, help="Dimensions of the hash embedder (-embedder hash).")
@flag("limit", default=0, type=int, help="Even subsample of N questions (0 = all); results get a -limitN suffix.")
@flag("out", default="results", help="Directory for the JSON results file <dataset>.json.")
@flag("fusion", default=0.5, type=float, help="Hybrid alpha: >= 0 min-max score fusion with this vector weight; "
      "< 0 RRF (rrfK 5).")
@flag("pool-factor", default=0, type=int, help="Hybrid per-leg pool = max(k*factor, floor); 0 = memini's 5.")
@flag("pool-floor", default=0, type=int, help="Hybrid per-leg pool floor; 0 = memini's 50.")
@flag("temporal-boost", default=0.0, type=click.FloatRange(min=0), help="Hybrid temporal targeting: score x "
      "(1 + B x proximity to the time the query names); 0 = off (memini's bench; its server uses 0.40).")
@flag("temporal-extractor", default="regex", type=click.Choice(["regex", "extended"]), help="Time-phrase "
      "extractor for the temporal boost: memini's regex, or extended (+ day-month-year dates, spelled-out/vague "
      "counts, weekdays, spans).")
@flag("semantic-reserve", default=0, type=click.IntRange(min=0), help="Hybrid durable-tier reserve: keep up to R "
      "semantic/procedural memories in the top k when they clear the gate max(0.5 x evictee, 0.4 x top-1); "
      "0 = off (memini's bench; its server uses 2).")
@flag("holdout", default="all", type=click.Choice(["all", "tune", "held"]),
      help="Question split: held = 0-based index i % 10 == 9, tune = the rest.")
@flag("session-doc", default="full", type=click.Choice(["full", "user-only", "dated"]),
      help="LongMemEval session text.")
@flag("abstention", default="exclude", type=click.Choice(["exclude", "include"]),
      help="LongMemEval _abs questions: exclude from scoring (LongMemEval's protocol) or include (memini's).")
@flag("shared-haystack", is_flag=True, default=False,
      help="LongMemEval: pool every record's sessions (deduplicated by id) into one group.")
@flag("keyword-backend", default="numpy", type=click.Choice(["numpy", "fts5"]),
      help="BM25 backend: in-process numpy (default) or SQLite FTS5 (the reference).")
@flag("embedder", default="auto", help="auto (the endpoint if MEMINI_EMBED_BASE_URL is set, else minilm), minilm "
      "(all-MiniLM-L6-v2, local), st:PATH_OR_NAME (a sentence-transformers model), openai, or hash.")
@flag("max-tokens", default=0, type=int, help="Max tokens per text for local models (0 = default: 512 for MiniLM).")
@flag("batch-size", default=64, type=int, help="Embedding batch size for local models.")
@flag("device", default="auto", type=click.Choice(["auto", "cpu", "cuda"]), help="Device for local models.")
@flag("cache-dir", default="", help="Embedding cache folder (default $MEMINI_BENCH_CACHE or ~/.cache/memini-bench).")
@flag("no-cache", is_flag=True, default=False, help="Bypass the embedding disk cache.")
@flag("reinforce", is_flag=True, default=False, help="Simulate memini's access-count reinforcement on the hybrid "
      "path (a memini quirk: each returned memory's access count +1, raising its quality in later recalls).")
@flag("systems", default="", help="Comma-separated subset of systems (hybrid, vector, keyword); default all.")
@flag("per-question", default="", help="Also write per-question JSONL (id, gold, ranked ids and scores, rank, "
      "latency) to this file.")
@flag("trec", default="", help="Also write TREC files to this folder: <dataset>.qrels and <dataset>.<system>.run "
      "(for trec_eval / ir_measures).")
@flag("no-write", is_flag=True, default=False, help="Print tables only; write no results file.")
@click.version_option(__version__, "-version", "--version")
def command(k_list: str, systems: str, **kwargs: object) -> None:
    """memini-bench: measure whether agent-memory systems recall the gold memories."""
    core = {f.name for f in dataclasses.fields(RunOptions)}
    opts = RunOptions(k=tuple(parse_ks(k_list)), systems=tuple(s.strip() for s in systems.split(",") if s.strip()),
                      extra={key: value for key, value in kwargs.items() if key not in core},
                      **{key: value for key, value in kwargs.items() if key in core})
    sys.exit(dispatch(opts))


for _mode in modes():
    for _flag in _mode.FLAGS:
        command = _flag(command)


def run_command(cmd: click.Command, argv: list[str] | None, prog: str) -> None:
    """Run a click command with one-line errors: exit 2 for bad input (usage or BenchError), 130 when
    interrupted, never a traceback for either."""
    try:
        cmd.main(args=argv, prog_name=prog, standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"{prog}: error: {exc.format_message()} (see --help)", err=True)
        sys.exit(2)
    except BenchError as exc:
        click.echo(f"{prog}: error: {exc}", err=True)
        sys.exit(2)
    except (click.Abort, KeyboardInterrupt):
        click.echo(f"{prog}: interrupted", err=True)
        sys.exit(130)


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``memini-bench`` and ``python -m memini_bench``."""
    run_command(command, argv, "memini-bench")
