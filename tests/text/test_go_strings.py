"""Go's strings.ToLower and strings.Fields as memini's Go code applies them, against Go's own definitions."""

from __future__ import annotations

import random
import re
import sys

from memini_bench.retrieval.composite import normalize_content
from memini_bench.text.go_strings import GO_SPACES, NOT_GO_SPACES, go_fields, go_lower, go_normalize
from memini_bench.text.query import query_terms

# unicode.IsSpace, written out from Go's src/unicode/graphic.go (Latin-1) and the White_Space range table
# (src/unicode/tables.go): the oracle the module's tuple is checked against.
GO_IS_SPACE = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
               0x202F, 0x205F, 0x3000}


def test_the_space_set_is_go_unicode_is_space():
    assert {ord(c) for c in GO_SPACES} == GO_IS_SPACE
    python_spaces = {c for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert python_spaces - GO_IS_SPACE == {ord(c) for c in NOT_GO_SPACES} == set(range(0x1C, 0x20))
    assert GO_IS_SPACE <= python_spaces


def test_fields_split_at_go_spaces_only():
    rng = random.Random(4)
    pieces = [chr(c) for c in GO_IS_SPACE] + list(NOT_GO_SPACES) + list("ab.é中") + ["\u200b", "\u180e", "\ufeff"]
    split = re.compile("[" + "".join(chr(c) for c in sorted(GO_IS_SPACE)) + "]+")
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 15)))
        assert go_fields(text) == [f for f in split.split(text) if f], repr(text)
    assert go_fields("a\x1cb \x1f c") == ["a\x1cb", "\x1f", "c"]


def test_lower_is_the_simple_mapping_character_by_character():
    assert go_lower("İSTANBUL") == "istanbul"  # Python's str.lower gives "i̇stanbul"
    assert go_lower("ΟΔΟΣ ΣΑΣ") == "οδοσ σασ"  # Python's gives final sigmas: "οδος σας"
    assert go_lower("\u212a") == "k" and go_lower("ẞ") == "ß" and go_lower("ǅ") == "ǆ"
    rng = random.Random(5)
    alphabet = ["Σ", "İ", "A", "É", "ǅ", " ", "\u0301", "x", "Ω", "\u212a"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert go_lower(text) == "".join(go_lower(c) for c in text)  # context-free, unlike str.lower
    for code in range(sys.maxunicode + 1):
        c = chr(code)
        if 0xD800 <= code < 0xE000:
            continue
        low = go_lower(c)
        assert len(low) == 1, hex(code)  # a simple mapping maps one character to one
        if len(c.lower()) == 1:
            assert low == c.lower(), hex(code)


def test_memini_normalize_content_and_query_terms_follow_go():
    assert normalize_content("  Hello\u3000 WORLD\n") == "hello world" == go_normalize("  Hello\u3000 WORLD\n")
    assert normalize_content("A\x1cB") == "a\x1cb"  # one field in Go
    assert normalize_content("ΟΔΟΣ") == normalize_content("οδοσ") != normalize_content("οδος")
    assert query_terms("İstanbul trips") == ["istanbul", "trips"]
