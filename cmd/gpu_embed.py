"""`make gpu`: MiniLM texts/s and recall per precision and batch size on a CUDA GPU (see memini_bench/gpu_embed.py)."""

from memini_bench.gpu_embed import main

if __name__ == "__main__":
    main()
