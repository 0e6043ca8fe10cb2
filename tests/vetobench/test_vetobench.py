"""VetoBench retrieval: the fixtures loader, the five-signal scorer against the published numbers, the CLI, the
scale curve. The published numbers (files known 1.00, no files 0.70 with ranks [2,1,4,18,1,7,4,1,6,1], lifecycle
1.00 / 1.00) are the independent oracle; small signals are checked against hand-computed values."""

from __future__ import annotations

import json
import math
import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from conftest import shared

from memini_bench.cli import main
from memini_bench.errors import BenchError
from memini_bench.loaders import load
from memini_bench.loaders.vetobench import decision_of, read_suites, suite_dataset
from memini_bench.vetobench.composite import VetoHashEmbedder, file_overlap, recency, veto_composite_systems
from memini_bench.vetobench.evaluate import evaluate, lineup
from memini_bench.vetobench.judge import names_match
from memini_bench.vetobench.scale import curve, distractors, grow, plot

PUBLISHED_NO_FILES = [2, 1, 4, 18, 1, 7, 4, 1, 6, 1]


@pytest.fixture(scope="module")
def fixtures_dir() -> Path:
    return shared("vetobench")


@pytest.fixture(scope="module")
def suites(fixtures_dir):
    return {s.name: s for s in read_suites(fixtures_dir)}


def _composite(suite, files="both"):
    ds = suite_dataset(suite)
    _, scores = evaluate(veto_composite_systems(files=files), ds)
    return {s.system: s for s in scores}


# --- loader -------------------------------------------------------------------------------------------------------

def test_loader_reads_both_suites_into_separate_groups(fixtures_dir):
    ds = load("vetobench", str(fixtures_dir))
    assert ds.groups == ["vetobench", "vetobench-lifecycle"]
    assert len(ds.items) == 24 + 10 and len(ds.questions) == 10 + 4
    q = next(q for q in ds.questions if q.id == "s02")
    assert q.gold == ("d102",) and q.category == "direct" and q.group == "vetobench"
    assert q.now == datetime(2026, 7, 1, tzinfo=UTC)
    assert dict(q.context)["files_in_scope"] == ("apps/dashboard/src/store.ts",)
    d101 = decision_of(next(i for i in ds.items if i.id == "d101"))
    assert [r.option for r in d101.rejected] == ["Express", "Fastify"]
    assert ds.items[0].content == d101.decision + " " + d101.rationale
    assert {q.category for q in ds.questions} == {"direct", "implicit", "stale-named", "stale-unnamed"}


def test_lifecycle_drops_superseded_and_carries_their_vetoes(suites):
    life = suites["vetobench-lifecycle"]
    assert len(life.decisions) == 14 and len(life.active) == 10 and life.lifecycle
    assert not {"L101", "L103", "L105", "L107"} & {d.id for d in life.active}
    l102 = next(d for d in life.active if d.id == "L102")
    carried = [r for r in l102.rejected if r.inherited_from]
    assert [(r.option, r.inherited_from) for r in carried] == [("in-process memory cache", "L101")]
    assert carried[0].inherited_date == datetime(2026, 1, 15, 10, tzinfo=UTC)  # L101's created_at
    assert l102.rejected[0].inherited_from == ""  # its own veto first


def test_loader_accepts_a_corpus_or_scenarios_file(fixtures_dir):
    for name in ("corpus-lifecycle.json", "scenarios-lifecycle.json"):
        ds = load("vetobench", str(fixtures_dir / name))
        assert ds.groups == ["vetobench-lifecycle"] and len(ds.questions) == 4


def _copy(fixtures_dir, tmp_path):
    for name in ("corpus.json", "scenarios.json"):
        shutil.copy(fixtures_dir / name, tmp_path / name)
    return json.loads((tmp_path / "corpus.json").read_text()), json.loads((tmp_path / "scenarios.json").read_text())


@pytest.mark.parametrize("edit, message", [
    (lambda c, s: c[0].pop("rationale"), "corpus.json: [0].rationale: missing (expected a string)"),
    (lambda c, s: c[1].update(created_at="yesterday"), "[1].created_at: 'yesterday' is not an ISO-8601 date"),
    (lambda c, s: c[2]["rejected"].append({"reason": "x"}), "[2].rejected[2].option: missing (expected a string)"),
    (lambda c, s: c.append(dict(c[0])), "corpus.json: duplicate decision ids ['d101']"),
    (lambda c, s: s["scenarios"][3].update(veto_decision_id="d999"), "scenarios[3].veto_decision_id: scenario s04: "
     "'d999' is not a decision of"),
    (lambda c, s: s["scenarios"][0]["rejected_markers"].append("(unclosed"), "scenarios[0].rejected_markers[3]: "
     "'(unclosed' is not a valid regex"),
    (lambda c, s: s.pop("as_of"), "scenarios.json: as_of: missing (expected a string)"),
    (lambda c, s: s["scenarios"][1].update(files_in_scope="apps/x.ts"),
     "scenarios[1].files_in_scope: expected an array, got a string"),
    (lambda c, s: c[0].update(status="superseded", superseded_by="d777"), "superseded_by 'd777' names no decision"),
])
def test_malformed_fixtures_fail_with_one_clear_line(fixtures_dir, tmp_path, edit, message):
    corpus, scenarios = _copy(fixtures_dir, tmp_path)
    edit(corpus, scenarios)
    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    (tmp_path / "scenarios.json").write_text(json.dumps(scenarios))
    with pytest.raises(BenchError) as exc:
        load("vetobench", str(tmp_path))
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_missing_partner_file_and_empty_folder(fixtures_dir, tmp_path):
    shutil.copy(fixtures_dir / "corpus.json", tmp_path / "corpus.json")
    with pytest.raises(BenchError, match="its scenarios file .*scenarios.json is missing"):
        load("vetobench", str(tmp_path))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BenchError, match="no corpus\\*.json here"):
        load("vetobench", str(empty))


def test_veto_on_a_superseded_decision_is_rejected(fixtures_dir, tmp_path):
    for name in ("corpus-lifecycle.json", "scenarios-lifecycle.json"):
        shutil.copy(fixtures_dir / name, tmp_path / name)
    doc = json.loads((tmp_path / "scenarios-lifecycle.json").read_text())
    doc["scenarios"][0]["veto_decision_id"] = "L101"
    (tmp_path / "scenarios-lifecycle.json").write_text(json.dumps(doc))
    with pytest.raises(BenchError, match="'L101' is superseded; name the active decision"):
        load("vetobench", str(tmp_path / "corpus-lifecycle.json"))


# --- the five signals, by hand ----------------------------------------------------------------------------------

def test_hash_embedder_matches_hand_computed_buckets():
    # FNV-1a-32("foobar") = 0xbf9cf968 (the published FNV test vector): buckets 0x68 % 64 = 40 and 0xbf9cf9 % 64 = 57.
    v = VetoHashEmbedder().encode(["Foobar, is it? ab"])[0]  # "is", "it", "ab" are shorter than 3 characters
    expected = np.zeros(64)
    expected[40], expected[57] = 1.0, 0.5
    np.testing.assert_allclose(v, expected / math.sqrt(1.25), rtol=1e-6)
    assert not VetoHashEmbedder().encode(["a b c"]).any()  # no token: the zero vector


def test_file_overlap_and_recency_by_hand():
    assert file_overlap(["a", "b"], ["b", "c"]) == 0.5
    assert file_overlap(["a", "a"], ["a"]) == 1.0 and file_overlap([], ["a"]) == 0.0
    np.testing.assert_allclose(recency(np.array([0.0, 30.0, 60.0, -5.0, 10000.0])),
                               [1.0, 0.5, 0.25, 1.0, 0.5 ** (3650 / 30)])


def test_signals_and_score_of_one_decision_by_hand(suites):
    suite = suites["vetobench"]
    ds = suite_dataset(suite)
    known = veto_composite_systems(files="known")[0]
    known.ingest(ds.items)
    s = suite.scenarios[3]  # s04 -> d104, created 2026-02-10T10:00Z, reviewed, relevance 0.6, files match fully
    idx, sig = known.signals(suite.name, s.task, s.files_in_scope, suite.as_of)
    i = [ds.items[j].id for j in idx].index("d104")
    age = (datetime(2026, 7, 1, tzinfo=UTC) - datetime(2026, 2, 10, 10, tzinfo=UTC)).total_seconds() / 86400
    assert sig["files"][i] == 1.0 and sig["approval"][i] == 1.0 and sig["relevance"][i] == 0.6
    assert sig["recency"][i] == pytest.approx(0.5 ** (age / 30))
    hits = known.recall(suite.name, s.task, 1, now=suite.as_of, context=dict(ds.questions[3].context))
    expected = 0.32 * sig["semantic"][i] + 0.27 + 0.18 * 0.5 ** (age / 30) + 0.13 * 0.6 + 0.10
    assert hits[0].ids == ("d104",) and hits[0].score == pytest.approx(expected)


# --- published numbers -------------------------------------------------------------------------------------------

def test_composite_reproduces_the_published_numbers(suites):
    scores = _composite(suites["vetobench"])
    known, none = scores["veto-composite"], scores["veto-composite-nofiles"]
    assert known.recall[5] == 1.0 and set(known.ranks.values()) == {1}
    assert none.recall[5] == pytest.approx(0.70)
    assert list(none.ranks.values()) == PUBLISHED_NO_FILES
    assert [q for q, r in none.ranks.items() if r > 5] == ["s04", "s06", "s09"]


def test_ci_gate_veto_recall_at_5_files_known(suites):
    assert _composite(suites["vetobench"], "known")["veto-composite"].recall[5] >= 0.80  # RoBrain's CI gate


def test_lifecycle_suite_gives_one_and_one(suites):
    scores = _composite(suites["vetobench-lifecycle"])
    assert scores["veto-composite"].recall[5] == 1.0 and scores["veto-composite-nofiles"].recall[5] == 1.0


def test_every_system_runs_on_the_suite(suites):
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.embed.hashing import HashEmbedder

    ds = suite_dataset(suites["vetobench"])
    _, scores = evaluate(lineup(ds, {"hash": TextEncoder(HashEmbedder(256))}), ds)
    assert [s.system for s in scores] == ["veto-composite", "veto-composite-nofiles", "memini-hybrid/hash",
                                          "memini-vector/hash", "memini-keyword"]
    for s in scores:
        assert s.scenarios == 10 and set(s.per_trap) == {"direct", "implicit"}
        assert s.per_trap["direct"]["scenarios"] == 4 and 0.0 <= s.recall[1] <= s.recall[5] <= 1.0


# --- CLI -----------------------------------------------------------------------------------------------------------

def test_cli_prints_every_system_and_writes_results(fixtures_dir, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["-suite", "vetobench", "-data", str(fixtures_dir), "-veto-embedders", "hash", "-out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    assert "| veto-composite | 1.00 | 1.00 | 1.00 | 1.00 | [1,1,1,1,1,1,1,1,1,1] |" in out
    assert "| veto-composite-nofiles | 0.40 | 0.70 | 0.83 | 0.50 | [2,1,4,18,1,7,4,1,6,1] |" in out
    assert "| memini-keyword |" in out and "| memini-hybrid/hash |" in out
    assert "gate: veto-composite veto recall@5 (files known) 1.00 >= 0.80: PASS" in out
    doc = json.loads((tmp_path / "vetobench.json").read_text())
    assert [r["suite"] for r in doc["suites"]] == ["vetobench", "vetobench-lifecycle"]
    life = {r["system"]: r for r in doc["suites"][1]["veto"]}
    assert life["veto-composite"]["veto_recall@5"] == 1.0 and life["veto-composite-nofiles"]["veto_recall@5"] == 1.0
    assert len(doc["config"]["data_sha256"]) == 4


def test_cli_bad_flags_are_one_line_errors(fixtures_dir, tmp_path, capsys):
    for args, message in [(["-veto-sizes", "24,abc", "-scale"], "'abc' is not an integer"),
                          (["-systems", "nope"], "-systems nope: none of them runs on VetoBench")]:
        with pytest.raises(SystemExit) as exc:
            main(["-suite", "vetobench", "-data", str(fixtures_dir), "-veto-embedders", "hash", "-no-write", *args])
        _, err = capsys.readouterr()
        assert exc.value.code == 2 and message in err and err.count("\n") == 1


# --- scale ---------------------------------------------------------------------------------------------------------

def test_distractors_are_deterministic_nested_and_avoid_the_vetoed_options(suites):
    suite = suites["vetobench"]
    exclude = [s.rejected_option for s in suite.scenarios]
    many = distractors(400, as_of=suite.as_of, seed=3, exclude=exclude)
    assert distractors(50, as_of=suite.as_of, seed=3, exclude=exclude) == many[:50]
    assert distractors(50, as_of=suite.as_of, seed=4, exclude=exclude) != many[:50]
    assert len({d.text for d in many}) == 400 and len({d.id for d in many}) == 400
    names = [d.decision for d in many] + [r.option for d in many for r in d.rejected]
    assert not any(names_match(n, x) for n in [r.option for d in many for r in d.rejected] for x in exclude)
    assert not any(x.lower() in n.lower() for n in names for x in ("Express", "Prisma", "Redux", "GraphQL"))
    assert all(d.created_at < suite.as_of and 0.3 <= d.historical_relevance <= 0.85 for d in many)
    assert any("packages/api/src/server.ts" in d.files_affected for d in many)  # competes on a scenario's file


def test_scale_curve_small_and_plot(suites, tmp_path):
    suite = suites["vetobench"]
    with pytest.raises(BenchError, match="smaller than the suite's 24 decisions"):
        grow(suite, 10, ())
    points = curve(suite, lambda ds: veto_composite_systems(), [24, 80], seed=1)
    assert [p.size for p in points] == [24, 80]
    first = {s.system: s for s in points[0].scores}
    assert first["veto-composite-nofiles"].recall[5] == pytest.approx(0.70)  # 24 = the real corpus, unchanged
    assert all(len(s.ranks) == 10 for p in points for s in p.scores)
    pytest.importorskip("matplotlib", reason="the scale plot needs matplotlib (the plot extra)")
    png = tmp_path / "curve.png"
    plot(points, png, "test", 24)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- review fixes: holdout, up-front checks, selection, hybrid flags, metrics, embedder, messages ------------------

def _cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["-suite", "vetobench", "-veto-embedders", "hash", *args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_holdout_held_skips_an_emptied_suite(fixtures_dir, tmp_path, capsys):
    code, out, err = _cli(["-data", str(fixtures_dir), "-holdout", "held", "-out", str(tmp_path)], capsys)
    assert code == 0, err
    assert 'suite "vetobench-lifecycle": none of its 4 scenarios is left after -holdout held; skipped' in err
    assert "## vetobench-held: veto recall, 1 scenarios over 24 decisions (as of 2026-07-01)" in out
    doc = json.loads((tmp_path / "vetobench.json").read_text())
    assert [r["suite"] for r in doc["suites"]] == ["vetobench-held"] and doc["suites"][0]["scenarios"] == 1
    code, _, err = _cli(["-data", str(fixtures_dir / "corpus-lifecycle.json"), "-holdout", "held",
                         "-out", str(tmp_path / "none")], capsys)
    assert code == 2 and "-holdout held: leaves no scenario in any suite" in err and err.count("\n") == 1
    assert not (tmp_path / "none").exists()


def test_bad_scale_live_and_plot_flags_fail_before_anything_is_written(fixtures_dir, tmp_path, capsys,
                                                                       monkeypatch):
    import importlib.util

    base = ["-data", str(fixtures_dir), "-out", str(tmp_path)]
    code, _, err = _cli([*base, "-scale", "-veto-sizes", "10,100"], capsys)
    assert code == 2 and "-veto-sizes 10: smaller than suite vetobench's 24 decisions" in err
    assert err.count("\n") == 1
    monkeypatch.setenv("MEMINI_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    code, _, err = _cli([*base, "-live", "-veto-conditions", "none,robrain"], capsys)
    assert code == 2 and ("-veto-conditions robrain: unknown; use none, conventions, flatfile, extract-e2e, a system "
                          "of this run (veto-composite, veto-composite-nofiles") in err
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code, _, err = _cli([*base, "-scale", "-veto-sizes", "24", "-plot"], capsys)
    assert code == 2 and "-plot needs the plot extra (matplotlib is not installed)" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_systems_are_picked_by_full_short_and_variant_names(fixtures_dir, tmp_path, capsys):
    from memini_bench.vetobench.evaluate import select_systems

    class Named:
        def __init__(self, name):
            self.name = name

    pool = [Named(n) for n in ("veto-composite", "memini-hybrid/hash", "memini-vector/hash", "memini-hybrid/minilm",
                               "memini-keyword")]
    pick = lambda *wanted: [s.name for s in select_systems(pool, wanted, "VetoBench")]  # noqa: E731
    assert pick("hybrid") == pick("memini-hybrid") == ["memini-hybrid/hash", "memini-hybrid/minilm"]
    assert pick("keyword", "hybrid/hash", "memini-hybrid/hash") == ["memini-keyword", "memini-hybrid/hash"]
    assert pick("veto-composite", "vector/hash") == ["veto-composite", "memini-vector/hash"]
    with pytest.raises(BenchError, match="-systems nope,vector/minilm: none of them runs on VetoBench; use "):
        pick("hybrid", "nope", "vector/minilm")
    code, out, err = _cli(["-data", str(fixtures_dir), "-no-write", "-systems", "hybrid,keyword"], capsys)
    assert code == 0, err
    assert "| memini-hybrid/hash |" in out and "| memini-keyword |" in out and "| veto-composite |" not in out
    assert "gate: veto-composite is not in this run (-systems / -veto-files); the 0.80 veto recall@5 gate is not " \
           "checked" in err and "gate:" not in out


def test_hybrid_flags_reach_memini_systems_and_the_config(suites, fixtures_dir, tmp_path, capsys):
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.embed.hashing import HashEmbedder
    from memini_bench.modes.options import RunOptions

    opts = RunOptions.build(dict(pool_factor=7, pool_floor=60, semantic_reserve=2, temporal_boost=0.4,
                                 temporal_extractor="extended", reinforce=True, fusion=0.3))
    ds = suite_dataset(suites["vetobench"])
    hybrid = next(s for s in lineup(ds, {"hash": TextEncoder(HashEmbedder(256))}, hybrid=opts.hybrid)
                  if s.name == "memini-hybrid/hash")
    c = hybrid.config
    assert (c.pool_factor, c.pool_floor, c.semantic_reserve, c.temporal_boost, c.reinforce, c.fusion) == (
        7, 60, 2, 0.4, True, 0.3)
    code, _, err = _cli(["-data", str(fixtures_dir), "-out", str(tmp_path), "-pool-floor", "60", "-semantic-reserve",
                         "2", "-temporal-boost", "0.4", "-temporal-extractor", "extended", "-reinforce"], capsys)
    assert code == 0, err
    config = json.loads((tmp_path / "vetobench.json").read_text())["config"]
    assert {k: config[k] for k in ("pool_factor", "pool_floor", "semantic_reserve", "temporal_boost",
                                   "temporal_extractor", "reinforce", "fusion_alpha", "keyword_backend")} == {
        "pool_factor": 0, "pool_floor": 60, "semantic_reserve": 2, "temporal_boost": 0.4,
        "temporal_extractor": "extended", "reinforce": True, "fusion_alpha": 0.5, "keyword_backend": "numpy"}


def test_veto_scores_come_from_the_shared_metrics(suites):
    from memini_bench.evaluation.metrics import score

    ds = suite_dataset(suites["vetobench"])
    systems = veto_composite_systems()
    results, scores = evaluate(systems, ds)
    for result, veto in zip(results, scores, strict=True):
        for k in (1, 5):
            m = score(result, k)
            assert veto.recall[k] == m["recall_any@{k}"] and m in veto.scores
            assert {t: v[f"recall@{k}"] for t, v in veto.per_trap.items()} == m.category('recall_any@{k}')
        assert list(veto.per_trap) == ["implicit", "direct"]  # scenario order, as before


def test_fnv64_is_a_registered_embedder_shared_across_lineups(suites, monkeypatch):
    from memini_bench.embed.factory import EmbedSettings, build_embedder, build_encoder
    from memini_bench.embed.hashing import VetoHashEmbedder as Registered

    assert isinstance(build_embedder("fnv64"), Registered) and Registered is VetoHashEmbedder
    monkeypatch.setenv("MEMINI_EMBED_QUERY_PREFIX", "query: ")
    encoder = build_encoder(EmbedSettings(embedder="fnv64"))
    assert encoder.cache is None and encoder.query_prefix == "" and encoder.describe()["embed_dims"] == 64
    suite = suites["vetobench"]
    ds = suite_dataset(suite)
    _, first = evaluate(lineup(ds, {}, composite_encoder=encoder), ds)
    embedded = encoder.embedded
    _, again = evaluate(lineup(ds, {}, composite_encoder=encoder), ds)
    assert encoder.embedded == embedded  # the second lineup re-embedded nothing
    assert [s.ranks for s in first] == [s.ranks for s in again]
    assert list(first[1].ranks.values()) == PUBLISHED_NO_FILES


def test_to_dataset_prefixes_clashing_scenario_ids(suites):
    import dataclasses

    from memini_bench.loaders.vetobench import to_dataset

    suite = suites["vetobench"]
    twin = dataclasses.replace(suite, name="vetobench-twin")
    ds = to_dataset([suite, twin])
    ids = [q.id for q in ds.questions]
    assert ids[:10] == [s.id for s in suite.scenarios]
    assert ids[10:] == [f"vetobench-twin/{s.id}" for s in suite.scenarios]
    assert {q.group for q in ds.questions[10:]} == {"vetobench-twin"}


def test_missing_corpus_is_named_as_such(fixtures_dir, tmp_path):
    shutil.copy(fixtures_dir / "scenarios.json", tmp_path / "scenarios.json")
    with pytest.raises(BenchError, match="corpus.json: no such corpus file \\(the corpus of .*scenarios.json\\)"):
        load("vetobench", str(tmp_path / "scenarios.json"))
    with pytest.raises(BenchError, match="nowhere/corpus.json: no such corpus file; pass"):
        load("vetobench", str(tmp_path / "nowhere" / "corpus.json"))


def test_a_plugins_recall_is_checked_and_bounded_as_in_the_normal_run(fixtures_dir, tmp_path, capsys):
    """VetoBench runs a -system plugin through the normal run's checks, with the run's -recall-timeout; -leaks is
    taken (a suite is one group, so nothing can leak: the count is 0 in every score row)."""
    import misbehaving_plugin

    base = ["-data", str(fixtures_dir), "-system", "misbehaving_plugin:make", "-systems", "misbehaving",
            "-out", str(tmp_path / "out")]
    misbehaving_plugin.BEHAVIOUR = {"sleep": 2.0}
    code, _, err = _cli([*base, "-recall-timeout", "0.2"], capsys)
    last = err.strip().splitlines()[-1]
    assert code == 2 and "misbehaving" in last and "recall-timeout" in last, err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    misbehaving_plugin.BEHAVIOUR = {"extra": "unknown"}
    code, _, err = _cli(base, capsys)
    assert code == 2 and "which is no item of the data set" in err.strip().splitlines()[-1], err
    misbehaving_plugin.BEHAVIOUR = {}
    code, _, err = _cli([*base, "-leaks", "count"], capsys)
    assert code == 0, err  # veto-composite is not in this run: its gate is not checked
    doc = json.loads((tmp_path / "out" / "vetobench.json").read_text())
    assert doc["config"]["identity"]["leaks"] == "count"
    assert {row["leaked"] for suite in doc["suites"] for row in suite["scores"]} == {0}
