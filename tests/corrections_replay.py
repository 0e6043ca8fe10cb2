"""``replay_scored(ds)``: a fact-history data set's timeline replayed through memini-keyword, memini-vector (hash
vectors) and recent-k, asked and scored at K = 1 and 5: the downstream half of the corrections loaders' fuzz
tests (a file that loads must also replay and score without an exception)."""

from __future__ import annotations

from memini_bench.core.dataset import Dataset


def replay_scored(ds: Dataset) -> None:
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.embed.hashing import HashEmbedder
    from memini_bench.evaluation import corrections as scoring
    from memini_bench.evaluation.timeline import Ask, run_guarded
    from memini_bench.loaders.corrections import timeline
    from memini_bench.systems.floors import RecentK
    from memini_bench.systems.memini import memini_systems

    systems = [*memini_systems(TextEncoder(HashEmbedder(16)))[2:], RecentK()]
    replayed = run_guarded(systems, ds, [*timeline(ds), Ask(ds.questions, lambda q: 100)], None)
    for k in (1, 5):
        scoring.table(replayed, k, 200, 0)
