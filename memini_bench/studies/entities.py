"""A no-LLM entity extractor: maximal runs of capitalised words, precision first (memini's entity phase,
``internal/extract → Entities``, described in its own words; our implementation and word lists).

Scan each line's whitespace tokens in order:

- a token starting with ``[`` opens a bracketed run up to the token holding ``]`` (LoCoMo's ``[1:56 pm on 8 May,
  2023]`` date prefix, ``[WARN]``): skipped, and it does not use up the sentence start;
- strip punctuation around the token (letters, digits, apostrophes and hyphens stay); the token ends a sentence
  when the stripped tail holds one of ``. ! ? ; :`` (so a ``Speaker:`` label ends one);
- the token joins the current span when it starts with an upper-case letter and its normalized form (lower case,
  a trailing ``'s`` or ``'`` removed, ``’`` read as ``'``) has a letter, at least 2 characters and is no stopword
  (function words, pronouns, auxiliaries, greetings, reactions, relative days; a contraction is judged by its
  stem: "don't" by "don"); any other token closes the span, as does a sentence end;
- a closed span is kept when it has at most ``MAX_SPAN_TOKENS`` (4) words and is not made of calendar words only
  (a bare month or weekday is a date; "Black Friday" is kept).

A span that starts a sentence is only sentence case unless it shows more: it is kept when it has two or more
words, when its word also occurs capitalised mid-sentence somewhere in the text, or when the raw word carries its
own casing signal (an upper-case letter or a digit after the first character: "iPhone" is not, "LGBTQ", "OpenAI",
"Qwen3" are). Keys are the span's normalized words joined by spaces, each once, in reading order, at most
``MAX_ENTITIES`` (12).

Lower-case concepts ("the retry policy") are out of scope by design: without a part-of-speech tagger they cannot
be told from prose.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_ENTITIES = 12
MAX_SPAN_TOKENS = 4
SENTENCE_ENDERS = frozenset(".!?;:")
KEEP_INSIDE = frozenset("'’-")

CALENDAR = frozenset("""monday tuesday wednesday thursday friday saturday sunday january february march april may
june july august september october november december""".split())

STOPWORDS = frozenset("""
a an the this that these those some any each every all both either neither no none nothing one another other such
same own i me my myself mine we us our ours you your yours he him his she her hers it its they them their theirs
who whom whose what which when where why how whatever whoever
am is are was were be been being do does did done doing have has had having will would shall should can could
may might must let lets get gets got getting go goes going gone gonna wanna gotta come came make made see saw know
knew think thought want need try keep say said tell told feel felt
don didn doesn isn aren wasn weren haven hasn hadn won wouldn shouldn couldn can't cannot ain
and or but nor so yet if then than as because since while though although unless until whether however therefore
also too very not just still even only again once already almost quite really actually maybe perhaps
at by for from in into of off on onto out over to under up down with without about above below after before
during between through across around among against along behind beyond near like via per
here there now today tonight tomorrow yesterday later soon ago last next first
hey hi hello bye goodbye wow oh ah aw awww ok okay yes yeah yep yup no nope sure thanks thank please sorry cool
great good nice fine well right awesome amazing perfect exactly definitely absolutely totally anyway alright
congrats congratulations cheers dear happy glad sounds haha lol hmm omg ugh
""".split())


def normalize_word(token: str) -> str:
    """Lower case, ``’`` as ``'``, a trailing possessive (``'s`` or ``'``) removed."""
    word = token.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    return word.rstrip("'")


def is_stopword(word: str) -> bool:
    """A normalized word that never joins an entity (a contraction is judged by its stem too)."""
    return word in STOPWORDS or ("'" in word and word.split("'", 1)[0] in STOPWORDS)


def strip_token(token: str) -> tuple[str, bool]:
    """(the token without surrounding punctuation, whether the removed tail ends a sentence)."""
    def inner(ch: str) -> bool:
        return ch.isalnum() or ch in KEEP_INSIDE

    start, end = 0, len(token)
    while start < end and not inner(token[start]):
        start += 1
    while end > start and not inner(token[end - 1]):
        end -= 1
    tail = token[end:] if end > start else token
    return token[start:end], any(ch in SENTENCE_ENDERS for ch in tail)


def casing_signal(raw: str) -> bool:
    """An upper-case letter or a digit after the first character ("LGBTQ", "OpenAI", "Qwen3")."""
    return any(ch.isupper() or ch.isdigit() for ch in raw[1:])


@dataclass
class Span:
    words: list[str]
    raw: list[str]
    initial: bool  # the span starts a sentence


def spans(text: str) -> list[Span]:
    """Every kept capitalised span, in reading order (module docstring)."""
    out: list[Span] = []
    current: Span | None = None

    def close() -> None:
        nonlocal current
        if current is not None and len(current.words) <= MAX_SPAN_TOKENS and not all(
                w in CALENDAR for w in current.words):
            out.append(current)
        current = None

    for line in text.split("\n"):
        at_start, in_bracket = True, False
        for token in line.split():
            if in_bracket or token.startswith("["):
                in_bracket = "]" not in token
                close()
                continue
            word_raw, ends = strip_token(token)
            word = normalize_word(word_raw) if word_raw else ""
            joins = (bool(word_raw) and word_raw[0].isupper() and len(word) >= 2 and any(c.isalpha() for c in word)
                     and not is_stopword(word))
            if joins:
                if current is None:
                    current = Span([], [], at_start)
                current.words.append(word)
                current.raw.append(word_raw)
            else:
                close()
            if ends:
                close()
            at_start = ends
        close()
    return out


def extract(text: str) -> list[str]:
    """The entity keys of ``text`` (module docstring)."""
    found = spans(text)
    mid = {w for s in found for i, w in enumerate(s.words) if not s.initial or i > 0}
    keys: list[str] = []
    for s in found:
        if s.initial and len(s.words) == 1 and s.words[0] not in mid and not casing_signal(s.raw[0]):
            continue
        key = " ".join(s.words)
        if key not in keys:
            keys.append(key)
            if len(keys) == MAX_ENTITIES:
                break
    return keys
