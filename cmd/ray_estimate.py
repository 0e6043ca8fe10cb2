"""Measure -executor ray's embedding throughput here and estimate a LongMemEval-M run on a GPU cluster
(see memini_bench/bench/ray_estimate.py).

    python cmd/ray_estimate.py [--gpu-texts-per-s 1000] [--out results/bench/ray-estimate.json]
"""

import sys

from memini_bench.bench.ray_estimate import main

if __name__ == "__main__":
    sys.exit(main())
