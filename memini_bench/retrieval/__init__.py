"""Retrieval building blocks: the keyword (BM25) and vector legs, fusion, the composite re-rank, dedup."""
