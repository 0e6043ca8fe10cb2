"""Fuzzing the CLI's flags against the harness's contract (hypothesis).

For any combination of flags and values, good or hostile, a run ends in one of two ways: exit 0 with its results
written, or exit 2 with exactly one ``memini-bench: error: ...`` line on stderr and nothing written. Never a
traceback, never another exit code, never a hang (a per-case alarm). The data is the offline sample and the
embedders are the hash ones, so each case takes milliseconds; ``make test`` runs a few hundred cases, the
slow-marked variant thousands.
"""

from __future__ import annotations

import contextlib
import io
import signal
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (the dev extra)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memini_bench.cli import main  # noqa: E402

CASE_SECONDS = 300  # a hang guard only: a case's time on a busy machine is no failure

NUMBERS = st.sampled_from(["0", "1", "-1", "3", "5", "10", "100", "101", "1e3", "0.5", "-0.5", "nan", "inf", "-inf",
                           "", " ", "abc", "1,2", "9" * 30, "0x10", "2.5", "1_000"])
LISTS = st.sampled_from(["1", "5,10", "1,3", "0", "", ",", "5,,10", "a,b", "-1,2", "3,3,3", "1e3", "nan", "0.5,0.2",
                         "0,0.4,0.5", " 1 , 2 "])
WORDS = st.sampled_from(["", "hybrid", "keyword", "vector", "memini-hybrid", "hybrid,keyword", "nope", "x:y",
                         "os:getcwd", "veto-composite", "keyword,keyword", "\u00e9t\u00e9", "../../etc", "a" * 300,
                         "regex", "extended", "fts5", "numpy", "all", "tune", "held", "full", "dated", "include",
                         "exclude", "known", "none", "both", "cohere", "tei", "cpu", "cuda", "auto", "hash", "fnv64",
                         "st:/no/such/model", "bogus", "pool=1,2", "fusion=0.3,-1", "fusion=nan", "pool", "R@1",
                         "MRR", "nDCG@3", "R@7"])
SUITES = st.sampled_from(["sample", "sample", "sample", "file", "locomo", "nope", ""])

FLAGS = {
    "-k": LISTS, "-limit": NUMBERS, "-fusion": NUMBERS, "-pool": NUMBERS, "-pool-factor": NUMBERS,
    "-pool-floor": NUMBERS, "-temporal-boost": NUMBERS, "-temporal-extractor": WORDS, "-semantic-reserve": NUMBERS,
    "-keyword-backend": WORDS, "-holdout": WORDS, "-session-doc": WORDS, "-abstention": WORDS, "-dims": NUMBERS,
    "-embedder": st.sampled_from(["hash", "hash", "fnv64", "bogus", "st:/no/such/model", "st:", ""]),
    "-batch-size": NUMBERS, "-max-tokens": NUMBERS, "-device": WORDS, "-systems": WORDS, "-system": WORDS,
    "-name": WORDS, "-rerank-cats": WORDS, "-vec-gate": LISTS, "-rerank-gate-pool": NUMBERS,
    "-llm-rerank-pool": NUMBERS, "-rerank-timeout": NUMBERS, "-veto-sizes": LISTS, "-veto-runs": NUMBERS,
    "-sweep": WORDS, "-select": WORDS, "-resamples": NUMBERS, "-seed": NUMBERS, "-reference": WORDS,
}
SWITCHES = ["-rerank", "-reinforce", "-no-cache", "-shared-haystack", "-significance", "-plot", "-scale", "-live",
            "-llm-rerank", "-list", "-no-write"]
PATH_FLAGS = ["-per-question", "-trec", "-compare", "-archive"]


class CaseTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise CaseTimeout(f"a case ran over {CASE_SECONDS} s")


def run_case(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue()


@st.composite
def argvs(draw):
    argv = ["-suite", draw(SUITES)]
    chosen = draw(st.lists(st.sampled_from(sorted(FLAGS)), max_size=4, unique=True))
    for flag in chosen:
        argv += [flag, draw(FLAGS[flag])]
    argv += draw(st.lists(st.sampled_from(SWITCHES), max_size=2, unique=True))
    paths = draw(st.lists(st.sampled_from(PATH_FLAGS), max_size=1, unique=True))
    if "-embedder" not in chosen:
        argv += ["-embedder", "hash"]
    return argv, paths


def check_contract(argv: list[str], paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        out_dir = root / "out"
        argv = [*argv, "-out", str(out_dir)]
        for flag in paths:
            argv += [flag, str(root / ("x.jsonl" if flag != "-trec" else "trec"))]
        code, stdout, stderr = run_case(argv)
        written = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        assert "Traceback" not in stderr, (argv, stderr)
        assert code in (0, 2), (argv, code, stderr[-500:])
        if code == 2:
            errors = [line for line in stderr.splitlines() if line.startswith("memini-bench: error:")]
            assert len(errors) == 1 and stderr.strip().splitlines()[-1] == errors[0], (argv, stderr)
            assert not written, (argv, written)
        elif "-no-write" not in argv and "-list" not in argv and "-compare" not in paths:
            assert written, (argv, stderr[-300:])


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(argvs())
def test_cli_flags_keep_the_contract(case):
    check_contract(*case)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(argvs())
def test_cli_flags_keep_the_contract_long(case):
    check_contract(*case)
