"""Regenerate the README results table from results/*.json (see tools/readme/table.py)."""

from tools.readme.table import main

if __name__ == "__main__":
    main()
