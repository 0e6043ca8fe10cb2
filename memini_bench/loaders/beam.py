"""BEAM (arXiv 2510.27246, github.com/mohammadtavakoli78/BEAM): long chats and their probing questions.

The upstream layout, per tier (``chats/100K``, ``500K``, ``1M``, ``10M``): one numbered folder per chat holding
``chat.json`` (and, for some chats, ``chat_trunecated.json``, upstream's spelling, which BEAM's own
``answer_generation.py`` reads instead when present; so does this loader) and
``probing_questions/probing_questions.json``. ``-data`` is a tier folder (every numbered chat, in numeric order)
or one chat folder.

``chat.json`` is a list of batches ``{batch_number, time_anchor, turns: [[message, ...], ...]}``; a message is
``{role, id, content}`` (user messages may add ``time_anchor``, ``index``, ``question_type``). The 10M tier's chats,
as BEAM's ``download_dataset.py`` combines them, are a list of ``{"plan-<n>": [batch, ...]}`` objects: both shapes
are read. ``probing_questions.json`` maps each of the ten ability types (``abstention``, ``contradiction_resolution``,
``event_ordering``, ``information_extraction``, ``instruction_following``, ``knowledge_update``,
``multi_session_reasoning``, ``preference_following``, ``summarization``, ``temporal_reasoning``) to a list of
questions whose ``source_chat_ids`` name the messages holding the evidence: a list of ids, or an object of lists
(``first_statement``/``second_statement``, ``original_info``/``updated_info``, ``first_event``/``second_event``),
lists sometimes nested; every id found is gold.

Here: group = the chat folder's name, one item per message with id ``<chat>/<message id>``, content
``<role>: <content>`` (the text as BEAM's RAG baselines index it, its ``->-> b,t`` markers included), time = the
latest ``time_anchor`` seen so far in the chat (``March-15-2024``), question ``now`` = the chat's last anchor.
Category = the ability type. A question with no source id (every abstention question: its answer is that the chat
does not say) or whose ids name no message of the chat is not scored; both are counted in the notes, as are gold ids
that name no message (dropped from a question that keeps others) and message ids repeated within a chat (the first
is kept).
"""

from __future__ import annotations

import os
from collections import Counter
from datetime import datetime
from pathlib import Path

from memini_bench.core.dataset import Dataset, Item, Question, Source, finish
from memini_bench.errors import BenchError
from memini_bench.loaders._json import At, field_of, object_at, read_json_source, scalar_text, text_of, value_of
from memini_bench.loaders.dates import parse_layout

ABILITIES = {
    "abstention": "Abstention", "contradiction_resolution": "Contradiction Resolution",
    "event_ordering": "Event Ordering", "information_extraction": "Information Extraction",
    "instruction_following": "Instruction Following", "knowledge_update": "Knowledge Update",
    "multi_session_reasoning": "Multi-Session Reasoning", "preference_following": "Preference Following",
    "summarization": "Summarization", "temporal_reasoning": "Temporal Reasoning",
}
CHAT_FILES = ("chat_trunecated.json", "chat.json")  # BEAM's answer_generation.py prefers the truncated chat
QUESTIONS_FILE = os.path.join("probing_questions", "probing_questions.json")
_ANSWER_KEYS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")


def parse_anchor(text: str) -> datetime | None:
    """``March-15-2024`` as UTC midnight; None when it does not parse."""
    return parse_layout(text, "%B-%d-%Y")


def chat_folders(path: str) -> list[Path]:
    """The chat folders under ``path``: itself when it holds a chat file, else its numbered subfolders."""
    root = Path(path)
    if not root.is_dir():
        raise BenchError(f"{path}: not a folder; -suite beam wants a BEAM tier folder (chats/100K) or one chat folder")
    if any((root / name).is_file() for name in CHAT_FILES):
        return [root]
    chats = sorted((p for p in root.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name))
    if not chats:
        raise BenchError(f"{path}: holds neither chat.json nor numbered chat folders; pass a BEAM tier folder "
                         "(chats/100K) or one chat folder")
    return chats


def _batches(doc: object, at: At) -> list[tuple[object, At]]:
    """The batches of a chat, flattening the 10M tier's ``[{"plan-<n>": [batch, ...]}, ...]``."""
    value_of(doc, list, at)
    out = []
    for b, batch in enumerate(doc):
        object_at(batch, at / b, "a batch object with turns")
        if "turns" not in batch and len(batch) == 1 and next(iter(batch)).startswith("plan-"):
            key, plan = next(iter(batch.items()))
            out += [(inner, at / b / key / j) for j, inner in enumerate(value_of(plan, list, at / b / key))]
        else:
            out.append((batch, at / b))
    return out


def _messages(doc: object, at: At) -> list[tuple[int, str, str, str, At]]:
    """Every message as (id, role, content, time_anchor, place), in file order."""
    out = []
    for batch, bat in _batches(doc, at):
        object_at(batch, bat, "a batch object with turns")
        for t, turn in enumerate(field_of(batch, "turns", list, bat)):
            for m, msg in enumerate(value_of(turn, list, bat / "turns" / t)):
                mat = bat / "turns" / t / m
                object_at(msg, mat, "a message object with role, id and content")
                mid = field_of(msg, "id", int, mat)
                out.append((mid, text_of(msg, "role", mat, required=False), text_of(msg, "content", mat),
                            scalar_text(msg.get("time_anchor")), mat))
    return out


def _source_ids(value: object, at: At) -> list[int]:
    """Every message id in a ``source_chat_ids`` value (a number, a list, an object of lists, nested)."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [i for key, v in value.items() for i in _source_ids(v, at / key)]
    if isinstance(value, list):
        return [i for j, v in enumerate(value) for i in _source_ids(v, at / j)]
    return [value_of(value, int, at)]


class _Tally:
    def __init__(self) -> None:
        self.no_source: Counter = Counter()
        self.unresolved: Counter = Counter()
        self.dropped_ids = 0
        self.repeated: list[str] = []

    def notes(self) -> tuple[str, ...]:
        out = []
        for counter, why in ((self.no_source, "with no source_chat_ids (not scored)"),
                             (self.unresolved, "whose source_chat_ids name no message of their chat (not scored)")):
            if counter:
                cats = ", ".join(f"{c}: {n}" for c, n in sorted(counter.items()))
                out.append(f"skipped {sum(counter.values())} questions {why} ({cats})")
        if self.dropped_ids:
            out.append(f"{self.dropped_ids} source_chat_ids name no message of their chat and were dropped from "
                       "questions that keep other gold ids")
        if self.repeated:
            out.append(f"{len(self.repeated)} messages repeat an earlier id of their chat and were dropped (the first "
                       f"is kept): {', '.join(self.repeated[:5])}")
        return tuple(out)


def _chat(folder: Path, tally: _Tally, sources: list[Source]) -> tuple[list[Item], list[Question]]:
    group = folder.name
    chat_path = next((folder / n for n in CHAT_FILES if (folder / n).is_file()), folder / CHAT_FILES[-1])
    doc, read = read_json_source(chat_path, "beam")
    sources.append(read)
    items: list[Item] = []
    seen: set[int] = set()
    when: datetime | None = None
    for mid, role, content, anchor, _ in _messages(doc, At(str(chat_path))):
        when = (parse_anchor(anchor) or when) if anchor else when
        if mid in seen:
            tally.repeated.append(f"{group}/{mid}")
            continue
        seen.add(mid)
        items.append(Item(id=f"{group}/{mid}", content=f"{role}: {content}" if role else content, group=group,
                          time=when, session=group))
    qpath = folder / QUESTIONS_FILE
    probing, qread = read_json_source(qpath, "beam")
    sources.append(qread)
    qat = At(str(qpath))
    object_at(probing, qat, "an object of ability type -> [question, ...]")
    questions: list[Question] = []
    for ability, entries in probing.items():
        for j, q in enumerate(value_of(entries, list, qat / ability)):
            at = qat / ability / j
            object_at(q, at, "a probing question object")
            ids = list(dict.fromkeys(_source_ids(q.get("source_chat_ids"), at / "source_chat_ids")))
            if not ids:
                tally.no_source[ability] += 1
                continue
            known = [i for i in ids if i in seen]
            if not known:
                tally.unresolved[ability] += 1
                continue
            tally.dropped_ids += len(ids) - len(known)
            answer = next((q[k] for k in _ANSWER_KEYS if q.get(k) is not None), "")
            questions.append(Question(id=f"{group}/{ability}/{j}", query=text_of(q, "question", at),
                                      gold=tuple(f"{group}/{i}" for i in known), group=group,
                                      answer=answer if isinstance(answer, str) else scalar_text(answer),
                                      category=ability, now=when))
    return items, questions


def load_beam(path: str) -> Dataset:
    """A BEAM tier folder (or one chat folder) as a Dataset (module docstring)."""
    if not path:
        raise BenchError("-suite beam needs -data PATH (a BEAM tier folder such as chats/100K, or a registered name)")
    folders = chat_folders(path)
    tally = _Tally()
    sources: list[Source] = []
    items: list[Item] = []
    questions: list[Question] = []
    for folder in folders:
        more_items, more_questions = _chat(folder, tally, sources)
        items += more_items
        questions += more_questions
    name = Path(path).resolve().name.lower()  # chats/100K -> beam-100k; a fetched set's folder is beam-100k already
    name = (name if name.startswith("beam") else f"beam-{name}") if len(folders) > 1 else f"beam-chat-{name}"
    notes = (f"{len(folders)} chats, {len(items)} messages, {len(questions)} scored questions",) + tally.notes()
    ds = Dataset(name=name, items=tuple(items), questions=tuple(questions), notes=notes,
                 category_labels={k: v for k, v in ABILITIES.items()}, sources=tuple(sources))
    return finish(ds, path)
