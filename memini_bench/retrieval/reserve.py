"""memini's durable-tier reserve (``service.reserveDurableTiers``): keep up to ``reserve`` durable memories
(semantic or procedural) in the top-``limit`` window of a composite-ranked candidate list, but only durables that
are relevance-competitive.

Rule, over candidates ranked best first with composite scores ``s`` (``r = min(reserve, limit)``):

1. No-op when ``r <= 0``, ``limit <= 0``, the list has at most ``limit`` entries, or the window
   ``[0, limit)`` already holds ``r`` or more durables.
2. Walk the candidates below the window in order; skip non-durables. For each durable candidate ``c``:
   - the evictee ``e`` is the lowest-ranked non-durable still selected in the window (none left: stop);
   - the bar is ``max(ratio * s[e], top_anchor * s[0])`` (memini: ratio 0.5, top anchor 0.4);
   - ``s[c] < bar``: stop (later candidates score no higher and the bar never falls);
   - otherwise ``c`` replaces ``e`` in the window; stop once ``r`` durables are selected.
3. Output: the window's first entry (the top hit is never displaced), the promoted durables in walk order, the
   rest of the selected window in order, then every unselected candidate in order.
   memini's one exception, kept here: with ``reserve >= limit`` and a window whose only non-durable is the top
   hit, that hit is the evictee (the first selected window entry then leads). With ``reserve < limit`` the
   window always keeps a non-durable below the top when it needs one, so the top hit stays first.
   Dedup and the cut to ``limit`` come after (memini's order: composite -> reserve -> dedup -> cut).
"""

from __future__ import annotations

from collections.abc import Sequence

PROMOTE_RATIO = 0.5
TOP_ANCHOR = 0.4


def reserve_order(scores: Sequence[float], durable: Sequence[bool], limit: int, reserve: int, *,
                  ratio: float = PROMOTE_RATIO, top_anchor: float = TOP_ANCHOR) -> list[int]:
    """The new order of the ranked list as positions into it (the identity when the reserve does nothing)."""
    n = len(scores)
    identity = list(range(n))
    if reserve <= 0 or limit <= 0 or n <= limit:
        return identity
    reserve = min(reserve, limit)
    evictable = [i for i in range(limit) if not durable[i]]  # non-durables in the window, best first
    count = limit - len(evictable)
    if count >= reserve:
        return identity
    selected = [True] * limit
    promoted: list[int] = []
    for c in range(limit, n):
        if count >= reserve:
            break
        if not durable[c]:
            continue
        if not evictable:
            break  # the window is all durable; nothing to give up
        evictee = evictable[-1]
        bar = max(ratio * scores[evictee], top_anchor * scores[0])
        if scores[c] < bar:
            break
        evictable.pop()
        selected[evictee] = False
        promoted.append(c)
        count += 1
    if not promoted:
        return identity
    window = [i for i in range(limit) if selected[i]]
    chosen = set(window) | set(promoted)
    rest = [i for i in range(n) if i not in chosen]
    return window[:1] + promoted + window[1:] + rest
