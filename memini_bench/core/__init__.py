"""Layer 1, what every layer shares: data set types, the System contract, run types, the registries, typed settings."""
