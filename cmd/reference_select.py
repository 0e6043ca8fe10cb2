"""`make reference-search`'s last step: pick the reference defaults (see memini_bench/evaluation/selection.py)."""

import sys

from memini_bench.evaluation.selection import main

if __name__ == "__main__":
    sys.exit(main())
