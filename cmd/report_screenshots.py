"""The report's pictures under docs/ (``make screenshots``, a maintainer target): the index's overview of boards, the
LoCoMo turn held-split board and a receipts page, photographed from a site ``memini-bench report`` built.

    python cmd/report_screenshots.py build/report docs
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memini_bench.report.screenshot import screenshots  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python cmd/report_screenshots.py SITE_DIR DOCS_DIR")
    for path in screenshots(Path(sys.argv[1]), Path(sys.argv[2])):
        print(f"wrote {path}")
