"""memini_bench.text against SQLite FTS5's own ``porter unicode61`` tokenizer (the oracle)."""

from __future__ import annotations

import json
import random
import sqlite3
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from memini_bench.text import (
    fts5_match_expression,
    porter_stem,
    query_stems,
    query_terms,
    tokenize,
)

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LOCOMO = DATA / "locomo" / "locomo10.json"
LONGMEMEVAL = DATA / "longmemeval" / "longmemeval_s_single.json"


def _has_fts5() -> bool:
    try:
        sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE t USING fts5(c)")
    except sqlite3.OperationalError:
        return False
    return True


needs_fts5 = pytest.mark.skipif(not _has_fts5(), reason="this Python's sqlite3 has no FTS5")


class Fts5:
    """An in-memory FTS5 table with the tokenizer under test and an 'instance' vocab."""

    def __init__(self, tokenizer: str = "porter unicode61") -> None:
        self.con = sqlite3.connect(":memory:")
        self.con.execute(f"CREATE VIRTUAL TABLE t USING fts5(content, tokenize='{tokenizer}')")
        self.con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        self.con.execute("CREATE VIRTUAL TABLE r USING fts5vocab(t, 'row')")

    def add(self, docs: list[str]) -> None:
        self.con.executemany("INSERT INTO t(rowid, content) VALUES (?, ?)", enumerate(docs, start=1))

    def streams(self) -> dict[int, list[str]]:
        """rowid -> the tokens FTS5 indexed for it, in position order."""
        out: dict[int, list[str]] = defaultdict(list)
        for doc, term in self.con.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            out[doc].append(term)
        return out

    def vocabulary(self) -> list[str]:
        return [t for (t,) in self.con.execute("SELECT term FROM r")]


def fts5_tokens(text: str) -> list[str]:
    db = Fts5()
    db.add([text])
    return db.streams().get(1, [])


@cache
def locomo_turns() -> list[str]:
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo data not found at {LOCOMO} (shared benchmark data is absent)")
    turns = []
    for sample in json.loads(LOCOMO.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            date = conv.get(f"session_{n}_date_time", "")
            for turn in conv[f"session_{n}"]:
                turns.append(f"[{date}] {turn['speaker']}: {turn['text']}")
            n += 1
    return turns


@cache
def longmemeval_sessions() -> list[str]:
    if not LONGMEMEVAL.exists():
        pytest.skip(f"LongMemEval data not found at {LONGMEMEVAL} (shared benchmark data is absent)")
    docs = []
    for record in json.loads(LONGMEMEVAL.read_text(encoding="utf-8")):
        for session in record["haystack_sessions"]:
            docs.append("".join(f"{m['role']}: {m['content']}\n" for m in session))
    return docs


CORPORA = {"locomo": locomo_turns, "longmemeval": longmemeval_sessions}


# ------------------------------------------------------------------------------------------
# hand cases
# ------------------------------------------------------------------------------------------


def test_possessive_splits_and_stems():
    assert tokenize("Caroline's") == ["carolin", "s"]
    assert tokenize("Caroline’s") == ["carolin", "s"]  # U+2019 separates too


def test_hyphen_and_underscore_separate():
    assert tokenize("well-being") == ["well", "be"]
    assert tokenize("snake_case_name") == ["snake", "case", "name"]
    assert tokenize("e-mail, x/y; a.b") == ["e", "mail", "x", "y", "a", "b"]


def test_diacritics_removed_and_case_folded():
    assert tokenize("café") == ["cafe"]
    assert tokenize("CAFÉ Ñandú") == ["cafe", "nandu"]
    assert tokenize("cafe\u0301") == ["cafe"]  # combining acute continues the token and is dropped
    assert tokenize("\u0301abc") == ["abc"]  # ... but cannot start one


def test_short_tokens_unstemmed_and_byte_length_rule():
    assert tokenize("is as us ss") == ["is", "as", "us", "ss"]
    assert porter_stem("is") == "is"
    assert porter_stem("was") == "wa"  # 3 bytes: stemmed (step 1a)
    assert porter_stem("ies") == "ie"
    assert porter_stem("és") == "é"  # 3 UTF-8 bytes
    long = "running" * 10  # 70 bytes > 64: passed through
    assert porter_stem(long) == long
    assert porter_stem("running" * 9) == "running" * 8 + "run"  # 63 bytes: stemmed


def test_fts5_porter_specifics():
    assert [porter_stem(w) for w in ("running", "days", "say", "happily", "generalization")] == [
        "run",
        "dai",
        "sai",
        "happili",
        "gener",
    ]


def test_numbers_and_mixed_tokens():
    assert tokenize("At 1:56 pm on 8 May, 2023 mp3s") == ["at", "1", "56", "pm", "on", "8", "mai", "2023", "mp3"]


def test_query_terms():
    q = "Who is Caroline? caroline's café — résumé x 42 a1 ñ is"
    assert query_terms(q) == ["who", "is", "caroline", "caroline", "caf", "sum", "42", "a1", "is"]
    assert query_terms("") == []
    assert query_terms("a b c") == []


def test_fts5_match_expression():
    assert fts5_match_expression(["who", "is", "running"]) == '"who" OR "is" OR "running"'
    assert fts5_match_expression([]) == ""


def test_query_stems():
    assert query_stems("Who is running, RUNNING?") == ["who", "is", "run", "run"]


@needs_fts5
def test_hand_cases_agree_with_fts5():
    for text in [
        "Caroline's",
        "well-being snake_case",
        "café CAFÉ cafe\u0301 \u0301abc",
        "ies was is",
        "At 1:56 pm on 8 May, 2023",
        "generalization happily days",
        "running" * 9,
        "running" * 10,
        "ﬁnancial Straße İstanbul ΣΊΣΥΦΟΣ ǅemal Ⅻ ½ x² 🤣 😀 \ue000 \U0010fffd",
    ]:
        assert tokenize(text) == fts5_tokens(text), text


@needs_fts5
def test_match_expression_runs_in_fts5():
    db = Fts5()
    db.add(["Who is running the race?", "nothing here"])
    expr = fts5_match_expression(query_terms("who RUNS?"))
    rows = db.con.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)).fetchall()
    assert rows == [(1,)]


# ------------------------------------------------------------------------------------------
# the oracle: every document of the real corpora, token for token
# ------------------------------------------------------------------------------------------


@needs_fts5
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_token_streams_equal_fts5(corpus):
    docs = CORPORA[corpus]()
    db = Fts5()
    db.add(docs)
    theirs = db.streams()
    mismatches = []
    for rowid, doc in enumerate(docs, start=1):
        mine = tokenize(doc)
        if mine != theirs.get(rowid, []):
            mismatches.append((rowid, doc[:80], mine[:20], theirs.get(rowid, [])[:20]))
    assert not mismatches, f"{len(mismatches)} of {len(docs)} documents differ, e.g. {mismatches[:3]}"
    # BM25's document length is the token count.
    assert [len(tokenize(d)) for d in docs] == [len(theirs.get(i, [])) for i in range(1, len(docs) + 1)]
    assert len(docs) == (5882 if corpus == "locomo" else 53)


@needs_fts5
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_porter_stem_equals_fts5_on_vocabulary(corpus):
    docs = CORPORA[corpus]()
    plain = Fts5("unicode61")  # FTS5's own folded, unstemmed vocabulary
    plain.add(docs)
    words = plain.vocabulary()
    assert len(words) > 1000
    porter = Fts5()
    porter.add(words)  # one word per row; each is exactly one token
    stems = porter.streams()
    got = {w: porter_stem(w) for w in words}
    want = {w: stems[i][0] for i, w in enumerate(words, start=1)}
    assert all(len(stems[i]) == 1 for i in range(1, len(words) + 1))
    diff = {w: (got[w], want[w]) for w in words if got[w] != want[w]}
    assert not diff, f"{len(diff)} of {len(words)} words stem differently, e.g. {list(diff.items())[:10]}"
    # and the stemmed vocabulary ('row') equals the set of our stems
    full = Fts5()
    full.add(docs)
    assert set(full.vocabulary()) == {t for d in docs for t in tokenize(d)}


_SUFFIXES = (
    "s es ies sses ss ed eed ing at bl iz y ational tional enci anci izer logi bli alli entli eli "
    "ousli ization ation ator alism iveness fulness ousness aliti iviti biliti ical ness icate "
    "iciti ful ative alize al ance ence er ic able ible ant ement ment ent sion tion ion ou ism ate "
    "iti ous ive ize e ll l abli fulli lessli"
).split()


@needs_fts5
def test_porter_stem_equals_fts5_on_random_suffix_words():
    """Seeded random stems + Porter suffixes, including non-ASCII letters, vs FTS5."""
    rng = random.Random(20240607)
    letters = "aeiouybcdfghjklmnprstvwxyzaeiouyé"
    words = set()
    while len(words) < 20_000:
        stem = "".join(rng.choice(letters) for _ in range(rng.randint(0, 6)))
        word = stem + "".join(rng.choice(_SUFFIXES) for _ in range(rng.randint(0, 2)))
        if word:
            words.add(word)
    words = sorted(words)
    db = Fts5("porter unicode61 remove_diacritics 0")  # keep é so non-ASCII bytes are stemmed too
    db.add(words)
    stems = db.streams()
    diff = [(w, porter_stem(w), stems[i]) for i, w in enumerate(words, start=1) if stems[i] != [porter_stem(w)]]
    assert not diff, f"{len(diff)} of {len(words)} differ, e.g. {diff[:10]}"


# ------------------------------------------------------------------------------------------
# the character tables: every code point, alone and after a letter
# ------------------------------------------------------------------------------------------


@needs_fts5
def test_every_code_point_agrees_with_fts5():
    cps = [c for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    # Alone: is it a token character, and what does it fold to? After "a": does it continue
    # a token (token characters and the combining diacritics do)?
    docs = [" ".join(chr(c) for c in cps[i : i + 100_000]) for i in range(0, len(cps), 100_000)]
    docs.append(" ".join("a" + chr(c) + "b" for c in range(1, 0x3400)))
    db = Fts5()
    db.add(docs)
    theirs = db.streams()
    for rowid, doc in enumerate(docs, start=1):
        mine = tokenize(doc)
        theirs_doc = theirs.get(rowid, [])
        if mine != theirs_doc:
            pairs = zip(mine, theirs_doc, strict=False)
            first = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(mine), len(theirs_doc)))
            raise AssertionError(
                f"doc {rowid}: first difference at token {first}: "
                f"{mine[first - 2 : first + 3]} vs {theirs_doc[first - 2 : first + 3]}"
            )
