"""What a missing extra says: ``-list`` tags only the entries whose extra is missing; a missing extra's line names
the entry the user asked for (never a flag they did not type) and, for MiniLM, the CPU-torch step first; a mistyped
suite is a mistyped suite even where the default embedder's extra is missing."""

from __future__ import annotations

import importlib.metadata
import re

import pytest
from cli_run import run_cli

from memini_bench.core import registry


def _tagged(capsys) -> dict[str, str]:
    code, out, _ = run_cli(["-list"], capsys)
    assert code == 0
    return {m.group(1): m.group(2) for m in re.finditer(r"^  (\S+).*\[needs extra ([\w-]+)\]", out, re.M)}


def _declared() -> dict[str, str]:
    return {e.name: e.extra for reg in registry.KINDS.values() for e in reg.entries() if e.extra}


def _installed(extra: str) -> bool:
    """The oracle: every distribution the extra lists in pyproject is importable as a distribution."""
    try:
        requires = importlib.metadata.requires("memini-bench") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("memini-bench is not installed (no metadata to read its extras from)")
    names = [re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0] for r in requires if f'extra == "{extra}"' in r]
    found = []
    for n in names:
        try:
            importlib.metadata.distribution(n)
            found.append(True)
        except importlib.metadata.PackageNotFoundError:
            found.append(False)
    return all(found)


def test_list_tags_exactly_the_entries_whose_extra_is_missing(capsys):
    declared = _declared()
    assert declared, "no built-in declares an extra"
    tagged = _tagged(capsys)
    assert tagged == {name: extra for name, extra in declared.items() if not _installed(extra)}


def test_list_tags_an_entry_once_its_distribution_is_gone(capsys, monkeypatch):
    if not _installed("lancedb"):
        pytest.skip("the lancedb extra is not installed here: nothing to take away")
    real = importlib.metadata.distribution

    def without_lancedb(name):
        if name == "lancedb":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", without_lancedb)
    tagged = _tagged(capsys)
    lance = {n for n, e in _declared().items() if e == "lancedb"}
    assert lance and lance <= set(tagged) and set(tagged.values()) >= {"lancedb"}
    assert all(e == "lancedb" or not _installed(e) for e in tagged.values())
    code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-systems", sorted(lance)[0]], capsys)
    assert code == 2 and err.strip().endswith(f"{sorted(lance)[0]} needs the lancedb extra (lancedb is not "
                                              "installed): pip install 'memini-bench[lancedb]'")


def test_the_minilm_message_gives_the_cpu_torch_step_first():
    message = str(registry.missing_extra("-embedder minilm", "minilm", "sentence_transformers"))
    torch_step = message.index("pip install torch --index-url https://download.pytorch.org/whl/cpu")
    assert torch_step < message.index("pip install 'memini-bench[minilm]'") and "\n" not in message


def test_the_reference_analyzer_message_names_no_flag(monkeypatch):
    import sys

    from memini_bench.errors import BenchError
    from memini_bench.retrieval import analyzer

    monkeypatch.setitem(sys.modules, "Stemmer", None)  # import Stemmer -> ImportError
    with pytest.raises(BenchError) as caught:
        analyzer._snowball()
    assert "-ref-stemmer" not in str(caught.value) and "memini-bench[reference]" in str(caught.value)


def test_a_mistyped_suite_is_named_before_any_extra(capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "sentence_transformers", None)  # as on a core install
    code, _, err = run_cli(["-suite", "locomoo", "-data", "x.json"], capsys)
    assert code == 2 and "-suite 'locomoo': unknown suite; did you mean locomo?" in err and "extra" not in err
