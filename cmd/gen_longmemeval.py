"""Write a LongMemEval-S- or -M-shaped file from real sentences of the shared data (see memini_bench/bench/synth.py).

    python cmd/gen_longmemeval.py -shape s -out /tmp/lme_s.json [-records 125] [-seed 0]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

from memini_bench.bench.synth import SHAPES, load_source, write
from memini_bench.errors import BenchError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-shape", choices=sorted(SHAPES), default="s", help="s: 500 x 48 sessions; m: 500 x 500")
    parser.add_argument("-out", required=True, help="the file to write")
    parser.add_argument("-data", default="../shared/data", help="the shared data folder (locomo/, longmemeval/)")
    for field in dataclasses.fields(SHAPES["s"]):
        parser.add_argument(f"-{field.name.replace('_', '-')}", type=int, default=None, dest=field.name,
                            help=f"override the shape's {field.name}")
    args = parser.parse_args(argv)
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(SHAPES["s"])
                 if getattr(args, f.name) is not None}
    shape = dataclasses.replace(SHAPES[args.shape], **overrides)
    try:
        t = time.perf_counter()
        size = write(args.out, load_source(args.data), shape)
    except BenchError as exc:
        print(f"gen_longmemeval: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {size / 1e6:.1f} MB, {shape.records} records x {shape.sessions} sessions "
          f"(pool {shape.pool}, seed {shape.seed}) in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
