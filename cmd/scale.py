"""`make scale`: wall time, peak RSS and phases on LongMemEval-S/-M-shaped files (see memini_bench/bench/scale.py)."""

import sys

from memini_bench.bench.scale import main

if __name__ == "__main__":
    sys.exit(main())
