"""Reusable hypothesis strategies for fuzzing the harness with hostile input, and the per-case time limit.

- ``ODD_TEXT``, ``ODD_DATES``, ``ISO_DATES``, ``TEMPORAL_QUERIES``, ``ODD_NUMBERS``: the values that broke
  loaders before (NUL and line breaks, path tricks, dates at the calendar's ends, 5,000-digit counts in temporal
  phrases, 2**64).
- ``odd_text()``, ``huge_counts()``, ``json_values()``: strings and arbitrary JSON values, weighted towards those.
- ``file_docs()``, ``locomo_docs()``, ``longmemeval_docs()``, ``veto_corpora()``, ``veto_scenarios()``: documents
  of each suite's shape with small id alphabets (so duplicates and orphan gold ids happen by themselves).
- ``mutated(base)``: a document from ``base`` with up to N mutations (a node replaced by any JSON value, a key
  deleted, a list element duplicated, a string made odd); ``serialized(doc)``: its JSON bytes, sometimes cut short.
- ``time_limit(seconds)``: raises ``CaseTimeout`` (a BaseException, so no ``except Exception`` swallows it) when
  the block runs longer: a hang fails the case instead of the suite.

The CLI fuzzing reuses these: draw flag values from ``odd_text`` / ``ODD_NUMBERS`` and data files from
``serialized(mutated(...))``.
"""

from __future__ import annotations

import contextlib
import copy
import json
import signal
from collections.abc import Iterator

from hypothesis import strategies as st

ODD_TEXT = ("", " ", "\0", "a\0b", "\n", "line\nbreak", "\r\n", "\t", "\u2028", "\x1f", "\x7f", "../../x", "/abs/path",
            "..", ".", "%", "%20", "a b", "#", "é", "🙂", "x" * 300, "null", "[", "{}")
ODD_DATES = ("2023/05/30 (Tue) 23:40", "0001/01/01 (Mon) 00:00", "9999/12/31 (Fri) 23:59", "2023/02/30 (Thu) 10:00",
             "1:56 pm on 8 May, 2023", "12:00 am on 1 January, 0001", "11:59 pm on 31 December, 9999",
             "2026-07-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0001-01-01",
             "9999-12-31T23:59:59", "2023-02-30T00:00:00", "yesterday", "")
TEMPORAL_QUERIES = ("what did we do 3 days ago", "last summer", "in march", "back in december", "on december 31",
                    "on january 1st", "in 2099", "in 1900", "99999999999999999999 weeks ago",
                    "the day before yesterday", "last weekend", "last sunday",
                    "a few months ago", "in the past three months", "january 1, 1900", "31 december, 2099",
                    "february 31, 2024", "december 2099", "recently", "a year ago")
ISO_DATES = ("2026-07-01T00:00:00Z", "2023-05-30T23:40:00+02:00", "0001-01-01T00:00:00", "9999-12-31T23:59:59",
             "0001-01-01T00:00:00-05:00", "9999-12-31T23:59:59+05:00", "2024-02-29")
ODD_NUMBERS = (0, -1, 1, 2**31, 2**63 - 1, 2**64, -(2**63) - 1, 10**30, 0.5, -0.0, 1e308, -1e308, 5e-324)
_KEYS = ("id", "content", "group", "time", "query", "gold", "name", "items", "questions", "sample_id",
         "conversation", "qa", "evidence", "question_id", "haystack_sessions", "status", "superseded_by")


class CaseTimeout(BaseException):
    """A fuzz case ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ``CaseTimeout`` in the main thread when the block runs longer than ``seconds``."""
    def fire(signum, frame):
        raise CaseTimeout(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def huge_counts() -> st.SearchStrategy[str]:
    """"<5,000 digits> days ago" and friends: past int()'s 4,300-digit limit (built, so reprs stay short)."""
    return st.builds(lambda digit, unit: digit * 5000 + f"7 {unit} ago", st.sampled_from("90"),
                     st.sampled_from(["days", "weeks", "months", "years"]))


def odd_text(pool: tuple[str, ...] = ODD_TEXT) -> st.SearchStrategy[str]:
    """Short strings: mostly from ``pool`` (and the dates and temporal phrases), sometimes anything."""
    return st.one_of(st.sampled_from(pool + ODD_DATES + TEMPORAL_QUERIES), huge_counts(), st.text(max_size=12))


def _scalars() -> st.SearchStrategy[object]:
    return st.one_of(st.none(), st.booleans(), st.sampled_from(ODD_NUMBERS), st.integers(), odd_text(),
                     st.floats(allow_nan=False, allow_infinity=False))


def json_values() -> st.SearchStrategy[object]:
    """Any JSON value, small, weighted towards odd scalars."""
    return st.recursive(_scalars(), lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=4), inner, max_size=3),
                        max_leaves=6)


def _ids(prefix: str, n: int = 4) -> st.SearchStrategy[str]:
    return st.sampled_from([f"{prefix}{i}" for i in range(n)])


def _query() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(TEMPORAL_QUERIES), huge_counts(), odd_text())


def file_docs() -> st.SearchStrategy[dict]:
    """``-suite file`` documents."""
    item = st.fixed_dictionaries({"id": _ids("i"), "content": odd_text()},
                                 optional={"group": _ids("g", 2), "session": odd_text(), "source": odd_text(),
                                           "time": st.sampled_from(ISO_DATES) | st.sampled_from(ODD_DATES)})
    question = st.fixed_dictionaries({"query": _query(), "gold": st.lists(_ids("i"), max_size=3)},
                                     optional={"id": _ids("q", 6), "group": _ids("g", 2), "answer": _scalars(),
                                               "category": _scalars()})
    return st.fixed_dictionaries({"items": st.lists(item, min_size=1, max_size=5, unique_by=lambda d: d["id"]),
                                  "questions": st.lists(question, min_size=1, max_size=5)},
                                 optional={"name": odd_text()})


def _locomo_session() -> st.SearchStrategy[list]:
    turn = st.fixed_dictionaries({"dia_id": _ids("D1:", 5), "speaker": odd_text(), "text": odd_text()})
    return st.lists(turn, max_size=4)


def locomo_docs() -> st.SearchStrategy[list]:
    """LoCoMo ``locomo10.json``-shaped documents."""
    sessions = st.dictionaries(st.sampled_from(["session_1", "session_2", "session_10"]), _locomo_session(),
                               min_size=1, max_size=3)
    dates = st.fixed_dictionaries({}, optional={f"session_{n}_date_time": st.sampled_from(ODD_DATES)
                                                for n in (1, 2, 10)})
    conversation = st.tuples(sessions, dates).map(lambda parts: {**parts[0], **parts[1]})
    qa = st.fixed_dictionaries({"question": _query(), "evidence": st.lists(_ids("D1:", 6), max_size=2)},
                               optional={"answer": _scalars(), "category": st.sampled_from([1, 2, 3, 4, 5, "2"])})
    row = st.fixed_dictionaries({"sample_id": _ids("conv-", 3), "conversation": conversation,
                                 "qa": st.lists(qa, min_size=1, max_size=4)})
    return st.lists(row, min_size=1, max_size=3, unique_by=lambda r: r["sample_id"])


def longmemeval_docs() -> st.SearchStrategy[list]:
    """LongMemEval record arrays."""
    turn = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", ""]), "content": odd_text()})

    def record(n: int) -> st.SearchStrategy[dict]:
        return st.fixed_dictionaries({
            "question_id": st.sampled_from(["q1", "q2", "q3_abs", "q4"]),
            "question": _query(), "question_type": st.sampled_from(["temporal-reasoning", "multi-session"]),
            "answer": _scalars(), "question_date": st.sampled_from(ODD_DATES),
            "answer_session_ids": st.lists(_ids("s", 4), max_size=2),
            "haystack_session_ids": st.lists(_ids("s", 4), min_size=n, max_size=n),
            "haystack_dates": st.lists(st.sampled_from(ODD_DATES), min_size=n, max_size=n),
            "haystack_sessions": st.lists(st.lists(turn, max_size=3), min_size=n, max_size=n),
        })

    return st.lists(st.integers(0, 3).flatmap(record), min_size=1, max_size=4, unique_by=lambda r: r["question_id"])


def veto_corpora() -> st.SearchStrategy[list]:
    """VetoBench ``corpus.json`` decision lists."""
    rejection = st.fixed_dictionaries({"option": odd_text()}, optional={"reason": odd_text()})
    decision = st.fixed_dictionaries(
        {"id": _ids("d"), "decision": odd_text(), "rationale": odd_text(), "rejected": st.lists(rejection, max_size=2),
         "files_affected": st.lists(odd_text(), max_size=2),
         "created_at": st.sampled_from(ISO_DATES) | st.sampled_from(ODD_DATES),
         "historical_relevance": st.one_of(st.sampled_from(ODD_NUMBERS), st.floats(0, 1))},
        optional={"status": st.sampled_from(["active", "superseded", "other"]), "superseded_by": _ids("d"),
                  "reviewed_at": st.sampled_from(ISO_DATES)})
    return st.lists(decision, min_size=1, max_size=4, unique_by=lambda d: d["id"])


def veto_scenarios() -> st.SearchStrategy[dict]:
    """VetoBench ``scenarios.json`` documents."""
    marker = st.one_of(st.sampled_from(["\\bredis\\b", "(unclosed", "a{4294967296}", "(?i)x", "[", ""]), odd_text())
    scenario = st.fixed_dictionaries(
        {"id": _ids("s"), "veto_decision_id": _ids("d"), "trap": st.sampled_from(["direct", "implicit", ""]),
         "task": _query(), "rejected_option": odd_text(), "rejected_markers": st.lists(marker, max_size=2)},
        optional={"files_in_scope": st.lists(odd_text(), max_size=2), "accepted_markers": st.lists(marker, max_size=2)})
    return st.fixed_dictionaries({"as_of": st.sampled_from(ISO_DATES) | st.sampled_from(ODD_DATES),
                                  "scenarios": st.lists(scenario, min_size=1, max_size=3, unique_by=lambda s: s["id"])})


def _paths(node: object, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*path, i))


def _parent(doc: object, path: tuple) -> object:
    for key in path[:-1]:
        doc = doc[key]
    return doc


@st.composite
def mutated(draw, base: st.SearchStrategy, max_mutations: int = 3) -> object:
    """A document of ``base`` with up to ``max_mutations`` random mutations (see the module docstring)."""
    doc = copy.deepcopy(draw(base))
    for _ in range(draw(st.integers(0, max_mutations))):
        path = draw(st.sampled_from(list(_paths(doc))))
        action = draw(st.sampled_from(("replace", "delete", "duplicate", "odd")))
        if not path:
            if action == "replace":
                doc = draw(json_values())
            continue
        parent, key = _parent(doc, path), path[-1]
        if action == "replace":
            parent[key] = draw(json_values())
        elif action == "odd":
            parent[key] = draw(st.one_of(odd_text(), st.sampled_from(ODD_NUMBERS), st.none()))
        elif action == "delete":
            del parent[key]
        elif isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
    return doc


@st.composite
def serialized(draw, doc: object) -> bytes:
    """``doc`` as JSON bytes; now and then cut short (a truncated download)."""
    data = json.dumps(doc).encode()
    if data and draw(st.integers(0, 9)) == 9:
        data = data[:draw(st.integers(0, len(data) - 1))]
    return data
