"""`make speed`: the speed benchmarks (see memini_bench/bench/speed.py)."""

from memini_bench.bench.speed import main

if __name__ == "__main__":
    main()
