"""The lowercase concept vocabulary of the entity bridge (memini's diagnostic-only ``conceptChunks`` in
``bench/entitydiag_test.go``, described in its words, our implementation and stop list): a stemmed noun-chunk
proxy, to price what lowercase concepts ("the camping trip") would buy as bridge edges where capitalised
entities (``studies.entities``) see nothing.

For one text:

1. drop a leading ``[...] `` prefix (LoCoMo's date) when the text starts with ``[``, then a speaker label: the
   text up to the first ``": "`` when that colon sits within the first 20 characters;
2. lower-case it and split on whitespace; trim every character outside ``a``-``z`` from both ends of each token;
3. drop a token shorter than 4 characters or in ``STOPWORDS`` (function and filler words of 4+ letters, the
   chat's reactions and light verbs);
4. stem what is left: the first of the suffixes ``ing``, ``ed``, ``es``, ``s`` that ends the word is cut when at
   least 4 characters remain ("camping" -> "camp", "hikes" -> "hik", "glass" -> "glas");
5. the concepts are each stem and each pair of adjacent stems (``"camp trip"``), each once, in reading order.

Stop-word removal happens before pairing, so a pair can join words that a stop word separated.
"""

from __future__ import annotations

MIN_LENGTH = 4
SUFFIXES = ("ing", "ed", "es", "s")
SPEAKER_LABEL_WITHIN = 20

STOPWORDS = frozenset("""
that this these those with without about have having been being will would should could cant dont didnt doesnt
isnt wasnt arent werent wont your yours their theirs them they what when where which while whom whose since
because though although really very just still even only some more most much many other another such same here
there then than into onto over under after before during also again once like love great good nice cool
awesome amazing glad happy thanks thank sounds know knew think thought want need going gonna wanna make made
take took come came went goes well were hows whats thats youre theyre hope feel felt keep give gave look looking
time things thing stuff back everyone someone something anything everything little lots does doing done sure
yeah okay maybe probably definitely totally always never ever actually pretty kind sort lot able every each
both either neither from upon must might shall said says tell told wow haha
""".split())


def stem(word: str) -> str:
    """The first suffix of ``SUFFIXES`` ending ``word`` cut, when at least ``MIN_LENGTH`` characters remain."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_LENGTH:
            return word[:-len(suffix)]
    return word


def _strip_prefixes(text: str) -> str:
    if text.startswith("["):
        end = text.find("] ")
        if end > 0:
            text = text[end + 2:]
    colon = text.find(": ")
    if 0 < colon < SPEAKER_LABEL_WITHIN:
        text = text[colon + 2:]
    return text


def _trim(token: str) -> str:
    start, end = 0, len(token)
    while start < end and not "a" <= token[start] <= "z":
        start += 1
    while end > start and not "a" <= token[end - 1] <= "z":
        end -= 1
    return token[start:end]


def extract(text: str) -> list[str]:
    """The concepts of ``text`` (module docstring): stems and adjacent stem pairs, each once, in reading order."""
    words = []
    for token in _strip_prefixes(text).lower().split():
        word = _trim(token)
        if len(word) >= MIN_LENGTH and word not in STOPWORDS:
            words.append(stem(word))
    out: dict[str, None] = {}
    for i, word in enumerate(words):
        out.setdefault(word)
        if i + 1 < len(words):
            out.setdefault(f"{word} {words[i + 1]}")
    return list(out)
