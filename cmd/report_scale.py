"""`make report-scale`: memini-bench report on a LongMemEval-M-sized run (see cmd/devbench/report_scale.py)."""

import sys

from devbench.report_scale import main

if __name__ == "__main__":
    sys.exit(main())
