"""Reading rankings made elsewhere: TREC qrels, TREC run files and JSONL rankings (``memini-bench score``).

- TREC qrels: ``qid iter docid rel`` per line (any whitespace between columns); a document with ``rel > 0`` is
  gold (binary relevance, as trec_eval's default level 1); a question listed only with ``rel <= 0`` has no gold.
- TREC run: ``qid Q0 docid rank score tag`` per line; each question's documents are ordered as trec_eval orders
  them: by score descending, ties by docid descending (the rank column is not read, as trec_eval ignores it). One
  file holds one system: every line carries the same tag.
- JSONL rankings: one ``{"question_id": ..., "ranked_ids": [...]}`` object per line (the form LongMemEval's
  retrieval logs and several harnesses write), best first; optional ``"system"`` (the same on every line) and
  ``"data_sha256"`` (the SHA-256 of the data file the ranking was made from, checked against ``-data``).

Ids in TREC files are unescaped as ``results.write.trec_id`` escapes them (``%XX`` per UTF-8 byte, ``%`` alone is
the empty id), so ``-trec`` files read back to the run's own ids. Every problem is one ``BenchError`` naming the
file and line: a malformed line, a question listed twice (JSONL) or a document twice for one question (TREC), a
blank file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import orjson

from memini_bench.errors import BenchError

#: What the errors tell the user to pass.
RUN_HINT = ("pass a TREC run (qid Q0 docid rank score tag) or a JSONL of {question_id, ranked_ids} objects, one "
            "per line")


@dataclass(frozen=True)
class Rankings:
    """One system's rankings as read from ``path``: question id -> item ids, best first (in file order of the
    questions), the system's name (the TREC tag, the JSONL ``system``, else the file's stem), and the data file's
    SHA-256 when the file records it ("" otherwise)."""

    path: str
    system: str
    ranked: dict[str, tuple[str, ...]]
    data_sha256: str = ""
    form: str = "trec"
    lines: dict[str, int] = field(default_factory=dict, compare=False)


def _read_lines(path: str | Path, what: str) -> list[bytes]:
    p = Path(path)
    if p.is_dir():
        raise BenchError(f"{p}: is a directory; {what}")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise BenchError(f"{p}: no such file; {what}") from None
    except OSError as exc:
        raise BenchError(f"{p}: cannot read ({exc.strerror or exc}); {what}") from None
    lines = data.splitlines()
    if not any(line.strip() for line in lines):
        raise BenchError(f"{p}: no rankings in the file (it is blank); {what}")
    return lines


def trec_unescape(column: bytes, where: str) -> str:
    """One TREC column as the id ``trec_id`` escaped (``%`` alone is the empty id)."""
    try:
        text = column.decode("utf-8")
        if text == "%":
            return ""
        return unquote(text, errors="strict") if "%" in text else text
    except UnicodeDecodeError:
        raise BenchError(f"{where}: an id that is not UTF-8 text (or escapes bytes that are not); give UTF-8 "
                         "ids") from None


def _columns(line: bytes, n: int, where: str, shape: str) -> list[bytes]:
    cols = line.split()
    if len(cols) != n:
        raise BenchError(f"{where}: {len(cols)} columns, not {n}; a TREC {shape} line")
    return cols


def read_qrels(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Question id -> gold item ids (``rel > 0``, in file order) of a TREC qrels file; every question of the file
    is a key, one with no relevant document maps to ``()``."""
    hint = "pass a TREC qrels file (qid iter docid rel per line)"
    gold: dict[str, dict[str, None]] = {}
    for number, line in enumerate(_read_lines(path, hint), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        qid_col, _, doc_col, rel_col = _columns(line, 4, where, "qrels (qid iter docid rel)")
        try:
            rel = int(rel_col)
        except ValueError:
            raise BenchError(f"{where}: relevance {rel_col.decode(errors='replace')!r} is not an integer; "
                             f"{hint}") from None
        docs = gold.setdefault(trec_unescape(qid_col, where), {})
        doc = trec_unescape(doc_col, where)
        if rel > 0:
            docs[doc] = None
    return {qid: tuple(docs) for qid, docs in gold.items()}


def read_trec_run(path: str | Path, lines: list[bytes] | None = None) -> Rankings:
    """The rankings of one TREC run file (see the module docstring for the order)."""
    rows: dict[str, list[tuple[float, str]]] = {}
    seen: dict[tuple[str, str], int] = {}
    first: dict[str, int] = {}
    tags: set[str] = set()
    for number, line in enumerate(lines if lines is not None else _read_lines(path, RUN_HINT), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        qid_col, _, doc_col, _, score_col, tag_col = _columns(line, 6, where, "run (qid Q0 docid rank score tag)")
        try:
            score = float(score_col)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise BenchError(f"{where}: score {score_col.decode(errors='replace')!r} is not a finite number; "
                             f"{RUN_HINT}")
        qid, doc = trec_unescape(qid_col, where), trec_unescape(doc_col, where)
        if (qid, doc) in seen:
            raise BenchError(f"{where}: question {qid!r} ranks {doc!r} twice (also line {seen[qid, doc]}); a run "
                             "lists each document once per question")
        seen[qid, doc] = number
        first.setdefault(qid, number)
        tags.add(trec_unescape(tag_col, where))
        rows.setdefault(qid, []).append((score, doc))
    if len(tags) > 1:
        raise BenchError(f"{path}: holds {len(tags)} run tags ({', '.join(sorted(tags)[:3])}...); give each "
                         "system's run as its own -run file")
    ranked = {}
    for qid, docs in rows.items():
        # trec_eval's order: score descending, then docid descending (its comparison on equal scores)
        docs.sort(key=lambda sd: sd[1], reverse=True)
        docs.sort(key=lambda sd: sd[0], reverse=True)
        ranked[qid] = tuple(d for _, d in docs)
    return Rankings(path=str(path), system=tags.pop(), ranked=ranked, form="trec", lines=first)


def json_objects(lines: Iterable[bytes], where: str, hint: str) -> Iterator[tuple[int, str, dict]]:
    """Each non-blank line of a JSON Lines file as ``(line number, "<where>:<number>", object)``; a line that is
    not a JSON object is a BenchError naming it and ``hint``."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        at = f"{where}:{number}"
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise BenchError(f"{at}: not a JSON line; {hint}") from None
        if not isinstance(row, dict):
            raise BenchError(f"{at}: a JSON {type(row).__name__}, not an object; {hint}")
        yield number, at, row


def read_jsonl_rankings(path: str | Path, lines: list[bytes] | None = None) -> Rankings:
    """The rankings of one JSONL file of ``{question_id, ranked_ids}`` objects."""
    ranked: dict[str, tuple[str, ...]] = {}
    first: dict[str, int] = {}
    systems: set[str] = set()
    hashes: set[str] = set()
    for number, where, row in json_objects(lines if lines is not None else _read_lines(path, RUN_HINT), str(path),
                                           RUN_HINT):
        qid, ids = row.get("question_id"), row.get("ranked_ids")
        if not isinstance(qid, str):
            raise BenchError(f"{where}: field 'question_id' should be a string; {RUN_HINT}")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise BenchError(f"{where}: field 'ranked_ids' should be a list of item id strings, best first")
        if len(set(ids)) != len(ids):
            twice = next(i for n, i in enumerate(ids) if i in ids[:n])
            raise BenchError(f"{where}: question {qid!r} ranks {twice!r} twice; list each item once")
        if qid in ranked:
            raise BenchError(f"{where}: question {qid!r} appears twice (also line {first[qid]}); give each "
                             "question one ranking (two systems go in two -run files)")
        for key, into in (("system", systems), ("data_sha256", hashes)):
            value = row.get(key)
            if value is not None:
                if not isinstance(value, str) or not value:
                    raise BenchError(f"{where}: field {key!r} should be a non-empty string")
                into.add(value)
        ranked[qid], first[qid] = tuple(ids), number
    for key, values in (("system", systems), ("data_sha256", hashes)):
        if len(values) > 1:
            raise BenchError(f"{path}: field {key!r} differs between lines ({', '.join(sorted(values)[:2])}); one "
                             "file holds one system's run over one data file")
    return Rankings(path=str(path), system=systems.pop() if systems else Path(path).stem, ranked=ranked,
                    data_sha256=hashes.pop() if hashes else "", form="jsonl", lines=first)


def read_rankings(path: str | Path) -> Rankings:
    """A run file in either form: JSONL when its first non-blank line is a JSON object, else TREC (a TREC line is
    never one: six columns are not valid JSON)."""
    lines = _read_lines(path, RUN_HINT)
    head = next(line for line in lines if line.strip()).strip()
    try:
        jsonl = head.startswith(b"{") and isinstance(orjson.loads(head), dict)
    except orjson.JSONDecodeError:
        jsonl = False
    return read_jsonl_rankings(path, lines) if jsonl else read_trec_run(path, lines)
