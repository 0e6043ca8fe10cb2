"""Token F1, exact match and BLEU-1 against hand-computed cases and nltk called directly."""

from __future__ import annotations

import math

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from memini_bench.qa import lexical


def test_normalisation_is_squads():
    assert lexical.normalize("The  Cat, sat on A mat!") == "cat sat on mat"
    assert lexical.normalize("an Apple-pie") == "applepie"  # punctuation is dropped, not split on
    assert lexical.tokens("  The the THE ") == []


@pytest.mark.parametrize("pred, ref, f1", [
    ("Porto", "porto.", 1.0),
    ("She moved to Porto in 2023", "Porto", 2 / 7),  # 6 tokens: P = 1/6, R = 1: F1 = 2PR/(P+R) = 2/7
    ("red red blue", "red blue blue", 2 / 3),  # common = min counts: red 1 + blue 1 = 2; P = R = 2/3
    ("Lisbon", "Porto", 0.0),
    ("the", "a", 1.0),  # both empty after normalisation
    ("the", "Porto", 0.0),
])
def test_token_f1_hand_cases(pred, ref, f1):
    assert lexical.token_f1(pred, ref) == pytest.approx(f1)


def test_exact_match():
    assert lexical.exact_match("The Porto!", "porto") == 1.0
    assert lexical.exact_match("in Porto", "Porto") == 0.0


def test_bleu1_hand_case_and_nltk_directly():
    # pred "cat sat mat mat" vs ref "cat sat on mat": clipped unigram matches cat, sat, mat = 3 of 4; same length so
    # brevity penalty 1: BLEU-1 = 0.75
    assert lexical.bleu1("The cat sat mat mat", "the cat sat on the mat") == pytest.approx(0.75)
    # a short prediction: 2 tokens vs 4: BP = exp(1 - 4/2) = e^-1, precision 1
    assert lexical.bleu1("cat mat", "cat sat on mat") == pytest.approx(math.exp(-1))
    smooth = SmoothingFunction().method1
    for pred, ref in [("Alice moved to Porto last June", "Porto"), ("I don't know", "Miso"),
                      ("Go and Rust", "the payments service is written in Go")]:
        direct = sentence_bleu([lexical.tokens(ref)], lexical.tokens(pred), weights=(1, 0, 0, 0),
                               smoothing_function=smooth)
        assert lexical.bleu1(pred, ref) == pytest.approx(direct)


def test_summarise_skips_empty_references():
    s = lexical.summarise([("Porto", "Porto"), ("Lisbon", "Porto"), ("I don't know", "")])
    assert (s.scored, s.skipped) == (2, 1)
    assert (s.f1, s.exact_match) == (pytest.approx(0.5), pytest.approx(0.5))
