"""The run checks in the modes that call a system's hooks themselves: ``-qa``, ``-multihop`` and ``-entity-bridge``
(``evaluation.guarded``), driven through the CLI with ``tests/misbehaving_plugin.py``.

A leak is refused (one line naming the system and the question, exit 2, nothing written, no trace); ``-leaks count``
runs, drops the leaked hits and reports their count in the results and the printed output; a hook that raises, too
many hits for the k of the call and an answer that is not a list are one line too. The counts are derived by hand
from the plugin (it leaks exactly one hit per recall): -qa and -entity-bridge recall once per question; -multihop,
whose first recall then misses a gold, recalls twice more (the realistic and the oracle second hop).
"""

from __future__ import annotations

import json
from pathlib import Path

import misbehaving_plugin
import pytest
from cli_run import run_cli
from loopback import ScriptedServer
from qa_server import ChatScript, scripted_llm_env

GROUPS = ("a", "b")
DATA = {
    "name": "guard",
    "items": [{"id": f"{g}{n}", "content": f"memory {n} of group {g} about topic {n}", "group": g}
              for g in GROUPS for n in range(4)],
    "questions": [{"id": f"q{g}{n}", "query": f"what links topic {n} and topic {(n + 1) % 4} in {g}",
                   "gold": [f"{g}{n}", f"{g}{(n + 1) % 4}"], "group": g, "category": "1",
                   "answer": f"topic {n}"} for g in GROUPS for n in range(4)],
}
QUESTIONS = len(DATA["questions"])
GOLD = {q["query"]: tuple(q["gold"]) for q in DATA["questions"]}
MODES = {
    "qa": ["-qa", "-qa-k", "2", "-concurrency", "2", "-qa-retries", "0"],
    "multihop": ["-multihop", "-k", "2"],
    "entity-bridge": ["-entity-bridge", "-k", "2"],
}
#: hits the plugin leaks under {"extra": "leak"}: one per recall (see the module docstring)
LEAKED = {"qa": QUESTIONS, "multihop": 3 * QUESTIONS, "entity-bridge": QUESTIONS}


@pytest.fixture(autouse=True)
def _llm_env(monkeypatch):
    scripted_llm_env(monkeypatch)


def _run(mode: str, tmp_path: Path, capsys, monkeypatch, behaviour: dict, *extra: str):
    """The mode over ``DATA`` with the misbehaving plugin: (exit code, stdout, stderr, the out folder)."""
    data = tmp_path / "guard.json"
    data.write_text(json.dumps(DATA))
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    misbehaving_plugin.BEHAVIOUR = {"gold": GOLD, **behaviour}
    args = ["-suite", "file", "-data", str(data), "-systems", "misbehaving_plugin:make", "-embedder", "hash",
            "-out", str(out), *MODES[mode], *extra]
    with ScriptedServer(ChatScript()) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url + "/v1")
        code, stdout, err = run_cli(args, capsys)
    return code, stdout, err, out


def _one_line(err: str) -> str:
    """The run's one error line (the last line, the only error, no trace), which names the system."""
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("memini-bench: error:")]
    assert errors == [lines[-1]], err
    assert errors[0].startswith("memini-bench: error: system misbehaving"), err
    assert "Traceback" not in err
    return errors[0]


@pytest.mark.parametrize("mode", MODES)
def test_a_leak_is_refused_in_one_line(mode, tmp_path, capsys, monkeypatch):
    code, stdout, err, out = _run(mode, tmp_path, capsys, monkeypatch, {"extra": "leak"})
    line = _one_line(err)
    assert code == 2 and stdout == ""
    assert "recall for question 'qa0'" in line and "of group 'b', not the question's group 'a' (a leak" in line
    assert not list(out.iterdir())


def _results(out: Path) -> dict:
    [written] = [f for f in out.iterdir() if f.suffix == ".json"]
    return json.loads(written.read_text())


@pytest.mark.parametrize("mode", MODES)
def test_leaks_count_drops_and_reports_the_leaked_hits(mode, tmp_path, capsys, monkeypatch):
    code, stdout, err, out = _run(mode, tmp_path, capsys, monkeypatch, {"extra": "leak"}, "-leaks", "count")
    assert code == 0, err
    doc = _results(out)
    n = LEAKED[mode]
    if mode == "qa":
        assert doc["leaked"] == {"misbehaving": n}
        # the reader saw only group a's memories: the first of the two recalled (the leak was the second)
        archive = [json.loads(line) for line in next(out.glob("*.archive.jsonl")).read_text().splitlines()]
        assert all(len(r["recalled"]) == 1 and r["recalled"][0][0][0] == r["id"][1] for r in archive)
    else:
        assert [r["leaked"] for r in doc["results"]] == [n]
    if mode == "multihop":  # each recall lost its second hit: one gold of two, in every regime
        assert [(r["full_gold"], r["mean_gold_recall"]) for r in doc["results"][0]["regimes"]] == [(0.0, 0.5)] * 3
    assert f"leaked hits dropped (-leaks count): misbehaving {n}" in stdout


@pytest.mark.parametrize("mode", ["multihop", "entity-bridge"])
def test_leaks_count_of_a_well_behaved_system_is_zero_and_the_default_adds_nothing(mode, tmp_path, capsys,
                                                                                    monkeypatch):
    code, stdout, err, out = _run(mode, tmp_path, capsys, monkeypatch, {}, "-leaks", "count")
    assert code == 0, err
    assert [r["leaked"] for r in _results(out)["results"]] == [0]
    for f in out.iterdir():
        f.unlink()
    code, stdout, err, out = _run(mode, tmp_path, capsys, monkeypatch, {})
    assert code == 0, err
    assert "leaked" not in _results(out)["results"][0] and "leaked" not in stdout


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("hook", ["ingest", "recall"])
def test_a_hook_that_raises_is_one_line(mode, hook, tmp_path, capsys, monkeypatch):
    code, stdout, err, out = _run(mode, tmp_path, capsys, monkeypatch, {"raise_in": hook, "error": ValueError("kaput")})
    line = _one_line(err)
    assert code == 2 and f": {hook}" in line and "raised ValueError: kaput" in line
    assert not list(out.iterdir())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("behaviour", "fragment"), [
    ({"extra": "too_many"}, "hits for depth {k} (the k of this call); return at most {k}"),
    ({"returns": "generator"}, "returned generator, not a list of Hit (a generator is not taken"),
    ({"returns": "dict"}, "returned dict, not a list of Hit"),
])
def test_too_many_hits_or_not_a_list_is_refused(mode, behaviour, fragment, tmp_path, capsys, monkeypatch):
    code, stdout, err, out = _run(mode, tmp_path, capsys, monkeypatch, behaviour)
    line = _one_line(err)
    k = 50 if mode == "entity-bridge" else 2  # the bridge's first recall is pool_size(k) deep
    assert code == 2 and fragment.format(k=k) in line, line
    assert not list(out.iterdir())


def test_traceback_shows_the_trace_in_a_mode(tmp_path, capsys, monkeypatch):
    code, _, err, _ = _run("multihop", tmp_path, capsys, monkeypatch, {"raise_in": "recall"}, "-traceback")
    assert code == 2 and "Traceback (most recent call last)" in err and "misbehaving_plugin.py" in err
    assert err.rstrip().splitlines()[-1].startswith("memini-bench: error: system misbehaving: recall")


def test_a_recall_past_the_timeout_is_one_line_in_a_mode(tmp_path, capsys, monkeypatch):
    code, _, err, out = _run("entity-bridge", tmp_path, capsys, monkeypatch, {"sleep": 5.0}, "-recall-timeout", "0.2")
    assert code == 2 and "ran past -recall-timeout 0.2 s" in _one_line(err)
    assert not list(out.iterdir())
