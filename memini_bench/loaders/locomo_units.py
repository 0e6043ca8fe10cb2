"""LoCoMo's other retrieval units (``-suite locomo -unit observation|summary``) and the evidence distance.

LoCoMo's RAG evaluation (snap-research/LoCoMo ``task_eval/gpt_utils.py`` ``get_rag_context`` and
``task_eval/evaluation.py`` ``eval_question_answering``) retrieves over one of three databases: dialog turns,
*observations* (``observation.session_<n>_observation`` = ``{speaker: [[fact, dia_id], ...]}``) or *session
summaries* (``session_summary.session_<n>_summary``), and credits a retrieved unit through dialogue ids:

- observation: the unit stands for its ``dia_id`` (a string, a comma-separated string or a list of ids, as upstream
  splits it); an evidence id is found when a retrieved observation carries it;
- summary: the unit stands for its session (``S<n>``); an evidence id ``D<n>:<m>`` is found when session n's
  summary is retrieved.

Here: one item per observation (id ``<sample_id>/session_<n>/obs<j>``, j counting the session's facts in file order,
content ``[<session date>] <fact>``) or per summary (id ``<sample_id>/session_<n>/summary``, content ``[<date>]
<summary>``), time = the session date. Gold = the units that carry at least one of the question's evidence ids
(recall_any@K is then LoCoMo's "some evidence retrieved"). Each question's ``meta["evidence"]`` holds its evidence
keys and each item's ``meta["covers"]`` the keys it stands for, so the run also reports LoCoMo's own recall: the
mean over questions of the fraction of evidence keys covered by the top K units (``evaluation.evidence``).

A question with no ``D<n>:<m>`` evidence id is skipped (as at turn level); one whose evidence no unit carries (LoCoMo's
observations cover only part of the dialogue) is kept with no gold, a miss, as LoCoMo's recall scores it 0; both
are counted in the notes.

Evidence distance (every LoCoMo unit): ``meta["evidence_distance"]`` = the conversation's last session number minus
the earliest session its evidence names (0 = the evidence is in the last session, the one right before the
question). LoCoMo's ``evaluation_stats.py`` buckets by the farthest evidence's position in thousands of characters
instead; sessions are the unit a memory system's users think in.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from memini_bench.core.dataset import Dataset, Item, Question, finish
from memini_bench.errors import BenchError
from memini_bench.loaders._json import At, field_of, object_at, value_of
from memini_bench.loaders.locomo import (
    _DIA_SESSION,
    CATEGORY_LABELS,
    _Conversation,
    _conversations,
    _evidence_ids,
    _Faults,
    _qa,
    _question,
    _skip_note,
    distance_meta,
    parse_locomo_date,
    session_key,
)

UNITS = ("turn", "observation", "summary")
EVIDENCE = "evidence"
COVERS = "covers"


def _dia_ids(value: object, at: At) -> tuple[str, ...]:
    """An observation's dialogue ids: a string (maybe ``"D1:3, D1:5"``) or a list of strings, as upstream splits."""
    if isinstance(value, list):
        return tuple(s.strip() for j, v in enumerate(value) for s in value_of(v, str, at / j).split(",") if s.strip())
    return tuple(s.strip() for s in value_of(value, str, at).split(",") if s.strip())


def _unit(conv: _Conversation, key: str, date: str, when: object, suffix: str, text: str,
          covers: tuple[str, ...]) -> Item:
    return Item(id=f"{conv.group}/{key}/{suffix}", content=f"[{date}] {text}" if date else text, group=conv.group,
                time=when, session=f"{conv.group}/{key}", meta=((COVERS, covers),))  # type: ignore[arg-type]


def _observation_items(conv: _Conversation, when_of: dict, at: At) -> list[Item]:
    obs = field_of(conv.row, "observation", dict, at, required=False, default={})
    items = []
    for key, date, _turns in conv.sessions:
        facts = obs.get(f"{key}_observation")
        if facts is None:
            continue
        fat = at / "observation" / f"{key}_observation"
        object_at(facts, fat, "an object of speaker -> [[fact, dia_id], ...]")
        entries = [(fat / speaker / e, entry) for speaker, listed in facts.items()
                   for e, entry in enumerate(value_of(listed, list, fat / speaker))]
        for j, (eat, entry) in enumerate(entries):
            if len(value_of(entry, list, eat)) < 2:
                eat.fail("expected [fact, dia_id]")
            items.append(_unit(conv, key, date, when_of[key], f"obs{j}", value_of(entry[0], str, eat / 0),
                               _dia_ids(entry[1], eat / 1)))
    return items


def _summary_items(conv: _Conversation, when_of: dict, at: At) -> list[Item]:
    summaries = field_of(conv.row, "session_summary", dict, at, required=False, default={})
    return [_unit(conv, key, date, when_of[key], "summary",
                  value_of(summaries[f"{key}_summary"], str, at / "session_summary" / f"{key}_summary"),
                  (session_key(key.rsplit("_", 1)[1]),))
            for key, date, _turns in conv.sessions if summaries.get(f"{key}_summary") is not None]


def load_locomo_unit(path: str, unit: str) -> Dataset:
    """``locomo10.json`` with observations or session summaries as the items (module docstring)."""
    if unit not in UNITS[1:]:
        raise BenchError(f"-unit {unit!r}: unknown; use one of {', '.join(UNITS)}")
    faults = _Faults()
    conversations, read = _conversations(path, f"locomo-{unit}", faults)
    items: list[Item] = []
    questions: list[Question] = []
    no_evidence: Counter = Counter()
    uncovered: Counter = Counter()
    for conv in conversations:
        when_of = {key: parse_locomo_date(date) for key, date, _ in conv.sessions}
        make = _observation_items if unit == "observation" else _summary_items
        mine = make(conv, when_of, conv.at)
        items += mine
        times = [t for t in when_of.values() if t]
        now = max(times) if times else None
        last = conv.last_session
        for j, raw in enumerate(conv.qa):
            qa, category = _qa(conv, j, raw)
            evidence = _evidence_ids(qa)
            if not evidence:
                no_evidence[category] += 1
                continue
            keys = tuple(evidence) if unit == "observation" else \
                tuple(session_key(_DIA_SESSION.match(e).group(1)) for e in evidence)
            wanted = set(keys)
            gold = [item.id for item in mine if wanted.intersection(dict(item.meta)[COVERS])]
            uncovered[category] += not gold  # kept: a miss, as LoCoMo's recall scores it 0
            q = _question(conv, j, qa, gold, now, distance_meta(last, evidence))
            questions.append(dataclasses.replace(q, meta=((EVIDENCE, keys), *q.meta)))
    what = "observation" if unit == "observation" else "session summary"
    notes = _skip_note(no_evidence, "with no D<n>:<m> evidence id") + faults.notes()
    if sum(uncovered.values()):
        cats = ", ".join(f"category {c}: {n}" for c, n in sorted(uncovered.items()) if n)
        notes += (f"{sum(uncovered.values())} questions have evidence ids that no {what} carries: kept with no "
                  f"gold, scored as misses, as LoCoMo's RAG recall scores them 0 ({cats})",)
    name = "locomo-observations" if unit == "observation" else "locomo-summaries"
    ds = Dataset(name=name, items=tuple(items), questions=tuple(questions),
                 notes=(f"{len(items)} {what} items from {len(conversations)} conversations, {len(questions)} "
                        "questions",) + notes,
                 category_labels=CATEGORY_LABELS, sources=(read,))
    return finish(ds, str(path))

