"""`make embed-throughput`: local embedders' texts per CPU-second (memini_bench/bench/embed_throughput.py)."""

from devbench.embed_throughput import main

if __name__ == "__main__":
    main()
