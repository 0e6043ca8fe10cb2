"""FTS5's ``unicode61`` tokenizer (default options): token characters, diacritics and case folding, ported from
``ext/fts5/fts5_tokenize.c`` and ``ext/fts5/fts5_unicode2.c`` (see the package docstring for the rules)."""

from __future__ import annotations

import functools
import re
from bisect import bisect_right

from memini_bench.text.porter import porter_stem
from memini_bench.text.unicode_tables import (
    DIA_CHARS,
    DIA_KEYS,
    DIACRITIC_MASK0,
    DIACRITIC_MASK1,
    FOLD_CODES,
    FOLD_ENTRIES,
    FOLD_OFFSETS,
    TOKEN_RANGES,
)


def _is_diacritic(c: int) -> bool:
    if c < 768 or c > 817:
        return False
    if c < 768 + 32:
        return bool(DIACRITIC_MASK0 & (1 << (c - 768)))
    return bool(DIACRITIC_MASK1 & (1 << (c - 768 - 32)))


def _char_class() -> str:
    parts = []
    for i in range(0, len(TOKEN_RANGES), 2):
        lo, hi = TOKEN_RANGES[i], TOKEN_RANGES[i + 1]
        parts.append(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}")
    return "".join(parts)


@functools.cache
def _token_re() -> re.Pattern[str]:
    """The unicode61 token pattern (thousands of ranges: compiled on the first non-ASCII text, not at import)."""
    chars = _char_class()
    diacritics = "".join(f"\\U{c:08x}" for c in range(768, 818) if _is_diacritic(c))
    return re.compile(f"[{chars}][{chars}{diacritics}]*")


_ASCII_TOKEN_RE = re.compile(r"[a-z0-9]+")  # the whole tokenizer for ASCII-only (lowercased) text


def _remove_diacritic(c: int) -> int:
    """fts5_remove_diacritic(c, bComplex=0)."""
    key = (c << 3) | 7
    i = bisect_right(DIA_KEYS, key) - 1
    ch = DIA_CHARS[i]
    if ch.isupper():  # HIBIT: only for remove_diacritics=2
        return c
    first = DIA_KEYS[i] >> 3
    if c > first + (DIA_KEYS[i] & 0x07):
        return c
    return 0 if ch == "." else ord(ch)


def _fold(c: int) -> int:
    """sqlite3Fts5UnicodeFold(c, eRemoveDiacritic=1); 0 means "drop the character"."""
    if c < 128:
        return c + 32 if 65 <= c <= 90 else c
    if c < 65536:
        ret = c
        i = bisect_right(FOLD_CODES, c) - 1
        code, flags, n = FOLD_ENTRIES[i]
        if c < code + n and 0 == (0x01 & flags & (code ^ c)):
            ret = (c + FOLD_OFFSETS[flags >> 1]) & 0xFFFF
        return _remove_diacritic(ret)
    if 66560 <= c < 66600:
        return c + 40
    return c


class _FoldTable(dict):
    """str.translate() table computing sqlite3Fts5UnicodeFold lazily (None deletes)."""

    def __missing__(self, c: int) -> int | None:
        f = _fold(c)
        v = f if f else None
        self[c] = v
        return v


_FOLD_TABLE = _FoldTable()


def _fold_token(tok: str) -> str:
    return tok.lower() if tok.isascii() else tok.translate(_FOLD_TABLE)


def tokenize(text: str) -> list[str]:
    """The FTS5 ``porter unicode61`` token stream of ``text`` (folded and stemmed), in order."""
    if text.isascii():
        return list(map(porter_stem, _ASCII_TOKEN_RE.findall(text.lower())))
    return [porter_stem(_fold_token(tok)) for tok in _token_re().findall(text)]


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
_ASCII_ALNUM_RUN = re.compile(r"[A-Za-z0-9]*")
_ASCII_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ASCII_SEPARATORS = str.maketrans({c: " " for c in range(128) if chr(c) not in _ASCII_ALNUM})


def folded_tokens(text: str) -> list[str]:
    """The folded (not yet stemmed) tokens of ``text`` as a multiset (not in text order): ``tokenize(text)`` is
    exactly these tokens, each through ``porter_stem``, reordered.

    Faster than the token regex, same tokens: the ASCII token characters are exactly ``[A-Za-z0-9]`` and every
    other ASCII character separates, so ASCII text is lowercased, its separators turned into spaces and split.
    Only the stretches around non-ASCII characters (each non-ASCII run widened over the ASCII letters and digits
    touching it, so a stretch is bounded by separators) go through the full token regex and folding."""
    if text.isascii():
        return text.lower().translate(_ASCII_SEPARATORS).split()
    spans: list[list[int]] = []
    for run in _NON_ASCII_RUN.finditer(text):
        start, end = run.start(), _ASCII_ALNUM_RUN.match(text, run.end()).end()  # type: ignore[union-attr]
        while start > 0 and text[start - 1] in _ASCII_ALNUM:
            start -= 1
        if spans and start <= spans[-1][1]:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    plain, other, last = [], [], 0
    for start, end in spans:
        plain.append(text[last:start])
        other.append(text[start:end])
        last = end
    plain.append(text[last:])
    tokens = " ".join(plain).lower().translate(_ASCII_SEPARATORS).split()
    tokens.extend(folded_stretch(" ".join(other)))
    return tokens


def folded_stretch(stretch: str) -> list[str]:
    """The folded tokens of a stretch of text by the full token pattern (what ``folded_tokens`` does around
    non-ASCII characters; also the compiled ``count_terms``' callback)."""
    return [_fold_token(tok) for tok in _token_re().findall(stretch)]
