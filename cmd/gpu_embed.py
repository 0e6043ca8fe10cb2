"""`make gpu`: MiniLM texts/s and recall per precision and batch size on a CUDA GPU (see cmd/devbench/gpu.py)."""

from devbench.gpu import main

if __name__ == "__main__":
    main()
