"""A System plugin that misbehaves on request (the fuzz of ``tests/evaluation/test_fuzz_plugins.py`` and the
runner's checks).

``BEHAVIOUR`` (a dict, set by the test before each run) says what goes wrong: ``raise_in`` names a hook
(factory, ingest, prepare, recall, close) that raises ``error`` (an exception instance or a callable making one);
``returns`` the container kind of recall's answer (list, tuple, generator, dict, none); ``extra`` hits appended after
the gold (``leak``: an item of another group, ``unknown``: an id in no group, ``duplicate``: the first hit again,
``too_many``: depth + 1 hits in all); ``bad`` one malformed field of the first hit (``str_ids``, ``int_id``,
``none_ids``, ``nan_score``, ``inf_score``, ``str_score``, ``bool_score``, ``none_content``, ``dict_hit``);
``sleep`` seconds a recall sleeps; ``factory_returns`` ``empty`` (no system) or ``int_name`` (a system named 7).
With no behaviour it returns each question's gold items first (a perfect oracle: recall 1 wherever the gold is in
the data set), then other items of the group; a query that is no question's (``-multihop``'s second hop: the query
plus a hit's text) gets the group's items in data set order. A leak replaces the last of the at most k hits, so each
recall leaks one hit. It drives the normal run and the modes that call the hooks themselves (``-qa``, ``-multihop``,
``-entity-bridge``: ``tests/modes/test_guarded_modes.py``).
"""

from __future__ import annotations

import time

from memini_bench.core.contract import Hit

BEHAVIOUR: dict = {}


def _raise(hook: str) -> None:
    if BEHAVIOUR.get("raise_in") == hook:
        error = BEHAVIOUR.get("error", ValueError("boom"))
        raise error() if callable(error) and not isinstance(error, BaseException) else error


class Misbehaving:
    name = "misbehaving"

    def ingest(self, items):
        _raise("ingest")
        self.items = list(items)

    def prepare(self, queries):
        _raise("prepare")

    def close(self):
        _raise("close")

    def recall(self, group, query, k, *, now=None, context=None):
        _raise("recall")
        if BEHAVIOUR.get("sleep"):
            time.sleep(BEHAVIOUR["sleep"])
        gold = BEHAVIOUR.get("gold", {}).get(query, ())
        mine = [it for it in self.items if it.group == group]
        ranked = sorted(mine, key=lambda it: it.id not in gold)
        hits = [Hit((it.id,), 1.0 / (n + 1), it.content) for n, it in enumerate(ranked[:k])]
        extra = BEHAVIOUR.get("extra")
        if extra == "leak":
            other = next((it for it in self.items if it.group != group), None)
            if other is not None:
                hits = [*hits[: k - 1], Hit((other.id,), 0.0, other.content)]
        elif extra == "unknown":
            hits = [*hits[: k - 1], Hit(("no-such-id",), 0.0, "x")]
        elif extra == "duplicate" and hits:
            hits = [*hits[: k - 1], hits[0]]
        elif extra == "too_many":
            hits = hits + [Hit((f"pad{i}",), 0.0, "pad") for i in range(k + 1 - len(hits))]
        bad = BEHAVIOUR.get("bad")
        if bad and hits:
            h = hits[0]
            hits[0] = {
                "str_ids": Hit(h.ids[0], h.score, h.content), "int_id": Hit((7,), h.score, h.content),
                "none_ids": Hit(None, h.score, h.content), "nan_score": Hit(h.ids, float("nan"), h.content),
                "inf_score": Hit(h.ids, float("inf"), h.content), "str_score": Hit(h.ids, "0.5", h.content),
                "bool_score": Hit(h.ids, True, h.content), "none_content": Hit(h.ids, h.score, None),
                "dict_hit": {"ids": h.ids, "score": h.score, "content": h.content},
            }[bad]
        kind = BEHAVIOUR.get("returns", "list")
        if kind == "tuple":
            return tuple(hits)
        if kind == "generator":
            return (h for h in hits)
        if kind == "dict":
            return {"hits": hits}
        if kind == "none":
            return None
        return hits


def make(ctx):
    """The misbehaving plugin (``BEHAVIOUR`` decides how)."""
    _raise("factory")
    made = BEHAVIOUR.get("factory_returns")
    if made == "empty":
        return []
    if made == "int_name":
        system = Misbehaving()
        system.name = 7
        return system
    return Misbehaving()
