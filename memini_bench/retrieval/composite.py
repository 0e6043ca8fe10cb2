"""memini's composite re-rank (``search.Rerank``) and memory quality (``memory.Quality``), and content dedup.

    rel_i       = score_i / max(score)                    (0 when max <= 0)
    qhat_i      = Quality_i / max(Quality)                 (1 when every quality is 0)
    composite_i = rel_i * (relevance + quality_w * qhat_i)  [memini: relevance 0.80, quality 0.20]
                  + recency_w * recency_i + importance_w * clamp01(importance_i)

    Quality     = Salience * EffectiveConfidence * (1 + ln(1 + access))        (semantic, procedural)
                  ... * exp(-age / 7 d)  (episodic, working)
    Salience    = clamp01(tier_weight * (0.5 + 0.5 * clamp01(importance)))
                  tier_weight: procedural 0.95, semantic 0.90, episodic 0.55, working 0.30, other 0.5
    EffectiveConfidence = 1 when confidence is unset or the tier is short-term (episodic, working), else the
                  confidence decayed by 0.05 per week after one week's grace, floored at 0.05.

With every item semantic, importance 0, no confidence and equal access counts (memini's bench without its
reinforcement side effect) qhat == 1, the composite equals rel, and the fused order is kept exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memini_bench.text import go_strings
from memini_bench.text.go_strings import go_normalize

TIER_WEIGHT = {"procedural": 0.95, "semantic": 0.90, "episodic": 0.55, "working": 0.30}
DURABLE_TIERS = ("semantic", "procedural")
SHORT_TERM_TIERS = ("episodic", "working")
WEEK_S = 7 * 86400.0


@dataclass(frozen=True, slots=True)
class RerankWeights:
    relevance: float = 0.80
    quality: float = 0.20
    recency: float = 0.0
    importance: float = 0.0


DEFAULT_WEIGHTS = RerankWeights()


def tier_arrays(tiers: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per memory: its tier weight and whether its tier is short-term (episodic, working)."""
    return (np.array([TIER_WEIGHT.get(t, 0.5) for t in tiers], dtype=np.float64),
            np.array([t in SHORT_TERM_TIERS for t in tiers], dtype=bool))


def qualities(tiers: Sequence[str], importance: np.ndarray, confidence: np.ndarray, access: np.ndarray,
              age_s: np.ndarray) -> np.ndarray:
    """memini's Quality for many memories at once; ``confidence`` holds NaN where it is unset."""
    tier_weight, short = tier_arrays(tiers)
    return qualities_from(tier_weight, short, importance, confidence, access, age_s)


def qualities_from(tier_weight: np.ndarray, short: np.ndarray, importance: np.ndarray, confidence: np.ndarray,
                   access: np.ndarray, age_s: np.ndarray) -> np.ndarray:
    """``qualities`` with the tiers already turned into ``tier_arrays`` (the hot path keeps them per item)."""
    sal = np.clip(tier_weight * (0.5 + 0.5 * np.clip(importance, 0.0, 1.0)), 0.0, 1.0)
    decayed = np.maximum(confidence - 0.05 * np.maximum(age_s / WEEK_S - 1.0, 0.0), 0.05)
    conf = np.where(np.isnan(confidence) | short, 1.0, decayed)
    reinforce = np.log1p(access)
    q = sal * conf * (1.0 + reinforce)
    decay = np.exp(-np.maximum(age_s, 0.0) / WEEK_S)
    return np.where(short, q * decay, q)


def composite(scores: np.ndarray, quality: np.ndarray, weights: RerankWeights = DEFAULT_WEIGHTS,
              recency: np.ndarray | None = None, importance: np.ndarray | None = None) -> np.ndarray:
    """The composite score of each candidate (formula in the module docstring)."""
    top = scores.max() if len(scores) else 0.0
    rel = scores / top if top > 0 else np.zeros_like(scores)
    qmax = quality.max() if len(quality) else 0.0
    qhat = quality / qmax if qmax > 0 else np.ones_like(quality)
    out = rel * (weights.relevance + weights.quality * qhat)
    if recency is not None and weights.recency:
        out = out + weights.recency * recency
    if importance is not None and weights.importance:
        out = out + weights.importance * np.clip(importance, 0.0, 1.0)
    return out


def rerank(ids: np.ndarray, scores: np.ndarray, quality: np.ndarray,
           weights: RerankWeights = DEFAULT_WEIGHTS, **terms: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Sort candidates by composite, descending, ties by input position; returns (ids, composite scores)."""
    comp = composite(scores, quality, weights, **terms)
    order = np.argsort(-comp, kind="stable")
    return ids[order], comp[order]


def rerank_uniform(ids: np.ndarray, scores: np.ndarray,
                   weights: RerankWeights = DEFAULT_WEIGHTS) -> tuple[np.ndarray, np.ndarray]:
    """``rerank`` when every candidate's quality is the same value q (no recency or importance term): then
    ``qhat`` is exactly 1.0 for all (``q / q``, or the all-zero case's ones), so the quality maths is skipped and
    ``composite = rel * (relevance + quality * 1.0)`` gives the same floats."""
    top = scores.max() if len(scores) else 0.0
    rel = scores / top if top > 0 else np.zeros_like(scores)
    scale = weights.relevance + weights.quality * 1.0
    comp = rel if scale == 1.0 else rel * scale  # x * 1.0 is x
    if scale >= 0 and top > 0 and not (scores[1:] > scores[:-1]).any():
        return ids, comp  # scores already descending: so is comp, and the stable sort keeps the order
    order = np.argsort(-comp, kind="stable")
    return ids[order], comp[order]


def normalize_content(text: str) -> str:
    """memini's dedup key (``memory.NormalizeContent``): whitespace runs collapsed to one space, trimmed, then
    lowercased, by Go's rules (``text.go_strings.go_normalize``)."""
    return go_normalize(text)


def dedup_key_ids(contents: Sequence[str]) -> np.ndarray:
    """Per text, a number standing for its dedup key: equal numbers exactly when ``normalize_content`` is equal,
    numbered in order of first occurrence (each distinct text is looked at once).

    Where the compiled ``_words`` was built, the keys are not made: each distinct text's key is hashed in one C
    pass (``normalized_hashes``), texts with a hash not seen before get the next number, and only texts whose hash
    was seen before have their keys made and compared (a text differing from an earlier one in case or spacing
    alone, or a hash collision), so the numbers are ``reference_key_ids``' and memory holds no copy of the corpus."""
    by_text: dict[str, int] = {}
    for text in contents:
        by_text.setdefault(text, len(by_text))
    text_ids = np.fromiter((by_text[text] for text in contents), dtype=np.int64, count=len(contents)) \
        if len(by_text) < len(contents) else np.arange(len(contents), dtype=np.int64)
    distinct = list(by_text)
    del by_text
    words = go_strings.WORDS
    if words is None:
        return reference_key_ids(distinct)[text_ids]
    hashes = np.frombuffer(words.normalized_hashes(distinct), dtype=np.uint64).tolist()
    first_of: dict[int, int] = {}  # hash -> its first text
    keys_of: dict[int, list[tuple[str, int]]] = {}  # hash -> (key, number) of each distinct key, once it recurs
    key_ids = np.empty(len(distinct), dtype=np.int64)
    count = 0
    for t, h in enumerate(hashes):
        first = first_of.setdefault(h, t)
        if first == t:  # a hash not seen before: a new key
            key_ids[t] = count
            count += 1
            continue
        known = keys_of.get(h)
        if known is None:
            known = keys_of[h] = [(normalize_content(distinct[first]), int(key_ids[first]))]
        key = normalize_content(distinct[t])
        number = next((n for k, n in known if k == key), None)
        if number is None:
            number = count
            count += 1
            known.append((key, number))
        key_ids[t] = number
    return key_ids[text_ids]


def reference_key_ids(contents: Sequence[str]) -> np.ndarray:
    """``dedup_key_ids`` by making every key (the plain path, and the compiled one's reference)."""
    by_text: dict[str, int] = {}
    by_key: dict[str, int] = {}
    out = np.empty(len(contents), dtype=np.int64)
    for i, text in enumerate(contents):
        key_id = by_text.get(text)
        if key_id is None:
            key_id = by_text[text] = by_key.setdefault(normalize_content(text), len(by_key))
        out[i] = key_id
    return out


def dedup_ids(key_ids: np.ndarray, k: int) -> np.ndarray:
    """``dedup`` on key numbers: the positions of the first ``k`` candidates whose key was not seen earlier."""
    ordered = np.sort(key_ids)
    if not (ordered[1:] == ordered[:-1]).any():  # no repeat: every candidate is a first occurrence
        return np.arange(min(k, len(key_ids)) if k > 0 else len(key_ids))
    _, first = np.unique(key_ids, return_index=True)
    first.sort()
    return first[:k] if k > 0 else first  # (``dedup`` keeps every first occurrence when k <= 0)


def dedup(keys: Sequence[str], k: int) -> list[int]:
    """Positions of the first ``k`` candidates whose dedup key (``normalize_content``) was not seen earlier."""
    seen: set[str] = set()
    keep: list[int] = []
    for pos, key in enumerate(keys):
        if key in seen:
            continue
        seen.add(key)
        keep.append(pos)
        if len(keep) == k:
            break
    return keep
