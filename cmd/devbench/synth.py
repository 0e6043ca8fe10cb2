"""LongMemEval-shaped files at any scale, from real sentences of the shared data sets (``cmd/gen_longmemeval.py``).

The published LongMemEval_S (277 MB) and _M (2.7 GB) files are too large to keep; this writes files of their
shape so that loading, indexing and recall can be measured at their scale. Shape (LongMemEval's record format):

- ``records`` questions, each with ``sessions`` haystack sessions (``-S``: 500 x 48; ``-M``: 500 x 500).
- Each record's ``evidence`` (1-3) answer sessions are its own (ids ``answer_<hex>``); the other sessions are
  drawn without repeats inside the record from one shared ``pool`` of filler sessions (ids ``sharegpt_<hex>_0``),
  so a filler session recurs across records with the same text, as in the real files. A pool of 50,000 gives
  about 19.6k distinct texts at S (24k session slots) and about 50k at M (250k slots).
- A session is ``turns`` user/assistant turns adding up to about ``session_chars`` characters (uniform in
  [0.5, 1.5] x that), each turn a run of real sentences. Questions, answers and question types are real
  LongMemEval ones; dates are LongMemEval's ``2023/05/30 (Tue) 23:40`` format, ascending within a haystack.

Sentences come from LoCoMo's turns and the LongMemEval sample files (split after ``. ! ?``). Everything is a
function of ``seed``: a session's text depends only on (seed, its id), so the same pool session has the same
text wherever it appears, and the file is written record by record (memory stays small at any scale).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from memini_bench.core.console import run_command
from memini_bench.core.settings import Int, command, setting
from memini_bench.errors import BenchError

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
LOCOMO_FILE = "locomo/locomo10.json"
LME_FILES = ("longmemeval/longmemeval_oracle_sample97.json", "longmemeval/longmemeval_s_single.json",
             "longmemeval/longmemeval_oracle_examples.json")
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"


@dataclass(frozen=True)
class Shape:
    """What to generate (see the module docstring)."""

    records: int = 500
    sessions: int = 48
    session_chars: int = 10_000
    pool: int = 50_000
    turns: int = 10
    seed: int = 0


SHAPES = {"s": Shape(), "m": Shape(sessions=500)}


@dataclass(frozen=True)
class Source:
    """The real text the generator draws from."""

    sentences: tuple[str, ...]
    questions: tuple[tuple[str, str, str], ...]  # (question, answer, question_type)


def load_source(data_dir: str | Path) -> Source:
    """Sentences and questions from the shared data sets under ``data_dir`` (``.../shared/data``)."""
    root = Path(data_dir)
    texts: list[str] = []
    questions: list[tuple[str, str, str]] = []
    locomo = root / LOCOMO_FILE
    if not locomo.exists():
        raise BenchError(f"{locomo}: no such file; pass the shared data folder (holding locomo/ and longmemeval/)")
    for conv in json.loads(locomo.read_text(encoding="utf-8")):
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                texts.extend(str(t.get("text", "")) for t in turns)
    for name in LME_FILES:
        path = root / name
        if not path.exists():
            continue
        for rec in json.loads(path.read_text(encoding="utf-8")):
            questions.append((str(rec["question"]), str(rec.get("answer", "")), str(rec.get("question_type", ""))))
            texts.extend(str(turn.get("content", "")) for session in rec["haystack_sessions"] for turn in session)
    sentences = sorted({s.strip() for t in texts for s in _SENTENCE_END.split(t) if 20 <= len(s.strip()) <= 400})
    if not sentences or not questions:
        raise BenchError(f"{root}: found no LongMemEval questions or sentences; pass the shared data folder")
    return Source(tuple(sentences), tuple(questions))


def _rng(seed: int, *parts: object) -> random.Random:
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def session_turns(source: Source, shape: Shape, session_id: str) -> list[dict[str, str]]:
    """The turns of one session: a function of (seed, id) alone."""
    rng = _rng(shape.seed, "session", session_id)
    target = rng.uniform(0.5, 1.5) * shape.session_chars
    n_turns = max(2, round(rng.uniform(0.6, 1.4) * shape.turns))
    turns = []
    for j in range(n_turns):
        role = "user" if j % 2 == 0 else "assistant"
        budget = target / n_turns * (0.5 if role == "user" else 1.5)
        parts: list[str] = []
        size = 0
        while size < budget:
            sentence = rng.choice(source.sentences)
            parts.append(sentence)
            size += len(sentence) + 1
        turns.append({"role": role, "content": " ".join(parts)})
    return turns


def records(source: Source, shape: Shape) -> Iterator[dict[str, object]]:
    """The records, one at a time."""
    start = datetime(2023, 1, 1, tzinfo=UTC)
    for i in range(shape.records):
        rng = _rng(shape.seed, "record", i)
        qid = f"{rng.getrandbits(32):08x}" + ("_abs" if rng.random() < 0.06 else "")
        question, answer, qtype = rng.choice(source.questions)
        evidence = [f"answer_{rng.getrandbits(32):08x}_{e}" for e in range(rng.randint(1, 3))]
        filler_count = max(0, shape.sessions - len(evidence))
        filler = [f"sharegpt_{p:08x}_0" for p in rng.sample(range(shape.pool), min(filler_count, shape.pool))]
        ids = filler + evidence
        rng.shuffle(ids)
        when = sorted(start + timedelta(minutes=rng.randrange(0, 365 * 24 * 60)) for _ in ids)
        asked = when[-1] + timedelta(days=rng.randint(1, 30)) if when else start
        yield {
            "question_id": qid, "question_type": qtype, "question": question,
            "question_date": asked.strftime(DATE_FORMAT), "answer": answer, "answer_session_ids": evidence,
            "haystack_dates": [w.strftime(DATE_FORMAT) for w in when], "haystack_session_ids": ids,
            "haystack_sessions": [session_turns(source, shape, sid) for sid in ids],
        }


def write(path: str | Path, source: Source, shape: Shape) -> int:
    """Write the file (a JSON array, one record per line); returns its size in bytes."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("[")
        for n, rec in enumerate(records(source, shape)):
            f.write(",\n" if n else "\n")
            f.write(json.dumps(rec, ensure_ascii=False))
        f.write("\n]\n")
    tmp.replace(out)
    return out.stat().st_size


@dataclass(frozen=True)
class GenerateOptions:
    """The flags of ``cmd/gen_longmemeval.py``: the shape, its overrides (0 = the shape's own) and the output."""

    shape: str = setting("shape", "s", "s: 500 x 48 sessions; m: 500 x 500", type=click.Choice(sorted(SHAPES)))
    out: str = setting("out", "", "the file to write (required)")
    data: str = setting("data", "../shared/data", "the shared data folder (locomo/, longmemeval/)")
    records: int = setting("records", 0, "override the shape's records (0 = the shape's)", type=Int(min=0))
    sessions: int = setting("sessions", 0, "override the shape's sessions per record", type=Int(min=0))
    session_chars: int = setting("session-chars", 0, "override the shape's characters per session", type=Int(min=0))
    pool: int = setting("pool", 0, "override the shape's pool of distinct sessions", type=Int(min=0))
    turns: int = setting("turns", 0, "override the shape's turns per session", type=Int(min=0))
    seed: int = setting("seed", -1, "override the shape's seed (-1 = the shape's)", type=Int(min=-1))


@command(GenerateOptions, name="gen-longmemeval")
def generate_command(args: GenerateOptions) -> int:
    """Write a LongMemEval-S- or -M-shaped file from real sentences of the shared data."""
    if not args.out:
        raise BenchError("-out: give the file to write")
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(Shape)
                 if getattr(args, f.name) != (-1 if f.name == "seed" else 0)}
    shape = dataclasses.replace(SHAPES[args.shape], **overrides)
    t = time.perf_counter()
    size = write(args.out, load_source(args.data), shape)
    print(f"wrote {args.out}: {size / 1e6:.1f} MB, {shape.records} records x {shape.sessions} sessions "
          f"(pool {shape.pool}, seed {shape.seed}) in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int | None:
    """``cmd/gen_longmemeval.py``, with the CLI's one-line errors (exit 2 for bad input)."""
    return run_command(generate_command, argv, "gen_longmemeval")
