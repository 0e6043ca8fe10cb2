"""`make scale`: wall time, peak RSS and phases on LongMemEval-S/-M-shaped files (see memini_bench/scaling.py)."""

import sys

from memini_bench.scaling import main

if __name__ == "__main__":
    sys.exit(main())
