"""Regenerate the README's and docs' generated blocks from results/*.json (see cmd/docgen/table.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the package, when it is not installed

from docgen.table import main  # noqa: E402

if __name__ == "__main__":
    main()
