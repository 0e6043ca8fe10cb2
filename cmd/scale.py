"""`make scale`: wall time, peak RSS and phases on LongMemEval-S/-M-shaped files (see cmd/devbench/scale.py)."""

import sys

from devbench.scale import main

if __name__ == "__main__":
    sys.exit(main())
