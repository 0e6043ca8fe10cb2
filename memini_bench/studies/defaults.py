"""The entity-bridge diagnostic's defaults and names that its flags list (``modes.specs.EntityBridgeOptions``), in a
module that imports nothing, so that building the CLI's flags imports no study code (``studies.bridge`` uses them)."""

DEFAULT_CAPS = (1.0, 0.10, 0.05)
DEFAULT_VOCABULARY = "entities"
#: ``studies.bridge.VOCABULARIES``' names, in its order (a test holds them equal).
VOCABULARY_NAMES = ("entities", "concepts")
