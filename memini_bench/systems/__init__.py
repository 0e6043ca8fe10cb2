"""Layer 5: what is measured: memini's systems, the query rewrite, the peers' adapters, and the lineup that
turns names into System objects."""
