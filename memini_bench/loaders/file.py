"""The normalized file format (``-suite file``) and the built-in offline sample (``-suite sample``).

Schema: ``{"name": str, "items": [{"id", "content", "group"?, "session"?, "source"?, "time"?}],
"questions": [{"query", "gold": [ids], "id"?, "group"?, "answer"?, "category"?}]}``. ``time`` is an
optional RFC 3339 timestamp (beyond memini, whose file suite has no times).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memini_bench.dataset import Dataset, Item, Question, check_not_empty
from memini_bench.errors import BenchError
from memini_bench.loaders._json import expect, field_of, read_json, scalar_text

SAMPLE_PATH = Path(__file__).resolve().parents[2] / "data" / "sample.json"


def _parse_time(text: str | None, where: str) -> datetime | None:
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BenchError(f"{where}: field 'time' is not an RFC 3339 timestamp: {text!r}") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def parse_normalized(doc: object, source: str) -> Dataset:
    """Build a Dataset from an already parsed normalized document; every problem names ``source`` and the path."""
    expect(isinstance(doc, dict), source, "expected a JSON object with name, items and questions")
    name = field_of(doc, "name", str, source, required=False, default="") or Path(source).stem
    raw_items = field_of(doc, "items", list, source)
    raw_questions = field_of(doc, "questions", list, source)
    items: list[Item] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_items):
        where = f"{source}: items[{i}]"
        item_id = field_of(raw, "id", str, where)
        expect(item_id not in seen, where, f"duplicate item id {item_id!r}; ids must be unique")
        seen.add(item_id)
        items.append(Item(
            id=item_id,
            content=field_of(raw, "content", str, where),
            group=field_of(raw, "group", str, where, required=False, default=""),
            session=field_of(raw, "session", str, where, required=False, default=""),
            source=field_of(raw, "source", str, where, required=False, default=""),
            time=_parse_time(field_of(raw, "time", str, where, required=False), where),
        ))
    questions: list[Question] = []
    unknown: list[str] = []
    for i, raw in enumerate(raw_questions):
        where = f"{source}: questions[{i}]"
        gold = field_of(raw, "gold", list, where)
        expect(all(isinstance(g, str) for g in gold), where, "field 'gold' should be a list of item ids")
        unknown.extend(g for g in gold if g not in seen)
        questions.append(Question(
            id=field_of(raw, "id", str, where, required=False, default=f"q{i}"),
            query=field_of(raw, "query", str, where),
            gold=tuple(gold),
            group=field_of(raw, "group", str, where, required=False, default=""),
            answer=scalar_text(raw.get("answer")),
            category=scalar_text(raw.get("category")),
        ))
    notes = (f"{len(unknown)} gold ids match no item (they can never be hit): {', '.join(unknown[:5])}",) \
        if unknown else ()
    return check_not_empty(Dataset(name=name, items=tuple(items), questions=tuple(questions), notes=notes), source)


def load_file(path: str, **_: object) -> Dataset:
    """``-suite file``: the normalized schema; the results file is named after its ``name``."""
    return parse_normalized(read_json(path, "file"), str(path))


def load_sample(path: str = "", **_: object) -> Dataset:
    """``-suite sample``: our own 10 engineering-team memories and 8 questions (``data/sample.json``)."""
    return parse_normalized(read_json(path or SAMPLE_PATH, "sample"), str(path or SAMPLE_PATH))
