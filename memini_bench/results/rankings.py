"""Reading rankings made elsewhere: TREC qrels, TREC run files and JSONL rankings (``memini-bench score``).

- TREC qrels: ``qid iter docid rel`` per line (any whitespace between columns); a document with ``rel > 0`` is
  gold, and its grade is ``rel`` (graded relevance: nDCG's gains, a metric's ``rel=`` level; the binary metrics
  count every ``rel >= 1``, trec_eval's default level 1); a document listed with ``rel <= 0`` is judged not
  relevant (grade 0); a question listed only with ``rel <= 0`` has no gold. A document listed twice for one
  question with two different grades is refused (trec_eval would keep one of them silently); listed twice with
  the same grade, it is read once.
- TREC run: ``qid Q0 docid rank score tag`` per line; each question's documents are ordered as trec_eval orders
  them: by score descending, ties by docid descending, comparing the docid column as written (its bytes, before
  any ``%XX`` unescaping, as trec_eval's ``strcmp``); the rank column is not read, as trec_eval ignores it. One
  file holds one system: every line carries the same tag. A document listed twice for one question is refused
  (as trec_eval refuses it).
- JSONL rankings: one ``{"question_id": ..., "ranked_ids": [...]}`` object per line (the form LongMemEval's
  retrieval logs and several harnesses write), best first; optional ``"system"`` (the same on every line) and
  ``"data_sha256"`` (the SHA-256 of the data file the ranking was made from, checked against ``-data``).

Ids in TREC files are unescaped as ``results.write.trec_id`` escapes them (``%XX`` per UTF-8 byte, ``%`` alone is
the empty id), so ``-trec`` files read back to the run's own ids. A UTF-8 byte-order mark at the start of a file is
skipped (it is not part of the first question's id); a UTF-16 file is refused. Only regular files are read: a
FIFO, a device (``/dev/zero``) or a socket is refused before any byte is read, so nothing blocks or reads without
end. Every problem is one ``BenchError`` naming the file and line: a malformed line, a question listed twice
(JSONL) or a document twice for one question (TREC), a blank file.
"""

from __future__ import annotations

import math
import os
import stat
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


#: A UTF-8 byte-order mark (skipped) and the UTF-16 ones (refused).
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | Path, what: str) -> bytes:
    """The bytes of ``path``, a regular file; a directory, a missing file, a FIFO, a device or a socket is one
    BenchError naming the file and ``what`` to pass (checked with ``stat`` before opening: opening a FIFO would
    block, and reading ``/dev/zero`` would never end)."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise BenchError(f"{p}: no such file; {what}") from None
    except OSError as exc:
        raise BenchError(f"{p}: cannot read ({exc.strerror or exc}); {what}") from None
    if stat.S_ISDIR(mode):
        raise BenchError(f"{p}: is a directory; {what}")
    if not stat.S_ISREG(mode):
        raise BenchError(f"{p}: is {_kind(mode)}, not a regular file; write it to a file first, then {what}")
    try:
        with open(p, "rb") as f:  # O_NONBLOCK is moot: a regular file
            return f.read()
    except OSError as exc:
        raise BenchError(f"{p}: cannot read ({exc.strerror or exc}); {what}") from None


def _read_lines(path: str | Path, what: str) -> list[bytes]:
    p = Path(path)
    data = read_regular(p, what)
    if data.startswith(UTF16_BOMS):
        raise BenchError(f"{p}: is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8, then "
                         f"{what}")
    lines = data.removeprefix(UTF8_BOM).splitlines()
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


def read_judgements(path: str | Path) -> dict[str, dict[str, int]]:
    """Question id -> {document id: grade} of a TREC qrels file, in file order: ``rel`` for a relevant document,
    0 for one judged not relevant (``rel <= 0``); every question of the file is a key. A document listed twice
    for one question with two different grades is refused, naming both lines."""
    hint = "pass a TREC qrels file (qid iter docid rel per line)"
    judged: dict[str, dict[str, int]] = {}
    where_of: dict[tuple[str, str], int] = {}
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
        qid, doc = trec_unescape(qid_col, where), trec_unescape(doc_col, where)
        docs = judged.setdefault(qid, {})
        grade = max(rel, 0)
        if doc in docs and docs[doc] != grade:
            raise BenchError(f"{where}: question {qid!r} grades {doc!r} {rel}, but line {where_of[qid, doc]} "
                             f"grades it {docs[doc]}; keep one line per question and document")
        docs[doc] = grade
        where_of.setdefault((qid, doc), number)
    return judged


def read_qrels(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Question id -> gold item ids (``rel > 0``, in file order) of a TREC qrels file (``read_judgements``); every
    question of the file is a key, one with no relevant document maps to ``()``."""
    return {qid: tuple(d for d, g in docs.items() if g > 0) for qid, docs in read_judgements(path).items()}


def read_trec_run(path: str | Path, lines: list[bytes] | None = None) -> Rankings:
    """The rankings of one TREC run file (see the module docstring for the order)."""
    rows: dict[str, list[tuple[float, bytes, str]]] = {}
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
        rows.setdefault(qid, []).append((score, doc_col, doc))
    if len(tags) > 1:
        raise BenchError(f"{path}: holds {len(tags)} run tags ({', '.join(sorted(tags)[:3])}...); give each "
                         "system's run as its own -run file")
    ranked = {}
    for qid, docs in rows.items():
        # trec_eval's order: score descending, then the docid column as written descending (its strcmp)
        docs.sort(key=lambda sd: sd[1], reverse=True)
        docs.sort(key=lambda sd: sd[0], reverse=True)
        ranked[qid] = tuple(d for _, _, d in docs)
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
    """A run file in either form: JSONL when its first non-blank line is JSON, or starts like JSON (``{`` or
    ``[``) without being a six-column TREC line (a question id may start with ``{``); else TREC. So a JSONL file
    whose first line does not parse is refused as JSONL, naming the line, not read as a TREC run."""
    lines = _read_lines(path, RUN_HINT)
    head = next(line for line in lines if line.strip()).strip()
    try:
        orjson.loads(head)
        jsonl = True
    except orjson.JSONDecodeError:
        jsonl = head.startswith((b"{", b"[")) and len(head.split()) != 6
    return read_jsonl_rankings(path, lines) if jsonl else read_trec_run(path, lines)
