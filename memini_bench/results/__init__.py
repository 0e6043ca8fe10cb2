"""Layer 6: results files: the typed schema, writing (one unit) and reading, identity, provenance, per-question
files, atomic I/O, plots."""
