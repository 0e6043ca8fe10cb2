"""`make screenshots`: the report's pictures in docs/ from a built site (see memini_bench/report/screenshot.py)."""

import sys

from memini_bench.report.screenshot import main

if __name__ == "__main__":
    sys.exit(main())
