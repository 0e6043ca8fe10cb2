"""Measure -executor ray's embedding throughput here and estimate a LongMemEval-M run on a GPU cluster
(see cmd/devbench/ray_estimate.py).

    python cmd/ray_estimate.py [--gpu-texts-per-s 1000] [--out results/bench/ray-estimate.json]
"""

import sys

from devbench.ray_estimate import main

if __name__ == "__main__":
    sys.exit(main())
