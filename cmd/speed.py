"""`make speed`: the speed benchmarks (see cmd/devbench/speed.py)."""

from devbench.speed import main

if __name__ == "__main__":
    main()
