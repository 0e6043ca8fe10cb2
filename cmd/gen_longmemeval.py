"""Write a LongMemEval-S- or -M-shaped file from real sentences of the shared data (see cmd/devbench/synth.py).

    python cmd/gen_longmemeval.py -shape s -out /tmp/lme_s.json [-records 125] [-seed 0]
"""

import sys

from devbench.synth import main

if __name__ == "__main__":
    sys.exit(main())
