"""Go's ``strings.ToLower`` and ``strings.Fields``, where memini's Go code applies them: the query's keyword terms
(``ftsQuery``), the ``hash`` embedder's words (``embedtest.Fake``), the dedup key (``memory.NormalizeContent``,
``strings.ToLower(strings.Join(strings.Fields(s), " "))``) and the temporal extractor's lowercased query.

Python's own ``str.lower`` and ``str.split`` differ from them on a few characters:

- ``strings.ToLower`` maps each rune by Unicode's *simple* lowercase mapping (``unicode.ToLower``); ``str.lower``
  applies the full one, which differs in exactly two places: U+0130 (İ) becomes "i" + U+0307 instead of "i", and a
  capital sigma that ends a word becomes ς (U+03C2) instead of σ (U+03C3). ``go_lower`` maps those two first.
- ``strings.Fields`` splits at ``unicode.IsSpace``: ``\\t \\n \\v \\f \\r``, space, U+0085, U+00A0 and the
  White_Space property above Latin-1 (``GO_SPACES``). ``str.split()`` also splits at U+001C..U+001F (the
  information separators, which ``str.isspace`` counts as space and Go does not); ``go_fields`` keeps them.

Both are what Python does wherever those characters are absent (the usual case, checked first). Unicode versions
may still differ (Python 3.11 ships Unicode 14, Go 1.21+ Unicode 15) for characters assigned since.
"""

from __future__ import annotations

import os
import re
from types import ModuleType

# unicode.IsSpace (Go's src/unicode/graphic.go and the White_Space table of tables.go)
GO_SPACES = ("\t", "\n", "\x0b", "\x0c", "\r", " ", "\x85", "\xa0", "\u1680",
             *(chr(c) for c in range(0x2000, 0x200B)), "\u2028", "\u2029", "\u202f", "\u205f", "\u3000")
NOT_GO_SPACES = ("\x1c", "\x1d", "\x1e", "\x1f")  # str.isspace() but not unicode.IsSpace
_GO_SPACE_RUN = re.compile("[" + "".join(GO_SPACES) + "]+")
_SIMPLE_LOWER = str.maketrans({"\u0130": "i", "\u03a3": "\u03c3"})


def go_lower(text: str) -> str:
    """Go's ``strings.ToLower``: each character's simple lowercase mapping (see the module docstring)."""
    if text.isascii() or ("\u0130" not in text and "\u03a3" not in text):
        return text.lower()
    return text.translate(_SIMPLE_LOWER).lower()


def go_fields(text: str) -> list[str]:
    """Go's ``strings.Fields``: the maximal runs of characters that are not ``unicode.IsSpace``."""
    if "\x1c" not in text and "\x1d" not in text and "\x1e" not in text and "\x1f" not in text:
        return text.split()
    return [field for field in _GO_SPACE_RUN.split(text) if field]


def go_words(text: str) -> list[str]:
    """``strings.Fields(strings.ToLower(text))``: the hash embedder's words."""
    return go_fields(go_lower(text))


def go_normalize(text: str) -> str:
    """memini's ``NormalizeContent``: ``strings.ToLower(strings.Join(strings.Fields(text), " "))`` (the join in C,
    ``_words.fields_joined``, where it was built: the same string without a list of every word)."""
    if WORDS is not None:
        return go_lower(WORDS.fields_joined(text))
    return go_lower(" ".join(go_fields(text)))


def compiled_words() -> ModuleType | None:
    """The compiled ``_words`` (``hash_buckets``: the hash embedder's words and buckets), or None where it was not
    built or ``MEMINI_BENCH_KERNELS=0`` is set."""
    if os.environ.get("MEMINI_BENCH_KERNELS", "1") == "0":
        return None
    try:
        from memini_bench.text import _words
    except ImportError:
        return None
    return _words


WORDS = compiled_words()
