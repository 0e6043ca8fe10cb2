"""README and docs generators (not part of the runtime package)."""
