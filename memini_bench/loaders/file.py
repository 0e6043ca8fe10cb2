"""The normalized file format (``-suite file``) and the built-in offline sample (``-suite sample``).

Schema: ``{"name": str, "items": [{"id", "content", "group"?, "session"?, "source"?, "time"?}],
"questions": [{"query", "gold": [ids], "id"?, "group"?, "answer"?, "category"?}]}``. ``time`` is an
optional RFC 3339 timestamp (beyond memini, whose file suite has no times). Item ids and question ids must be
unique and printable (``_json.check_id``); ``name`` names the results file and is made a safe file name (noted
when that changes it); a missing ``name`` is the file's stem.
"""

from __future__ import annotations

from pathlib import Path

from memini_bench.core.dataset import Dataset, Item, Question, Source, file_safe_name, finish
from memini_bench.loaders._json import (
    At,
    field_of,
    id_of,
    object_at,
    read_json_source,
    scalar_text,
    strings_of,
    text_of,
)
from memini_bench.loaders.dates import parse_iso

SAMPLE_PATH = Path(__file__).resolve().parents[1] / "data" / "sample.json"  # shipped in the wheel


def _name(doc: dict, source: str) -> tuple[str, tuple[str, ...]]:
    raw = text_of(doc, "name", At(source), required=False) or Path(source).stem
    safe = file_safe_name(raw)
    return safe, (() if safe == raw else (f"name {raw!r} is not a safe file name; results are named {safe!r}",))


def _items(raw_items: list, at: At) -> tuple[Item, ...]:
    items: list[Item] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_items):
        where = at / i
        object_at(raw, where)
        item_id = id_of(raw, "id", where)
        if item_id in seen:
            (where / "id").fail(f"duplicate item id {item_id!r} (also items[{seen[item_id]}]); ids must be unique")
        seen[item_id] = i
        time_text = text_of(raw, "time", where, required=False)
        items.append(Item(
            id=item_id, content=text_of(raw, "content", where),
            group=text_of(raw, "group", where, required=False),
            session=text_of(raw, "session", where, required=False),
            source=text_of(raw, "source", where, required=False),
            time=parse_iso(time_text, where / "time", "an RFC 3339 timestamp") if time_text else None,
        ))
    return tuple(items)


def _questions(raw_questions: list, at: At) -> tuple[Question, ...]:
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_questions):
        where = at / i
        object_at(raw, where)
        qid = id_of(raw, "id", where, required=False, default=f"q{i}")
        if qid in seen:
            (where / "id").fail(f"duplicate question id {qid!r} (also questions[{seen[qid]}]); ids must be unique")
        seen[qid] = i
        questions.append(Question(
            id=qid, query=text_of(raw, "query", where),
            gold=strings_of(raw, "gold", where, ids=True),
            group=text_of(raw, "group", where, required=False),
            answer=scalar_text(raw.get("answer")), category=scalar_text(raw.get("category")),
        ))
    return tuple(questions)


def parse_normalized(doc: object, source: str, read: Source | None = None) -> Dataset:
    """Build a Dataset from an already parsed normalized document; every problem names ``source`` and the path."""
    top = At(source)
    object_at(doc, top, "a JSON object with name, items and questions")
    name, notes = _name(doc, source)
    items = _items(field_of(doc, "items", list, top), top / "items")
    questions = _questions(field_of(doc, "questions", list, top), top / "questions")
    ds = Dataset(name=name, items=items, questions=questions, notes=notes, sources=(read,) if read else ())
    return finish(ds, source)


def load_file(path: str, **_: object) -> Dataset:
    """``-suite file``: the normalized schema; the results file is named after its ``name``."""
    doc, read = read_json_source(path, "file")
    return parse_normalized(doc, str(path), read)


def load_sample(path: str = "", **_: object) -> Dataset:
    """``-suite sample``: our own 10 engineering-team memories and 8 questions (``memini_bench/data/sample.json``,
    in the wheel)."""
    doc, read = read_json_source(path or SAMPLE_PATH, "sample")
    return parse_normalized(doc, str(path or SAMPLE_PATH), read)
