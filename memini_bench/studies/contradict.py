"""A precision-first, no-LLM contradiction detector (memini ``internal/contradict``, its design in our words and
code): is a new fact a *restatement* of its nearest stored neighbour, an *update* that contradicts it (changed
value, flipped polarity), or a *distinct* claim? Embedding similarity cannot tell a value swap ("TTL 10 minutes" ->
"TTL 15 minutes") from a restatement, so this is a lexical differ that only fires on surface-detectable changes;
anything ambiguous is not an update (flagging a restatement as an update is the costly error: it demotes a live
fact).

Features of a text: *tokens*, the set of its lower-cased word and number tokens after normalization (clock times
to 24-hour ``h:mm``, runs of number words to digits ("four hundred" -> 400), a light stem, unit aliases such as
megabytes -> mb) with stopwords removed (a one-digit number is kept: it is a value); *values*, the tokens that
carry a value (digit-bearing, inside quotes, or a word of an entity from ``entities.extract``); *entities*;
*negated*, whether a negator (not, no, never, n't forms) occurs.

With N, O the new and old features, shared = N.tokens ∩ O.tokens, new-only / old-only the differences:

1. identical after normalization -> restatement; an empty side -> distinct;
2. overlap = |shared| / min(|N|, |O|); overlap < ``overlap_floor`` (0.5), or no shared entity and fewer than 2
   shared tokens -> distinct;
3. value swap: both sides changed a value (new-only values and old-only values, after dropping pairs that are
   one name spelled twice: numerically equal, or one a prefix of the other of at least ``alias_prefix_min`` (4)
   characters) and each side's other new-only / old-only tokens, change-cue words aside, number at most
   ``residue_max`` (2) -> update;
4. polarity (needs a shared entity or 3 shared tokens): containment = |shared - cues| / |N.tokens - cues|;
   - a retrospective cue phrase ("no longer", "switched from", "stopped using", "deprecated", ...) in the new
     text and not in the old, containment >= ``neg_overlap_floor`` (0.6), new-side residue <= ``residue_max``
     -> update;
   - the new text negated and the old not, containment >= max(``neg_overlap_floor``, 0.75), new-side residue
     <= 1 -> update;
5. otherwise restatement (same topic, no decisive change).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memini_bench.studies import entities

RESTATEMENT, UPDATE, DISTINCT = "restatement", "update", "distinct"
CLASSES = (RESTATEMENT, UPDATE, DISTINCT)


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    """memini's shipped thresholds (``contradict.Default``)."""

    overlap_floor: float = 0.5
    residue_max: int = 2
    neg_overlap_floor: float = 0.6
    alias_prefix_min: int = 4


DEFAULT = DetectorConfig()


@dataclass(frozen=True, slots=True)
class Verdict:
    label: str
    reason: str


_TOKEN = re.compile(r"[a-z]+|[0-9]+(?:[.:][0-9]+)*")
_AMPM = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b")
_PADDED = re.compile(r"\b0(\d):(\d{2})\b")
_QUOTED = re.compile(r"\"([^\"]{1,80})\"|`([^`]{1,80})`")

NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
                     "dozen": 12})
SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_PHRASE = re.compile(r"\b(?:%s)(?:[\s-]+(?:%s))*\b" % (("|".join([*NUMBER_WORDS, *SCALES]),) * 2))
UNIT_ALIASES = {"megabyte": "mb", "gigabyte": "gb", "kilobyte": "kb", "terabyte": "tb", "second": "sec",
                "secs": "sec", "minute": "min", "mins": "min", "hour": "hr", "hrs": "hr", "millisecond": "ms",
                "request": "req", "reqs": "req", "percent": "percent", "pct": "percent", "day": "day"}
IRREGULAR = {"ran": "run", "sent": "send", "kept": "keep", "built": "build", "wrote": "write", "written": "write",
             "took": "take", "taken": "take", "gave": "give", "given": "give", "chose": "choose", "chosen": "choose",
             "moved": "move"}
NEGATORS = frozenset({"not", "no", "never", "cannot", "nobody", "nothing", "neither", "nor", "don", "doesn", "didn",
                      "won", "isn", "aren", "wasn", "weren", "hasn", "haven", "shouldn", "couldn", "wouldn"})
RETRO_CUES = ("no longer", "not anymore", "anymore", "any more", "switched from", "switched to", "switched away",
              "migrated from", "migrated to", "migrated off", "moved off", "moved away from", "moved from",
              "stopped using", "stopped running", "stopped doing", "we stopped", "was stopped", "deprecated",
              "used to", "retired", "replaced by", "was dropped", "dropped support", "phased out", "discontinued")
EXTRA_STOPWORDS = frozenset({"per", "via", "through", "throughout", "every", "all", "each", "also", "really"})


def phrase_value(words: list[str]) -> int:
    """The number a run of number words spells: "twenty five" 25, "four hundred" 400, "two thousand ten" 2010."""
    total = current = 0
    for w in words:
        if w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total, current = total + max(current, 1) * 1000, 0
        else:
            current += NUMBER_WORDS[w]
    return total + current


def numbers_to_digits(lower: str) -> str:
    """Every run of number words replaced by its digits (``phrase_value``)."""
    return _NUMBER_PHRASE.sub(lambda m: str(phrase_value(re.split(r"[\s-]+", m.group(0)))), lower)


def normalize_times(lower: str) -> str:
    """``2am`` / ``2:00 am`` -> ``2:00``, ``2pm`` -> ``14:00``; ``02:00`` -> ``2:00``."""
    def ampm(m: re.Match) -> str:
        hour = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0)
        return f"{hour}:{m.group(2) or '00'}"

    return _PADDED.sub(r"\1:\2", _AMPM.sub(ampm, lower))


def stem(word: str) -> str:
    """A light, consistent stem: irregular forms, one suffix (ies -> y, ing, ed, es, s) when 3+ letters remain,
    then a unit alias (minutes -> min) if it is one, else an undoubled final consonant and a dropped final e."""
    word = IRREGULAR.get(word, word)
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    if word in UNIT_ALIASES or word + "e" in UNIT_ALIASES:
        return UNIT_ALIASES.get(word) or UNIT_ALIASES[word + "e"]
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    if len(word) >= 4 and word.endswith("e"):
        word = word[:-1]
    return UNIT_ALIASES.get(word, word)


# Change-signal words (stemmed as tokens are): an update's vocabulary, never counted as divergence.
CUE_WORDS = frozenset(stem(w) for w in """longer anymore switch switched migrate migrated move moved stop stopped
deprecate deprecated use used using retire retired replace replaced drop dropped phase phased discontinued instead
currently away""".split())


@dataclass(frozen=True, slots=True)
class Features:
    tokens: frozenset[str]
    values: frozenset[str]
    entities: frozenset[str]
    negated: bool


def features(text: str) -> Features:
    found = entities.extract(text)
    entity_words = {w for e in found for w in e.split()}
    lower = normalize_times(numbers_to_digits(text.lower().replace("’", "'").replace("n't", " not")))
    quoted = {w for m in _QUOTED.finditer(lower) for span in m.groups() if span for w in _TOKEN.findall(span)}
    tokens, values, negated = set(), set(), False
    for raw in _TOKEN.findall(lower):
        is_value = raw in quoted or raw in entity_words or raw[0].isdigit()
        token = raw
        if raw[0].isalpha():
            negated = negated or raw in NEGATORS
            token = stem(raw)
            is_value = is_value or token in entity_words
            if len(token) < 2 or entities.is_stopword(token) or token in EXTRA_STOPWORDS or raw in NEGATORS:
                continue  # a number of one digit stays: it is a value
        tokens.add(token)
        if is_value:
            values.add(token)
    return Features(frozenset(tokens), frozenset(values), frozenset(found), negated)


def fingerprint(text: str) -> str:
    return " ".join(_TOKEN.findall(text.lower()))


def _numeric_equal(a: str, b: str) -> bool:
    if not (a[:1].isdigit() and b[:1].isdigit()):
        return False
    def canon(x: str) -> str:
        return x[:-2] if x.endswith(".0") else x
    return canon(a) == canon(b)


def drop_aliases(new: set[str], old: set[str], prefix_min: int) -> tuple[set[str], set[str]]:
    """Remove value pairs that name one thing twice (numerically equal, or a shared prefix of ``prefix_min``+)."""
    new, old = set(new), set(old)
    for a in sorted(new):
        for b in sorted(old):
            if a in new and b in old:
                short, long_ = sorted((a, b), key=len)
                if _numeric_equal(a, b) or (len(short) >= prefix_min and long_.startswith(short)):
                    new.discard(a)
                    old.discard(b)
    return new, old


def retro_cue(new_text: str, old_text: str) -> str:
    """The first retrospective change phrase in the new text that the old text does not carry."""
    new, old = new_text.lower(), old_text.lower()
    return next((cue for cue in RETRO_CUES if cue in new and cue not in old), "")


def classify(new_text: str, old_text: str, config: DetectorConfig = DEFAULT) -> Verdict:
    """The verdict on ``new_text`` against its neighbour ``old_text`` (module docstring)."""
    if fingerprint(new_text) == fingerprint(old_text):
        return Verdict(RESTATEMENT, "identical content")
    n, o = features(new_text), features(old_text)
    if not n.tokens or not o.tokens:
        return Verdict(DISTINCT, "no content tokens")
    shared = n.tokens & o.tokens
    only_new, only_old = n.tokens - o.tokens, o.tokens - n.tokens
    overlap = len(shared) / min(len(n.tokens), len(o.tokens))
    shared_entity = bool(n.entities & o.entities)
    if overlap < config.overlap_floor or (not shared_entity and len(shared) < 2):
        return Verdict(DISTINCT, f"overlap {overlap:.2f} below the floor")
    value_new, value_old = drop_aliases(only_new & n.values, only_old & o.values, config.alias_prefix_min)
    residue_new = only_new - n.values - CUE_WORDS
    residue_old = only_old - o.values - CUE_WORDS
    if value_new and value_old and len(residue_new) <= config.residue_max and len(residue_old) <= config.residue_max:
        return Verdict(UPDATE, f"value swap: {min(value_old)} -> {min(value_new)}")
    if shared_entity or len(shared) >= 3:
        content = n.tokens - CUE_WORDS
        containment = len(shared - CUE_WORDS) / max(1, len(content))
        cue = retro_cue(new_text, old_text)
        if cue and containment >= config.neg_overlap_floor and len(residue_new) <= config.residue_max:
            return Verdict(UPDATE, f"polarity: {cue}")
        if (n.negated and not o.negated and containment >= max(config.neg_overlap_floor, 0.75)
                and len(residue_new) <= 1):
            return Verdict(UPDATE, "polarity: negation flip")
    return Verdict(RESTATEMENT, f"overlap {overlap:.2f}, no decisive change")
