"""`make gpu`: MiniLM texts/s and recall per precision and batch size on a CUDA GPU (see memini_bench/bench/gpu.py)."""

from memini_bench.bench.gpu import main

if __name__ == "__main__":
    main()
