"""Precision and recall of the entity extractor on the hand-labelled sample (``data/entities-labelled.json``).

``python -m memini_bench.studies.entity_eval -locomo ../shared/data/locomo/locomo10.json``. Each sentence is our
own text (``source: ours``) or a LoCoMo turn referenced by item id (``source: locomo``: its text is read from the
LoCoMo file, as the loader builds it, date prefix and speaker included; without ``-locomo`` those are skipped) or a
memory of the quality scoreboard's corpus (``source: scoreboard``: our own templates, the text stored with its
memory id), the two kinds memini labelled for its published figures (``published.ENTITY_EXTRACTOR``).
Per sentence s with predicted keys P_s (``entities.extract``) and labelled keys G_s (exact key match):

    precision = sum |P_s ∩ G_s| / sum |P_s|      recall = sum |P_s ∩ G_s| / sum |G_s|      (micro-averaged)
    F1 = 2 P R / (P + R)

reported per source and overall, with every false positive and miss listed, and memini's published figures
beside the source they match (its own 30 LoCoMo turns and its own scoreboard templates: comparable kinds, not the
same sentences).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from memini_bench.core.settings import command, setting
from memini_bench.core.table import Cell, Column, Table, fmt_pct
from memini_bench.core.table import render as render_table
from memini_bench.errors import BenchError
from memini_bench.results.identity import claim, script_identity
from memini_bench.results.provenance import file_sha256, harness
from memini_bench.results.schema import study_document
from memini_bench.results.write import write_results_file
from memini_bench.studies import entities, published

LABELLED_PATH = Path(__file__).resolve().parents[2] / "data" / "entities-labelled.json"
SOURCES = ("locomo", "ours", "scoreboard")


@dataclass(frozen=True, slots=True)
class Labelled:
    id: str
    source: str
    text: str
    gold: tuple[str, ...]


def read_labelled(path: Path = LABELLED_PATH) -> list[dict]:
    try:
        doc = orjson.loads(Path(path).read_bytes())
    except (OSError, ValueError) as exc:
        raise BenchError(f"{path}: cannot read the labelled sample ({exc}); restore data/entities-labelled.json") \
            from None
    rows = doc.get("sentences") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not rows:
        raise BenchError(f"{path}: no 'sentences' list; see data/README.md for the shape")
    for i, row in enumerate(rows):
        ok = (isinstance(row, dict) and isinstance(row.get("id"), str) and row.get("source") in SOURCES
              and isinstance(row.get("entities"), list) and all(isinstance(e, str) for e in row["entities"])
              and (row["source"] == "locomo" or isinstance(row.get("text"), str)))
        if not ok:
            raise BenchError(f"{path}: sentences[{i}] needs id, source (locomo, ours or scoreboard), entities "
                             "(strings) and, but for LoCoMo turns, text")
    return rows


def resolve(rows: Sequence[dict], locomo_text: dict[str, str] | None) -> tuple[list[Labelled], int]:
    """The sentences with their text; LoCoMo ones need ``locomo_text`` (item id -> content). Returns (sentences,
    LoCoMo sentences skipped for want of the data)."""
    out, skipped = [], 0
    for row in rows:
        if row["source"] == "locomo":
            if locomo_text is None:
                skipped += 1
                continue
            if row["id"] not in locomo_text:
                raise BenchError(f"entities sample: LoCoMo item {row['id']!r} is not in the LoCoMo file; is -locomo "
                                 "the locomo10.json the sample was labelled on?")
            text = locomo_text[row["id"]]
        else:
            text = row["text"]
        out.append(Labelled(row["id"], row["source"], text, tuple(row["entities"])))
    return out, skipped


@dataclass(frozen=True, slots=True)
class PR:
    scope: str
    sentences: int
    predicted: int
    labelled: int
    correct: int
    precision: float
    recall: float
    f1: float


def score(sentences: Sequence[Labelled], scope: str, extract: Callable[[str], list[str]] = entities.extract) -> PR:
    predicted = labelled = correct = 0
    for s in sentences:
        pred, gold = set(extract(s.text)), set(s.gold)
        predicted, labelled, correct = predicted + len(pred), labelled + len(gold), correct + len(pred & gold)
    p = correct / predicted if predicted else 0.0
    r = correct / labelled if labelled else 0.0
    return PR(scope, len(sentences), predicted, labelled, correct, p, r, 2 * p * r / (p + r) if p + r else 0.0)


def errors(sentences: Sequence[Labelled], extract: Callable[[str], list[str]] = entities.extract) -> list[dict]:
    out = []
    for s in sentences:
        pred, gold = extract(s.text), set(s.gold)
        fp, miss = [e for e in pred if e not in gold], sorted(gold - set(pred))
        if fp or miss:
            out.append({"id": s.id, "false_positives": fp, "missed": miss})
    return out


def evaluate(sentences: Sequence[Labelled]) -> list[PR]:
    scopes = [score([s for s in sentences if s.source == src], src) for src in SOURCES
              if any(s.source == src for s in sentences)]
    return scopes + [score(sentences, "all")]


def render(doc: dict) -> str:
    out = [f"Entity extractor on the hand-labelled sample ({doc['config']['sentences']} sentences"
           + (f"; {doc['config']['skipped_locomo']} LoCoMo sentences skipped: no -locomo" if
              doc['config']['skipped_locomo'] else "") + ")", ""]
    cols = (Column("scope", "sentences", "left"), *(Column(key, key.replace("sentences", "n")) for key in (
        "sentences", "predicted", "labelled", "correct", "precision", "recall")), Column("f1", "F1"),
        Column("memini", "memini P / R (n)", "left"))
    body = []
    for r in doc["results"]:
        theirs = published.ENTITY_EXTRACTOR.get(r["scope"])
        memini = (f"{theirs[0]:.2f} / {theirs[1]:.2f}" + (f" ({theirs[2]})" if theirs[2] else "")) if theirs else "-"
        body.append((Cell(r["scope"], r["scope"]), *(Cell(r[key], str(r[key])) for key in (
            "sentences", "predicted", "labelled", "correct")), *(Cell(r[key], fmt_pct(r[key])) for key in (
                "precision", "recall", "f1")), Cell(theirs, memini)))
    out.append(render_table(Table(cols, tuple(body)), "md").rstrip("\n"))
    out += ["", "memini's figures are for its own hand-labelled LoCoMo turns and its own scoreboard templates (the "
            "same kinds of text, not the same sentences or labels); ours: one person labelled the sample and wrote "
            "the extractor, so they are optimistic."]
    return "\n".join(out) + "\n"


def display_path(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it (results files stay machine-independent)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run(locomo: str = "", labelled: Path = LABELLED_PATH) -> dict:
    locomo_text = None
    if locomo:
        from memini_bench.loaders import load

        locomo_text = {it.id: it.content for it in load("locomo", locomo).items}
    sentences, skipped = resolve(read_labelled(labelled), locomo_text)
    config = {"labelled": display_path(labelled), "labelled_sha256": file_sha256(labelled), "locomo": locomo,
              "sentences": len(sentences), "skipped_locomo": skipped, **harness()}
    return {"config": config, "results": [asdict(r) for r in evaluate(sentences)], "errors": errors(sentences)}


@dataclass(frozen=True)
class EntityEvalOptions:
    """The flags of ``python -m memini_bench.studies.entity_eval``."""

    locomo: str = setting("locomo", "", "LoCoMo locomo10.json, for the sample's LoCoMo turns (skipped without it).")
    labelled: str = setting("labelled", str(LABELLED_PATH), "The hand-labelled sample.")
    out: str = setting("out", "runs/entities.json", "The JSON results file.")
    no_write: bool = setting("no-write", False, "Print the table only.")


@command(EntityEvalOptions, name="entity_eval")
def entity_eval_command(args: EntityEvalOptions) -> None:
    """Precision and recall of the no-LLM entity extractor on the hand-labelled sample."""
    ident = script_identity("entity-eval", args, inputs=("locomo", "labelled"))
    path = None if args.no_write else claim(Path(args.out), ident)
    doc = run(args.locomo, Path(args.labelled))
    sys.stdout.write(render(doc))
    if path is not None:
        doc["config"]["identity"] = ident
        write_results_file(path, study_document(doc))
        print(f"wrote {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    from memini_bench.core.console import run_command

    run_command(entity_eval_command, argv, "entity_eval")


if __name__ == "__main__":
    main()
