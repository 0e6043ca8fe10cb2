"""FTS5's ``porter`` stemmer (``fts5PorterCb`` and the ``fts5Porter*`` helpers), on the token's UTF-8 bytes (see
the package docstring for the algorithm and its FTS5 quirks)."""

from __future__ import annotations

from functools import lru_cache

_MAX_TOKEN = 64  # FTS5_PORTER_MAX_TOKEN


def _is_vowel(c: str, y_is_vowel: bool) -> bool:
    return c in "aeiou" or (y_is_vowel and c == "y")


def _gobble_vc(s: str, prev_cons: bool) -> int:
    """fts5PorterGobbleVC: index just past the first vowel-then-consonant pair, or 0."""
    n = len(s)
    cons = prev_cons
    i = 0
    while i < n:
        cons = not _is_vowel(s[i], cons)
        if not cons:
            break
        i += 1
    i += 1
    while i < n:
        cons = not _is_vowel(s[i], cons)
        if cons:
            return i + 1
        i += 1
    return 0


def _m_gt0(s: str) -> bool:
    return _gobble_vc(s, False) != 0


def _m_gt1(s: str) -> bool:
    n = _gobble_vc(s, False)
    return bool(n) and _gobble_vc(s[n:], True) != 0


def _m_eq1(s: str) -> bool:
    n = _gobble_vc(s, False)
    return bool(n) and _gobble_vc(s[n:], True) == 0


def _ostar(s: str) -> bool:
    if s[-1] in "wxy":
        return False
    mask = 0
    cons = False
    for c in s:
        cons = not _is_vowel(c, cons)
        mask = (mask << 1) + cons
    return (mask & 0x07) == 0x05


def _m_gt1_and_s_or_t(s: str) -> bool:
    return s[-1] in "st" and _m_gt1(s)


def _has_vowel(s: str) -> bool:
    """fts5Porter_Vowel (*v*): 'y' counts as a vowel anywhere but at index 0."""
    return any(_is_vowel(c, i > 0) for i, c in enumerate(s))


# fmt: off
# (suffix, condition, replacement) in the generated code's order. The C switches on the
# second-to-last byte and tries that case's suffixes in order; the first suffix that matches
# (with the word strictly longer than it) decides, whether or not its condition holds.
_STEP2 = (
    ("ational", _m_gt0, "ate"), ("tional", _m_gt0, "tion"),
    ("enci", _m_gt0, "ence"), ("anci", _m_gt0, "ance"),
    ("izer", _m_gt0, "ize"),
    ("logi", _m_gt0, "log"),
    ("bli", _m_gt0, "ble"), ("alli", _m_gt0, "al"), ("entli", _m_gt0, "ent"),
    ("eli", _m_gt0, "e"), ("ousli", _m_gt0, "ous"),
    ("ization", _m_gt0, "ize"), ("ation", _m_gt0, "ate"), ("ator", _m_gt0, "ate"),
    ("alism", _m_gt0, "al"), ("iveness", _m_gt0, "ive"), ("fulness", _m_gt0, "ful"),
    ("ousness", _m_gt0, "ous"),
    ("aliti", _m_gt0, "al"), ("iviti", _m_gt0, "ive"), ("biliti", _m_gt0, "ble"),
)
_STEP3 = (
    ("ical", _m_gt0, "ic"),
    ("ness", _m_gt0, ""),
    ("icate", _m_gt0, "ic"), ("iciti", _m_gt0, "ic"),
    ("ful", _m_gt0, ""),
    ("ative", _m_gt0, ""),
    ("alize", _m_gt0, "al"),
)
_STEP4 = (
    ("al", _m_gt1, ""),
    ("ance", _m_gt1, ""), ("ence", _m_gt1, ""),
    ("er", _m_gt1, ""),
    ("ic", _m_gt1, ""),
    ("able", _m_gt1, ""), ("ible", _m_gt1, ""),
    ("ant", _m_gt1, ""), ("ement", _m_gt1, ""), ("ment", _m_gt1, ""), ("ent", _m_gt1, ""),
    ("ion", _m_gt1_and_s_or_t, ""), ("ou", _m_gt1, ""),
    ("ism", _m_gt1, ""),
    ("ate", _m_gt1, ""), ("iti", _m_gt1, ""),
    ("ous", _m_gt1, ""),
    ("ive", _m_gt1, ""),
    ("ize", _m_gt1, ""),
)
# fmt: on


def _apply(buf: str, rules: tuple) -> str:
    n = len(buf)
    if n < 2:  # every rule needs len(buf) > len(suffix) >= 2
        return buf
    second_last = buf[-2]
    for suffix, cond, repl in rules:
        if suffix[-2] != second_last or n <= len(suffix) or not buf.endswith(suffix):
            continue
        stem = buf[: n - len(suffix)]
        return stem + repl if cond(stem) else buf
    return buf


def _step1a(buf: str) -> str:
    n = len(buf)
    if buf[-1] == "s":
        if buf[-2] == "e":
            if (n > 4 and buf[-4] == "s" and buf[-3] == "s") or (n > 3 and buf[-3] == "i"):
                return buf[:-2]
            return buf[:-1]
        if buf[-2] != "s":
            return buf[:-1]
    return buf


def _step1b(buf: str) -> tuple[str, bool]:
    n = len(buf)
    if n < 2:
        return buf, False
    c = buf[-2]
    if c == "e":
        if n > 3 and buf.endswith("eed"):
            if _m_gt0(buf[:-3]):
                return buf[:-1], False  # eed -> ee
        elif n > 2 and buf.endswith("ed"):
            if _has_vowel(buf[:-2]):
                return buf[:-2], True
    elif c == "n":
        if n > 3 and buf.endswith("ing"):
            if _has_vowel(buf[:-3]):
                return buf[:-3], True
    return buf, False


def _step1b2(buf: str) -> tuple[str, bool]:
    if len(buf) > 2:
        for suffix, repl in (("at", "ate"), ("bl", "ble"), ("iz", "ize")):
            if buf.endswith(suffix):
                return buf[:-2] + repl, True
    return buf, False


def _porter(buf: str) -> str:
    """fts5PorterCb on a token of 3..64 bytes (one str character per byte)."""
    buf = _step1a(buf)
    buf, removed = _step1b(buf)
    if removed:
        buf, changed = _step1b2(buf)
        if not changed:
            c = buf[-1]
            if not _is_vowel(c, False) and c not in "lsz" and len(buf) > 1 and c == buf[-2]:
                buf = buf[:-1]
            elif _m_eq1(buf) and _ostar(buf):
                buf += "e"
    # Step 1c
    if buf[-1] == "y" and _has_vowel(buf[:-1]):
        buf = buf[:-1] + "i"
    buf = _apply(buf, _STEP2)
    buf = _apply(buf, _STEP3)
    buf = _apply(buf, _STEP4)
    # Step 5a
    if buf[-1] == "e":
        stem = buf[:-1]
        if _m_gt1(stem) or (_m_eq1(stem) and not _ostar(stem)):
            buf = stem
    # Step 5b
    if len(buf) > 1 and buf[-1] == "l" and buf[-2] == "l" and _m_gt1(buf[:-1]):
        buf = buf[:-1]
    return buf


@lru_cache(maxsize=1 << 18)
def porter_stem(token: str) -> str:
    """FTS5's Porter step on one already folded token (3..64 UTF-8 bytes are stemmed)."""
    if token.isascii():
        if len(token) < 3 or len(token) > _MAX_TOKEN:
            return token
        return _porter(token)
    raw = token.encode("utf-8", "surrogateescape")
    if len(raw) < 3 or len(raw) > _MAX_TOKEN:
        return token
    out = _porter(raw.decode("latin-1"))
    return out.encode("latin-1").decode("utf-8", "surrogateescape")

