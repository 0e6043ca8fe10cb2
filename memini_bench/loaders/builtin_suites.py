"""The built-in suites as ``Suite`` entries (registered by name in ``memini_bench.core.builtins``)."""

from __future__ import annotations

from memini_bench.core.dataset import Dataset
from memini_bench.loaders import LoadOptions, Suite
from memini_bench.loaders.corrections import load_corrections
from memini_bench.loaders.file import load_file, load_sample
from memini_bench.loaders.locomo import load_locomo, load_locomo_sessions
from memini_bench.loaders.longmemeval import load_longmemeval
from memini_bench.loaders.vetobench import load_vetobench


def _longmemeval(path: str, options: LoadOptions) -> Dataset:
    return load_longmemeval(path, session_doc_mode=options.session_doc, abstention=options.abstention,
                            shared_haystack=options.shared_haystack, granularity=options.granularity)


def _locomo(path: str, options: LoadOptions) -> Dataset:
    if options.unit == "turn":
        return load_locomo(path)
    from memini_bench.loaders.locomo_units import load_locomo_unit

    return load_locomo_unit(path, options.unit)


def _beam(path: str, options: LoadOptions) -> Dataset:
    from memini_bench.loaders.beam import load_beam

    return load_beam(path)


SAMPLE = Suite("sample", lambda path, _: load_sample(path), needs_data=False)
FILE = Suite("file", lambda path, _: load_file(path))
LONGMEMEVAL = Suite("longmemeval", _longmemeval, uses=frozenset({"session_doc", "abstention", "shared_haystack",
                                                                  "granularity", "exclude"}))
LOCOMO = Suite("locomo", _locomo, uses=frozenset({"unit", "exclude"}))
BEAM = Suite("beam", _beam)
LOCOMO_SESSIONS = Suite("locomo-sessions", lambda path, _: load_locomo_sessions(path), uses=frozenset({"exclude"}))
VETOBENCH = Suite("vetobench", lambda path, _: load_vetobench(path))
CORRECTIONS = Suite("corrections", lambda path, options: load_corrections(
    path, shared_haystack=options.shared_haystack, granularity=options.granularity), needs_data=False,
    uses=frozenset({"shared_haystack", "granularity"}))  # read for a LongMemEval file only
