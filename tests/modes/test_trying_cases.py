"""The cases of issue 21 found by trying the CLI as a user would, one test each: every one ends as one line and
exit 2 with nothing written (or, where the input is fine, runs correctly). Retry-After and non-http base URLs are
tested against a loopback server in ``test_http_limits.py``, the LLM reranker's note in ``test_rerank_modes.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_run import run_cli
from conftest import shared

REPO = Path(__file__).resolve().parents[2]


run = run_cli


def one_error(err: str) -> str:
    """The run's only error line (the lines before it are its notes); a traceback fails the test."""
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("memini-bench: error:")]
    assert len(errors) == 1 and err.rstrip().splitlines()[-1] == errors[0], err
    return errors[0]


def subprocess_run(args, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "memini_bench", *args], cwd=REPO, env=env, timeout=600, **kwargs)


def test_a_limit_beyond_64_bits_is_one_line(tmp_path, capsys):
    code, _, err = run(["-limit", "99999999999999999999", "-systems", "keyword", "-out", str(tmp_path)], capsys)
    assert code == 2 and "-limit" in one_error(err) and "64-bit" in err
    assert not list(tmp_path.iterdir())


def test_a_malformed_endpoint_url_is_one_line_naming_the_variable(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMINI_EMBED_BASE_URL", "http://[::1")
    code, _, err = run(["-embedder", "openai", "-out", str(tmp_path)], capsys)
    assert code == 2 and "MEMINI_EMBED_BASE_URL='http://[::1': not a valid URL" in one_error(err)
    monkeypatch.setenv("MEMINI_EMBED_BASE_URL", "file:///tmp")
    code, _, err = run(["-embedder", "openai", "-out", str(tmp_path)], capsys)
    assert code == 2 and "not an http(s) URL" in one_error(err) and "failed after" not in err  # refused, no try
    assert not list(tmp_path.iterdir())


def test_a_closed_stdout_is_one_line_before_any_work(tmp_path):
    done = subprocess_run(["-systems", "keyword", "-out", str(tmp_path)], stdout=None, stderr=subprocess.PIPE,
                          text=True, preexec_fn=lambda: os.close(1))
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "memini-bench: error: stdout is closed; run with stdout open (redirect it to a file or /dev/null instead "
        "of >&-)"]
    assert not list(tmp_path.iterdir())


def test_a_reader_that_exits_early_is_one_line_and_exit_2(tmp_path):
    """``... | true``: the pipe's read end is closed before the run writes its tables."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess_run(["-systems", "keyword", "-out", str(tmp_path)], stdout=write_end,
                              stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert done.returncode == 2, done.stderr
    assert "stdout was closed by its reader" in done.stderr.strip().splitlines()[-1]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args", [["-k", "5", "-k", "10"], ["-k", "5", "--k=10"], ["-no-write", "-no-write"]])
def test_a_flag_given_twice_is_refused(args, capsys):
    code, _, err = run([*args, "-systems", "keyword"], capsys)
    assert code == 2 and "given twice" in one_error(err)


def test_a_repeatable_flag_and_a_value_that_looks_like_a_flag_are_fine(capsys):
    code, out, err = run(["-system", "keyword", "-system", "vector", "-systems", "hybrid", "-embedder", "hash",
                          "-name", "-k", "-no-write"], capsys)
    assert code == 0, err
    assert "memini-keyword" in out and "memini-vector" in out


def test_an_empty_sweep_value_is_refused_like_an_empty_k(capsys):
    code, _, err = run(["-k", "5,,10"], capsys)
    assert code == 2 and "empty entry" in one_error(err)
    code, _, err = run(["-sweep", "fusion=0.3,,0.5", "-embedder", "hash"], capsys)
    assert code == 2 and "empty value" in one_error(err)


def test_a_sweep_axis_the_suite_ignores_is_refused(capsys):
    code, _, err = run(["-sweep", "session-doc=full,dated", "-embedder", "hash"], capsys)
    assert code == 2 and "not used by -suite sample" in one_error(err)
    assert "dataset" not in err  # before any work


def test_a_big_grid_is_refused_before_any_work_and_a_small_one_says_its_size(tmp_path, capsys):
    grid = "pool=" + ",".join(map(str, range(1, 41))) + " fusion=" + ",".join(f"0.{i}" for i in range(1, 10)) \
        + " pool-floor=1,2"
    code, _, err = run(["-sweep", grid, "-embedder", "hash", "-out", str(tmp_path)], capsys)
    line = one_error(err)
    assert code == 2 and "720 cells is more than -sweep-max-cells 500" in line and "-sweep-max-cells 720" in line
    assert "dataset" not in err and not list(tmp_path.iterdir())
    code, _, err = run(["-sweep", "fusion=0.3,0.5", "-embedder", "hash", "-no-write"], capsys)
    assert code == 0 and "sweep: 2 cells over fusion" in err and "ETA" in err or "cell 2/2" in err


def test_an_unknown_sweep_embedder_fails_before_the_baseline(capsys):
    code, _, err = run(["-sweep", "embedder=hash,nosuch"], capsys)
    assert code == 2 and "-sweep embedder='nosuch': unknown embedder" in one_error(err)
    assert "dataset" not in err


def test_compare_refuses_a_file_given_twice(tmp_path, capsys):
    code, _, err = run(["-compare", "a.jsonl,a.jsonl,a.jsonl"], capsys)
    assert code == 2 and "names 'a.jsonl' twice" in one_error(err)


def test_compare_reads_a_fifo(tmp_path, capsys):
    per_question = tmp_path / "pq.jsonl"
    code, _, err = run(["-systems", "keyword,vector", "-embedder", "hash", "-out", str(tmp_path / "out"),
                        "-per-question", str(per_question)], capsys)
    assert code == 0, err
    content = per_question.read_bytes()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as f:
            f.write(content)

    thread = threading.Thread(target=writer)
    thread.start()
    code, out, err = run(["-compare", str(fifo), "-reference", "memini-keyword", "-no-write"], capsys)
    thread.join(5)
    assert code == 0, err
    assert "memini-keyword against each system" in out


def test_a_newline_in_a_path_stays_on_the_error_line(tmp_path, capsys):
    code, _, err = run(["-suite", "file", "-data", str(tmp_path / "a\nb.json"), "-embedder", "hash"], capsys)
    assert code == 2 and err.count("\n") == 1 and "a\\nb.json: no such file" in one_error(err)


def test_concurrency_zero_is_named_as_the_variable(capsys, monkeypatch):
    monkeypatch.setenv("MEMINI_EMBED_CONCURRENCY", "0")
    monkeypatch.setenv("MEMINI_EMBED_BASE_URL", "http://127.0.0.1:9/v1")
    code, _, err = run(["-embedder", "openai", "-no-write"], capsys)
    line = one_error(err)
    assert code == 2 and "MEMINI_EMBED_CONCURRENCY='0': must be at least 1" in line and "-concurrency" not in line


def test_historical_relevance_out_of_range_is_refused(tmp_path, capsys):
    fixtures = shared("vetobench")  # skips with the reason when the shared data is absent
    for value in (-1e308, 5):
        for name in ("corpus.json", "scenarios.json"):
            shutil.copy(fixtures / name, tmp_path / name)
        corpus = json.loads((tmp_path / "corpus.json").read_text())
        decisions = corpus["decisions"] if isinstance(corpus, dict) else corpus
        decisions[0]["historical_relevance"] = value
        (tmp_path / "corpus.json").write_text(json.dumps(corpus))
        code, _, err = run(["-suite", "vetobench", "-data", str(tmp_path), "-no-write"], capsys)
        line = one_error(err)
        assert code == 2 and "historical_relevance" in line and "expected a number from 0 to 1" in line


def test_qa_timeout_is_a_flag(capsys):
    code, _, err = run(["-qa", "-qa-timeout", "0", "-no-write"], capsys)
    assert code == 2 and "-qa-timeout" in one_error(err)
    from memini_bench.modes.qa import QAOptions

    assert QAOptions().qa_timeout == 120.0


@pytest.mark.slow
def test_running_out_of_memory_while_parsing_is_not_called_invalid_json(tmp_path):
    """A real allocation failure: the process's address space is capped a little above the file's size."""
    data = tmp_path / "big.json"
    items = [{"id": f"i{i}", "content": "x" * 900, "group": "g"} for i in range(40_000)]
    data.write_text(json.dumps({"items": items, "questions": [{"query": "q", "gold": ["i1"]}]}))
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"items": items[:2], "questions": [{"query": "q", "gold": ["i1"]}]}))
    # A first run on a small file loads every module the run imports (the CLI imports them when they are used),
    # so the cap measures the parsing alone.
    script = (
        "import os, resource, sys\n"
        "from memini_bench.cli import main\n"
        "try:\n"
        "    main(['-suite', 'file', '-data', sys.argv[2], '-systems', 'keyword', '-no-write', '-quiet'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "vm = [int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize')][0]\n"
        "size = os.path.getsize(sys.argv[1])\n"
        "resource.setrlimit(resource.RLIMIT_AS, (vm + int(2.5 * size),) * 2)\n"
        "main(['-suite', 'file', '-data', sys.argv[1], '-systems', 'keyword', '-no-write'])\n")
    done = subprocess.run([sys.executable, "-c", script, str(data), str(small)], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "ran out of memory" in last and "not valid JSON" not in last
