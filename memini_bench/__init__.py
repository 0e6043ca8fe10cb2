"""memini-bench: a retrieval benchmark harness for agent memory (a port of memini's Go bench, and beyond)."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """``memini_bench.evaluate``, ``memini_bench.score`` and ``memini_bench.Report`` (the Python API,
    ``memini_bench.api``), imported on first use so ``import memini_bench`` stays light."""
    if name in ("evaluate", "score", "Report"):
        import importlib

        # by name: the root is imported by every layer, so it holds no static import of the top one
        return getattr(importlib.import_module("memini_bench.api"), name)
    raise AttributeError(f"module 'memini_bench' has no attribute {name!r}")
