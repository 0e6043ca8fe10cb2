"""The retrieval settings' defaults and names that the hybrid's flags list (``systems.config.HybridConfig``), in a
module that imports nothing, so that building the CLI's flags imports no numpy: memini's fusion alpha and RRF k
(``retrieval.fusion`` uses them), the temporal extractors' names (``retrieval.temporal`` holds the extractors) and
the keyword backends' names (``systems.config.keyword_index`` builds them)."""

DEFAULT_ALPHA = 0.5
DEFAULT_RRF_K = 5.0
#: ``retrieval.temporal``: EXTRACTORS (regex, extended) then EXTRACTOR_FACTORIES (llm); a test holds them equal.
EXTRACTOR_NAMES = ("regex", "extended", "llm")
KEYWORD_BACKENDS = ("numpy", "fts5")
