"""memini's remaining studies (issue 13), each a pure computation with its own markdown renderer:

- ``multihop``: the multi-hop retrieval ceiling (memini ``bench/multihop_test.go``), run by the ``-multihop`` mode;
- ``entities`` + ``bridge``: the no-LLM entity extractor, its precision/recall on ``data/entities-labelled.json``
  and the entity-bridge diagnostic on the failed multi-hop questions (``-entity-bridge`` mode);
- ``contradict`` + ``contradiction``: the no-LLM contradiction detector and its study on the authored quads
  (``data/contradiction-quads.json``), ``python -m memini_bench.studies.contradiction``;
- ``published``: memini's published figures for these studies, printed beside ours.

Every renderer takes the results JSON a study wrote (never typed numbers), so README tables are generated.
"""
