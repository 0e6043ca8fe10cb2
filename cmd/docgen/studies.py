"""The studies' sections of docs/memini/studies.md, generated from the committed results files (never typed by hand):
``cd cmd && python -m docgen.studies [results]`` prints them; ``sections(results_dir)`` returns the markdown.
Each section names the command that made its file; a section whose file is absent is left out.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import orjson

from memini_bench.loaders import poison
from memini_bench.studies import bridge, contradiction, entity_eval, multihop

LOCOMO = "../shared/data/locomo/locomo10.json"
LME = "../shared/data/longmemeval/longmemeval_oracle_sample97.json"
STUDIES: tuple[tuple[str, str, str, Callable[[dict], str]], ...] = (
    ("Multi-hop retrieval ceiling", "locomo-multihop.json",
     f"python -m memini_bench -suite locomo -data {LOCOMO} -multihop", multihop.render),
    ("Entity extraction", "entities.json", f"python -m memini_bench.studies.entity_eval -locomo {LOCOMO}",
     entity_eval.render),
    ("Entity bridge", "locomo-multihop-entity-bridge.json",
     f"python -m memini_bench -suite locomo -data {LOCOMO} -entity-bridge", bridge.render),
    ("Contradiction detection", "contradiction.json",
     f"python -m memini_bench.studies.contradiction -embedders hash,minilm -locomo {LOCOMO} -lme {LME}",
     contradiction.render),
)
POISON = ("locomo.json", "locomo-poisoned.json", f"python -m memini_bench -suite locomo -data {LOCOMO} -k 5,10 "
          "-poison 50")


def _read(path: Path) -> dict:
    return orjson.loads(path.read_bytes())


def rendered(results_dir: Path, specs) -> list[str]:
    """Each ``(title, file, command, render)`` of ``specs`` whose results file is committed, as a section with
    its command."""
    return [f"### {title}\n\n`{command}`\n\n{render(_read(results_dir / name))}"
            for title, name, command, render in specs if (results_dir / name).exists()]


def sections(results_dir: Path) -> str:
    out = rendered(results_dir, STUDIES)
    clean, poisoned, command = POISON
    if (results_dir / clean).exists() and (results_dir / poisoned).exists():
        out.append(f"### Poison\n\n`{command}`\n\n"
                   f"{poison.render(_read(results_dir / clean), _read(results_dir / poisoned))}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.write(sections(Path(args[0] if args else "results")))


if __name__ == "__main__":
    main()
