"""How long `import memini_bench.cli` takes here and in an earlier commit (see cmd/devbench/import_time.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the package, when it is not installed

from devbench.import_time import main  # noqa: E402

if __name__ == "__main__":
    main()
