"""Known data sets: the catalog (``registry``), resumable verified downloads (``download``) and the ``memini-bench
data`` subcommand (``cli``). Layer 3, beside the loaders: ``loaders.load`` resolves ``-data NAME`` through
``registry.resolve_data``."""
