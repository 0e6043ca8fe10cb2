"""The sweep, VetoBench and -compare build their results identity through the shared builder
(``modes.common.mode_identity`` on ``shared_parts``, as ``run_identity`` does) and claim their paths through the
plan (``Plan.claim``), and no committed results file's identity changes.

The committed sweep summaries, ``vetobench.json`` and ``vetobench-scale.json`` record no identity (they predate the
identity code), so each check takes the real command of a committed file (its line in cmd/results_manifest.txt),
parses it as the CLI does, checks that the file's stored config is what those options give, and compares the
identity the new path computes with the one the code before it computed (``old_*`` below: that code as it stood,
kept here as the oracle of the format), on the same measured parts (the baseline's run identity, the embedders as
recorded in the file). A -compare output is not committed: its check reads committed per-question files.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.core import ParameterSource

from docgen import manifest
from memini_bench.modes.common import EMBEDDING_IDENTITY, hybrid_settings, run_identity
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import SignificanceOptions, SweepOptions, SystemsRunOptions, VetoOptions
from memini_bench.results.identity import identity_hash

ROOT = Path(__file__).resolve().parents[2]


# The code before this change, kept as the oracle of the identities' format.
def old_sweep_identity(opts, axes, grid, metric, baseline):
    c = opts.mode(SystemsRunOptions)
    return {"mode": "sweep", "sweep": opts.mode(SweepOptions).sweep, "axes": [a.flag for a in axes],
            "cells": len(grid), "select": metric.name if metric else "",
            "significance": {"resamples": c.resamples, "seed": c.seed}, "baseline": baseline}


def old_veto_identity(opts, data_sha256, names, embedding, composite_embedding, system_settings):
    x = opts.mode(VetoOptions)
    config = {"suite": "vetobench", "data": opts.data, "data_sha256": data_sha256, "systems": names,
              "veto_files": x.veto_files, "composite_embedder": x.composite_embedder, **hybrid_settings(opts),
              "holdout": opts.core.holdout, "limit": opts.core.limit}
    ident = {"mode": "vetobench", **{k: v for k, v in config.items() if k != "data"}, "embedding": embedding,
             "composite_embedding": composite_embedding, "system_settings": system_settings,
             **({"leaks": opts.guard.leaks} if opts.guard.leaks != "error" else {})}
    return config, ident


def old_compare_identity(opts, file_sha256):
    s, c = opts.mode(SignificanceOptions), opts.mode(SystemsRunOptions)
    return {"mode": "compare-files", "files": file_sha256, "ks": list(opts.k),
            "reference": s.reference if len(s.compare) == 1 else "", "systems": list(s.compare_systems),
            "resamples": c.resamples, "seed": c.seed}


def old_run_part(opts, ds, embedding, system_settings):
    c = opts.mode(SystemsRunOptions)
    run = {"data_sha256": ds.source_sha256, "ks": list(opts.k), "embedding": embedding,
           "system_settings": system_settings}
    if c.significance:
        run["significance"] = {"resamples": c.resamples, "seed": c.seed}
    if opts.guard.leaks != "error":
        run["leaks"] = opts.guard.leaks
    return run


def _options(words: list[str]) -> RunOptions:
    """A manifest command's options, parsed as the flat form parses them."""
    from memini_bench.cli import command

    assert words[0] == "memini-bench"
    ctx = command.make_context("memini-bench", list(words[1:]))
    values = dict(ctx.params)
    values.pop("plan_only", None)
    given = frozenset(n for n in values if ctx.get_parameter_source(n) is not ParameterSource.DEFAULT)
    return RunOptions.build(values, given)


def _committed(kind: str) -> list[tuple[Path, list[str]]]:
    """Each manifest line whose first path is a committed ``kind`` (``sweep``: a folder ``*-sweep-*``), with its
    command's words."""
    out = []
    for entry, words in manifest.commands():
        first = ROOT / entry.paths[0]
        if (kind == "sweep" and "-sweep-" in first.name) or (kind == "vetobench" and first.name == "vetobench.json"):
            out.append((first, words))
    return out


SWEEPS = _committed("sweep")
VETO = _committed("vetobench")


def test_the_manifest_names_the_committed_files():
    assert len(SWEEPS) >= 6 and len(VETO) == 1
    assert all((path / "summary.json").is_file() for path, _ in SWEEPS) and VETO[0][0].is_file()


@pytest.mark.parametrize(("folder", "words"), SWEEPS, ids=[p.name for p, _ in SWEEPS])
def test_a_committed_sweep_keeps_its_identity(folder, words):
    from memini_bench.modes.sweep import _checked_grid, sweep_identity

    opts = _options(words)
    summary = json.loads((folder / "summary.json").read_text())["config"]
    axes, grid, metric = _checked_grid(opts)
    stored = {"sweep": summary["sweep"], "axes": [a["flag"] for a in summary["axes"]], "select": summary["select"],
              "holdout": summary["holdout"], "cells": summary["cells"], "ks": summary["ks"]}
    assert stored == {"sweep": opts.mode(SweepOptions).sweep, "axes": [a.flag for a in axes],
                      "select": metric.name if metric else "", "holdout": opts.core.holdout, "cells": len(grid),
                      "ks": list(opts.k)}   # the file's config is what its command gives
    # the committed folder is its summary (no baseline.json): the baseline's run identity enters both identities
    # unchanged, so any run identity tests the two paths; the summary's baseline command stands for it
    baseline = {"baseline_command": json.loads((folder / "summary.json").read_text())["tune"]["baseline_command"]}
    new = sweep_identity(opts, axes, grid, metric, baseline)
    old = old_sweep_identity(opts, axes, grid, metric, baseline)
    assert new == old and identity_hash(new) == identity_hash(old)


@pytest.mark.parametrize(("path", "words"), VETO, ids=["vetobench"])
def test_committed_vetobench_files_keep_their_identity(path, words):
    from memini_bench.embed.factory import build_encoder
    from memini_bench.embed.settings import EmbedSettings
    from memini_bench.modes.common import embedding_identity
    from memini_bench.modes.vetobench import veto_identity, veto_settings

    opts = _options(words)
    config = json.loads(path.read_text())["config"]
    settings = veto_settings(opts, config["data_sha256"], config["systems"])
    assert {k: config[k] for k in settings} == settings   # the file's config is what its command gives
    embedding = {name: {k: d[k] for k in EMBEDDING_IDENTITY if k in d} for name, d in config["embedders"].items()}
    x = opts.mode(VetoOptions)
    composite = embedding_identity(build_encoder(EmbedSettings(embedder=x.composite_embedder)))
    system_settings = [{"name": name} for name in config["systems"]]   # measured by the plan; the same to both
    new = veto_identity(opts, settings, embedding, composite, system_settings)
    old_config, old = old_veto_identity(opts, config["data_sha256"], config["systems"], embedding, composite,
                                        system_settings)
    assert new == old and identity_hash(new) == identity_hash(old)
    assert old_config == {"data": opts.data, **settings}
    scale = json.loads((path.parent / "vetobench-scale.json").read_text())["config"]
    assert (scale["sizes"], scale["seed"]) == (list(x.veto_sizes), x.scale_seed) and x.scale


@pytest.mark.parametrize(("files", "extra"), [
    (["locomo.jsonl.gz"], []),
    (["locomo.jsonl.gz"], ["-reference", "memini-vector", "-resamples", "500", "-seed", "3", "-k", "5,10"]),
    (["locomo.jsonl.gz", "locomo-sessions.jsonl.gz"], ["-compare-systems", "memini-hybrid"])])
def test_a_comparison_of_committed_per_question_files_keeps_its_identity(files, extra):
    from memini_bench.modes.compare_files import compare_identity
    from memini_bench.results.provenance import input_sha256

    paths = [str(ROOT / "results" / name) for name in files]
    opts = _options(["memini-bench", "-compare", ",".join(paths), *extra])
    new, old = compare_identity(opts), old_compare_identity(opts, [input_sha256(p) for p in paths])
    assert new == old and identity_hash(new) == identity_hash(old)


@pytest.mark.parametrize("extra", [[], ["-significance", "-leaks", "count", "-resamples", "300"]])
def test_a_runs_identity_is_what_it_was(extra):
    """``run_identity``, now on the shared parts, gives the run part the code before it gave."""
    from memini_bench.core.contract import describe
    from memini_bench.modes.common import embedding_identity, load_prepared
    from memini_bench.systems.lineup import systems_for

    opts = _options(["memini-bench", "-suite", "sample", "-embedder", "hash", "-k", "1,3", *extra])
    ds = load_prepared(opts)
    ctx = opts.context()
    systems = systems_for(opts.lineup, ctx)
    _ = ctx.encoder
    ident = run_identity(opts, ds, ctx, systems, mode="compare")
    assert ident["run"] == old_run_part(opts, ds, embedding_identity(ctx.encoder), [describe(s) for s in systems])


def test_the_plan_carries_every_identity_it_claims(tmp_path, capsys):
    """A claim through the plan: the path, its identity, in ``writes`` and ``claims``; the first is the plan's
    identity (VetoBench's scale file carries its own)."""
    from memini_bench.modes.base import Plan

    plan = Plan("vetobench", RunOptions.build({}))
    a, b = {"mode": "x"}, {"mode": "x", "sizes": [1]}
    out_a = plan.claim(tmp_path / "a.json", a)
    out_b = plan.claim(tmp_path / "b.json", b)
    assert plan.writes == [out_a, out_b] and plan.claims == {out_a: a, out_b: b} and plan.identity == a
    folder = plan.claim(tmp_path / "f", a, suffix="", read=lambda f: None)
    assert folder == tmp_path / "f" and plan.claims[folder] == a
    click.echo(plan.describe())
    assert "results identity: " + identity_hash(a)[:12] in capsys.readouterr().out
