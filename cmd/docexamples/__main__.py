"""``python cmd/list_examples.py``: the table of every example, its class and its command."""

from __future__ import annotations

import sys

from docexamples import classify, extract


def main(argv: list[str] | None = None) -> None:
    for ex in extract():
        print(f"{ex.where:28} {classify(ex):12} {ex.text}")
    counts: dict[str, int] = {}
    for ex in extract():
        counts[classify(ex)] = counts.get(classify(ex), 0) + 1
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
