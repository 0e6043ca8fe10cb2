"""Typed options: values checked where declared, flags a mode does not use refused, results files with an identity."""

from __future__ import annotations

import json
import re

import pytest
from cli_run import run_cli

from memini_bench.modes.options import RunOptions

SAMPLE = ["-suite", "sample", "-embedder", "hash"]


@pytest.mark.parametrize(("args", "fragment"), [
    (["-k", "abc"], "'abc' is not an integer"), (["-k", "0"], "below the allowed minimum 1"),
    (["-k", ""], "an empty list"), (["-k", "1e3"], "'1e3' is not an integer"), (["-k", "5,,10"], "empty entry"),
    (["-k", "500"], "above the allowed maximum 100"),
    (["-fusion", "nan"], "not a finite number"), (["-fusion", "inf"], "not a finite number"),
    (["-fusion", "2"], "use an alpha in [0, 1]"), (["-temporal-boost", "nan"], "not a finite number"),
    (["-limit", "-3"], "below the allowed minimum 0"), (["-pool-factor", "-1"], "below the allowed minimum 0"),
    (["-dims", "0"], "below the allowed minimum 1"), (["-max-tokens", "-1"], "below the allowed minimum 0"),
])
def test_bad_values_are_one_line_and_write_nothing(args, fragment, tmp_path, capsys):
    code, out, err = run_cli([*SAMPLE, "-out", str(tmp_path / "out"), *args], capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1, err
    assert not out and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "fragment"), [
    (["-suite", "vetobench", "-data", "../shared/data/vetobench", "-trec", "T"], "-trec: not used by -suite vetobench"),
    (["-rerank", "-systems", "keyword"], "-systems: not used by -rerank"),
    (["-rerank", "-trec", "T"], "-trec: not used by -rerank"),
    (["-no-write", "-per-question", "pq.jsonl"], "-per-question: cannot be combined with -no-write"),
    (["-session-doc", "dated"], "-session-doc: not used by -suite sample"),
    (["-veto-runs", "3"], "-veto-runs / -veto-conditions: need -live"),
    (["-list"], "-embedder: not used by -list"),
])
def test_a_flag_the_mode_does_not_use_is_an_error(args, fragment, tmp_path, capsys):
    base = SAMPLE[2:] if "-suite" in args else SAMPLE  # a flag given twice is an error of its own
    code, out, err = run_cli([*base, "-out", str(tmp_path / "out"), *args], capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists() and not (tmp_path / "T").exists()


def test_runs_with_other_settings_get_their_own_file(tmp_path, capsys):
    out = tmp_path / "out"
    for fusion in ("0.5", "-1"):
        code, _, err = run_cli([*SAMPLE, "-out", str(out), "-fusion", fusion], capsys)
        assert code == 0, err
    names = sorted(p.name for p in out.glob("*.json"))
    assert names == ["memini-sample-emb-hash-fusion-1.json", "memini-sample-emb-hash.json"]
    rrf = json.loads((out / "memini-sample-emb-hash-fusion-1.json").read_text())["config"]
    assert rrf["fusion_alpha"] == -1.0 and rrf["identity"]["hybrid"]["fusion"] == -1.0
    code, _, err = run_cli([*SAMPLE, "-out", str(out), "-fusion", "-1"], capsys)      # same settings: replaced
    assert code == 0, err


def test_a_label_never_overwrites_a_run_with_other_settings(tmp_path, capsys):
    out = tmp_path / "out"
    code, _, err = run_cli([*SAMPLE, "-out", str(out), "-name", "trial"], capsys)
    assert code == 0, err
    path = out / "memini-sample-trial.json"
    before = path.read_bytes()
    code, _, err = run_cli([*SAMPLE, "-out", str(out), "-name", "trial", "-pool-floor", "80"], capsys)
    assert code == 0 and "holds a run made with other settings (hybrid, run); this run writes" in err
    assert path.read_bytes() == before
    other = list(out.glob("memini-sample-trial-*.json"))
    assert len(other) == 1 and re.fullmatch(r"memini-sample-trial-[0-9a-f]{8}\.json", other[0].name)
    assert json.loads(other[0].read_text())["config"]["identity"]["hybrid"]["pool_floor"] == 80
    code, _, err = run_cli([*SAMPLE, "-out", str(out), "-name", "../escape"], capsys)
    assert code == 2 and "-name" in err


def test_pool_floor_without_effect_is_reported(capsys):
    code, _, err = run_cli([*SAMPLE, "-no-write", "-pool-floor", "20", "-k", "5,10"], capsys)
    assert code == 0 and "-pool-floor 20 has no effect" in err


def test_build_checks_values_like_the_cli():
    import click

    opts = RunOptions.build({"k": "10,5", "fusion": -1.0, "systems": "hybrid, keyword"})
    assert opts.k == (5, 10) and opts.hybrid.fusion == -1.0 and opts.lineup.systems == ("hybrid", "keyword")
    with pytest.raises(click.BadParameter):
        RunOptions.build({"fusion": float("nan")})


def test_embedder_settings_reach_the_embedder_or_are_refused(monkeypatch):
    pytest.importorskip("sentence_transformers",
                        reason="the minilm extra is not installed: pip install 'memini-bench[minilm]'")
    from memini_bench.embed.factory import EmbedSettings, build_embedder
    from memini_bench.errors import BenchError

    fp32 = build_embedder(EmbedSettings(embedder="minilm"))
    bf16 = build_embedder(EmbedSettings(embedder="minilm", precision="bf16"))
    if bf16.precision == "bf16":   # where the CPU has native bf16; elsewhere it falls back to fp32, named as such
        assert fp32.identity != bf16.identity and bf16.identity.endswith("precision=bf16-weights")  # never one file
    else:
        assert bf16.identity == fp32.identity   # the fp32 fallback computes fp32 vectors: the same cache identity
    monkeypatch.setenv("MEMINI_EMBED_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMINI_EMBED_DIMS", "8")                       # no probe request
    endpoint = build_embedder(EmbedSettings(embedder="openai", embed_timeout=2.5, embed_concurrency=3))
    assert endpoint.timeout == 2.5 and endpoint.concurrency == 3
    for settings, flag in [(EmbedSettings(embedder="hash", embed_timeout=5), "-embed-timeout"),
                           (EmbedSettings(embedder="hash", precision="bf16"), "-precision"),
                           (EmbedSettings(embedder="hash", embed_backend="openvino"), "-embed-backend"),
                           (EmbedSettings(embedder="openai", max_tokens=128), "-max-tokens"),
                           (EmbedSettings(embedder="minilm", dims=64), "-dims")]:
        with pytest.raises(BenchError, match=f"^{flag}: not used by -embedder"):
            build_embedder(settings)
