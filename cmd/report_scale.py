"""`make report-scale`: memini-bench report on a LongMemEval-M-sized run (see memini_bench/bench/report_scale.py)."""

import sys

from memini_bench.bench.report_scale import main

if __name__ == "__main__":
    sys.exit(main())
