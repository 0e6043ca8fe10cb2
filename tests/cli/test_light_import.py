"""`import memini_bench.cli` stays light, and a verb's command is built from its mode's spec alone: numpy, scipy,
torch and the modes' implementations are imported only when a verb runs (behaviour, read from ``sys.modules`` in
a fresh interpreter; no clock is read)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "scipy", "torch", "sentence_transformers", "transformers", "sklearn", "pandas", "ray", "openvino")
#: The modes' implementations: every module of memini_bench/modes but the package, its options, specs and
#: ``score``'s own options, and the flat form's routes (read from the folder, so a new mode module is held to it
#: too).
IMPLEMENTATIONS = sorted(f"memini_bench.modes.{p.stem}" for p in (ROOT / "memini_bench" / "modes").glob("*.py")
                         if p.stem not in ("__init__", "options", "specs", "routes", "score_options"))
#: What else a run needs and the flags do not: the systems, the embedders, the scorers, the results writers.
RUN_ONLY = ("memini_bench.systems.memini", "memini_bench.embed.factory", "memini_bench.embed.encoder",
            "memini_bench.evaluation.metrics", "memini_bench.results.write", "memini_bench.results.identity",
            "memini_bench.retrieval.fusion", "memini_bench.vetobench.composite", "memini_bench.studies.bridge")


def _loaded(code: str) -> set[str]:
    """The modules a fresh interpreter holds after ``code`` (this checkout first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def _heavy(loaded: set[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in loaded} & set(HEAVY))


def test_the_implementations_list_is_read_from_the_package():
    assert {"memini_bench.modes.run_systems", "memini_bench.modes.sweep", "memini_bench.modes.qa",
            "memini_bench.modes.common"} <= set(IMPLEMENTATIONS)


def test_importing_the_cli_loads_no_heavy_package_and_no_mode():
    loaded = _loaded("import memini_bench.cli")
    assert _heavy(loaded) == []
    assert sorted(loaded & {*IMPLEMENTATIONS, *RUN_ONLY}) == []


def test_every_help_is_built_without_a_mode_or_numpy():
    """--help, --help-all, every verb's and study's help and every help topic: from the specs and the option
    classes alone."""
    code = """
import click
from memini_bench.cli import command, flat_command
from memini_bench.cli.verbs import verb_command
from memini_bench.modes import all_verbs
for verb in all_verbs():
    if verb != "list":  # list's help names its topics, read from the listing itself
        cmd = verb_command(verb)
        cmd.get_help(click.Context(cmd, info_name="memini-bench " + verb))
ctx = click.Context(command, info_name="memini-bench")
command.get_help(ctx)
ctx.help_all = True
command.get_help(ctx)
for topic in command.topic_list:
    command.topic_help(ctx, topic.name)
"""
    loaded = _loaded(code)
    assert _heavy(loaded) == []
    assert sorted(loaded & {*IMPLEMENTATIONS, *RUN_ONLY}) == []


def test_the_flat_form_routes_without_importing_a_mode():
    """Parsing the flat form's flags into options and routing them (``modes.routes``) imports no mode either;
    dispatching then imports only the mode the route names."""
    code = """
from memini_bench.modes.options import RunOptions
from memini_bench.modes.routes import route
assert route(RunOptions.build({"sweep": "fusion=0.3,0.5", "suite": "sample"})) == "sweep"
assert route(RunOptions.build({"rerank_url": "http://127.0.0.1:9", "suite": "sample"})) == "study rerank-tier"
assert route(RunOptions.build({"suite": "sample"})) == "run"
"""
    loaded = _loaded(code)
    assert _heavy(loaded) == []
    assert sorted(loaded & set(IMPLEMENTATIONS)) == []
    ran = _loaded("from memini_bench.modes import mode_for\nmode_for('compare')")
    assert "memini_bench.modes.compare_files" in ran
    assert not ran & {"memini_bench.modes.qa", "memini_bench.modes.sweep", "memini_bench.modes.vetobench"}


def test_the_light_names_are_the_names_of_what_they_name():
    """The flags' choice lists live in modules that import nothing (``retrieval.defaults``, ``studies.defaults``);
    they name exactly what the heavy modules hold."""
    from memini_bench.retrieval import defaults, temporal
    from memini_bench.studies import bridge
    from memini_bench.studies import defaults as study_defaults
    from memini_bench.systems.config import keyword_index

    assert defaults.EXTRACTOR_NAMES == (*temporal.EXTRACTORS, *temporal.EXTRACTOR_FACTORIES)
    assert study_defaults.VOCABULARY_NAMES == tuple(bridge.VOCABULARIES)
    assert {type(keyword_index(name, ["a b"], ["g"])).__name__ for name in defaults.KEYWORD_BACKENDS} == {
        "NumpyBM25", "FTS5BM25"}
