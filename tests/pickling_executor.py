"""A test executor (``-executor pickling_executor:make``): the ``-executor ray`` contract without Ray.

Everything runs in this process, but every object crosses a pickle round trip as it would to a worker: the state
argument, each item and each result of ``map_stateful``, the settings and each piece of ``chunk_map`` (which
embeds with an embedder built from the unpickled settings, in pieces of ``PIECE`` texts). ``calls`` counts what
went through it, so a test can tell the executor was used.
"""

from __future__ import annotations

import pickle

import numpy as np

from memini_bench.embed.factory import build_embedder

PIECE = 7


def _copy(obj):
    return pickle.loads(pickle.dumps(obj))


class PicklingExecutor:
    name = "pickling"

    def __init__(self, options) -> None:
        self.options = options
        self.calls = {"pieces": 0, "items": 0}

    def describe(self) -> dict[str, object]:
        return {"name": self.name}

    def chunk_map(self, settings, embedder):
        worker = build_embedder(_copy(settings))

        def run(chunks):
            for chunk in chunks:
                parts = []
                for i in range(0, len(chunk), PIECE):
                    self.calls["pieces"] += 1
                    parts.append(_copy(worker.encode(_copy(list(chunk[i:i + PIECE])))))
                yield np.concatenate(parts)

        return run

    def map_stateful(self, make_state, state_arg, work, items):
        state = make_state(_copy(state_arg))
        out = []
        for item in items:
            self.calls["items"] += 1
            out.append(_copy(work(state, _copy(item))))
        return out


def make(options) -> PicklingExecutor:
    return PicklingExecutor(options)
