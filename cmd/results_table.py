"""Regenerate the README's and docs' generated blocks from results/*.json (see tools/readme/table.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools/ lives beside the package, not in it

from tools.readme.table import main  # noqa: E402

if __name__ == "__main__":
    main()
