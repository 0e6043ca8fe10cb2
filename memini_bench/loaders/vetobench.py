"""``-suite vetobench``: VetoBench's fixtures folder (every corpus/scenarios pair, one group per suite) or one
corpus file. Items are the active decisions (content = decision + rationale; the full decision, rejected options
included, rides in ``item.meta["decision"]``); questions are the scenarios (query = task, gold = the veto
decision, category = trap kind, ``now`` = ``as_of``, ``files_in_scope`` in ``question.context``). The reading and
checking live in ``memini_bench.vetobench.fixtures`` (imported here on use: it imports ``loaders._json``)."""

from __future__ import annotations

from memini_bench.core.dataset import Dataset, finish


def load_vetobench(path: str, **_: object) -> Dataset:
    from memini_bench.vetobench.fixtures import read_suites, to_dataset

    return finish(to_dataset(read_suites(path)), path)
