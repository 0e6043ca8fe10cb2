"""`make results`: every committed results file from its command in cmd/results_manifest.txt (see
cmd/docgen/manifest.py); `--list` prints the commands."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the package, when it is not installed

from docgen.manifest import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
