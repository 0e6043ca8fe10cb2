"""VetoBench's defaults and names that its flags list (``modes.specs.VetoOptions``), in a module that imports nothing,
so that building the CLI's flags imports no scorer: ``composite`` (the veto-composite systems), ``scale`` (the
distractor curve) and ``conditions`` (the live layer) use them."""

COMPOSITE_EMBEDDER = "fnv64"  # the doc's embedder (the -composite-embedder default)
VETO_FILES = ("known", "none", "both")
DEFAULT_FILES = "both"
DEFAULT_SIZES = (24, 100, 300, 1000, 3000)
DEFAULT_SEED = 7
EXTRACT_E2E = "extract-e2e"
