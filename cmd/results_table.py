"""Regenerate the README results table from results/*.json (see memini_bench/readme_table.py)."""

from memini_bench.readme_table import main

if __name__ == "__main__":
    main()
