"""memini-bench: a retrieval benchmark harness for agent memory (a port of memini's Go bench, and beyond)."""

__version__ = "0.1.0"
