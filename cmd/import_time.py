"""How long `import memini_bench.cli` takes here and in an earlier commit (see cmd/devbench/import_time.py)."""

from devbench.import_time import main

if __name__ == "__main__":
    main()
