"""memini's published figures for the studies (behaviour doc section 16, bench/README.md@05e7da55), in %.

memini ran them on the same LoCoMo-10 file we have; its embedders were served over HTTP (qwen3-embedding-0.6b,
all-MiniLM-L6-v2). Its contradiction quads and stale-vs-fresh topics are its own authored sets, not ours, and its
wild false positives come from LongMemEval-S (500 pairs), which we do not have (we use our LongMemEval sample and
LoCoMo): those figures are for other data and are printed as such.
"""

from __future__ import annotations

# Hybrid RRF on LoCoMo turns (R@5, R@10; None = not given): memini's rrfK 5, and rrfK 60 over deep pools (its
# recency argument: the flat decay loses 7 points of R@5).
RRF_K = {5.0: (60.1, 71.0), 60.0: (52.8, None)}

# Quality scoreboard (memini's bench README, section 13 of the behaviour doc): injections, pre-fix -> after the
# fix, per embedder (qwen3-0.6b, MiniLM, nomic, bge-small), and durable MRR of MiniLM's composite row.
QUALITY_INJECTIONS = {"qwen3-0.6b": (50, 5), "minilm": (51, 9), "nomic": (54, 14), "bge-small": (45, 4)}
QUALITY_INJECTION_CHANGE = (-72, -91)  # the range memini quotes, in %
QUALITY_DURABLE_MRR_MINILM = (0.20, 0.50)

# Multi-hop (277 LoCoMo category-1 questions with >= 2 gold, k 10): full-gold coverage % per regime.
MULTIHOP_FULL_GOLD = {
    "minilm": {"single": 15.9, "realistic": 19.5, "oracle": 22.0},
    "qwen3-0.6b": {"single": 16.2, "realistic": 22.7, "oracle": 26.4},
}
MULTIHOP_QUESTIONS = 277

# Entity bridge: share of single-recall failures fully bridgeable under a DF cap <= 10% (a range over embedders),
# missing golds outside the 50-deep pool, and the anchored second hop's full-gold %, by vocabulary: memini's text
# gives "19.1 / 22.4 (qwen3) and 17.3 / 20.6 (MiniLM)" for the entity / concept vocabularies (not DF caps).
ENTITY_BRIDGEABLE_RANGE = (1.3, 2.6)
MISSING_NOT_IN_POOL = 59.0
ENTITY_HOP_FULL_GOLD = {"qwen3-0.6b": {"entities": 19.1, "concepts": 22.4},
                        "minilm": {"entities": 17.3, "concepts": 20.6}}
# The concept vocabulary: the share its links reach "in principle" (a range over embedders), and promotion's
# covered questions (low, high over the DF caps) against single recall's.
CONCEPT_LINKED_RANGE = (42, 43)
CONCEPT_PROMOTION = {"qwen3-0.6b": (46, 49, 48), "minilm": (39, 41, 44)}

# The no-LLM entity extractor: (precision, recall, sentences) on memini's 30 hand-labelled LoCoMo turns and on
# its scoreboard-corpus templates (sentence count not given).
ENTITY_EXTRACTOR = {"locomo": (1.00, 1.00, 30), "scoreboard": (1.00, 0.75, 0)}

# Contradiction detector on memini's 36 authored quads (counts out of 36).
DETECTOR = {"restatement_as_update": 0, "update_recall": 29, "value_recall": (17, 22), "polarity_recall": (12, 14),
            "distinct_as_update": 1, "quads": 36}
# Similarity-gate floors: (update recall, restatement misfires / distinct misfires), out of 36.
GATE = {"qwen3-0.6b": {0.55: (29, 0, 1), 0.625: (26, 0, 0)}, "minilm": {0.55: (27, 0, 1), 0.625: (20, 0, 0)}}
WILD_FALSE_POSITIVE_PCT = 0.0  # 500 LongMemEval-S nearest-neighbour pairs
# Stale-above-fresh at k 3 over 12 topics: baseline, confidence shrink (a range), valid_to stamp.
STALE_ABOVE_FRESH = {"qwen3-0.6b": {"baseline": "10/12", "shrink": "4-5/12", "valid_to": "0/12"},
                     "minilm": {"baseline": "9/12", "shrink": "5-6/12", "valid_to": "0/12"}}


def embedder_key(embedder: str) -> str:
    """Our embedder name as memini's published tables name it ("" when memini published nothing for it)."""
    return "minilm" if embedder in ("minilm", "st:sentence-transformers/all-MiniLM-L6-v2") else ""
