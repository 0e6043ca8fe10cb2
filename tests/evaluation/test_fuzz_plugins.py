"""The run contract under misbehaving System plugins (``tests/misbehaving_plugin.py``), fuzzed with hypothesis:
whatever a plugin does (raise in any hook, return the wrong type, leak another group's items, return too many or
duplicate hits, non-finite scores, sleep past -recall-timeout), a run ends either with exit 0 and correct results,
or with exit 2, exactly one line on stderr naming the system, and nothing written. The normal run and ``-multihop``
(which drives the system itself, through ``evaluation.guarded``: two recalls per question) are fuzzed.

The oracle for exit 0 is independent of the harness: the plugin returns each question's gold first, so recall_any@K
is the share of questions whose gold is in the data set (1 here), and a leaked hit, dropped under -leaks count, is
counted once per question. In ``-multihop`` (k 2, two gold per question) the gold pair covers every question in the
first recall, in every regime; a leak (the second hit) leaves one gold, and the two second hops (query + that gold's
text, which the plugin answers with the group's first item and the leak) find no other: every regime 0 full-gold
and 1/2 mean gold recall, 3 leaked hits per question. ``-multihop`` never calls ``prepare``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.cli import main
from memini_bench.errors import BenchError

sys.path.insert(0, str(Path(__file__).parents[1]))
import misbehaving_plugin  # noqa: E402

DATA = {
    "name": "two-groups",
    "items": [{"id": f"{g}{n}", "content": f"memory {n} of group {g} about topic {n}", "group": g}
              for g in ("a", "b") for n in range(4)],
    "questions": [{"id": f"q{g}{n}", "query": f"what about topic {n} in {g}", "gold": [f"{g}{n}"], "group": g}
                  for g in ("a", "b") for n in range(4)],
}
GOLD = {q["query"]: tuple(q["gold"]) for q in DATA["questions"]}
K = 3

HOOKS = ("factory", "ingest", "prepare", "recall", "close")
#: -recall-timeout of these runs: a sleeping recall (3 s or more) passes it; a quick one never does, even on a
#: machine busy enough to stall the process for a while
RECALL_BOUND_S = 1.0
ERRORS = (ValueError("boom\nsecond line"), SystemExit(3), BenchError("store is broken"), MemoryError(),
          RuntimeError(""), KeyError("x"))
BAD = ("str_ids", "int_id", "none_ids", "nan_score", "inf_score", "str_score", "bool_score", "none_content",
       "dict_hit")
BEHAVIOURS = st.fixed_dictionaries({}, optional={
    "raise_in": st.sampled_from(HOOKS), "error": st.sampled_from(ERRORS),
    "returns": st.sampled_from(("list", "tuple", "generator", "dict", "none")),
    "extra": st.sampled_from(("leak", "unknown", "duplicate", "too_many")),
    "bad": st.sampled_from(BAD), "sleep": st.sampled_from((0.0, 3.0)),
})


def expected_failure(b: dict, leaks: str, hooks: tuple[str, ...] = HOOKS) -> bool:
    """Whether the behaviour ``b`` breaks the contract (the run must then end with exit 2) in a run that calls
    ``hooks``."""
    if b.get("raise_in") in hooks:
        return True
    if b.get("sleep"):
        return True
    if b.get("returns", "list") not in ("list", "tuple"):
        return True
    if b.get("bad"):
        return True
    extra = b.get("extra")
    return extra in ("unknown", "duplicate", "too_many") or (extra == "leak" and leaks == "error")


def assert_one_error_line(err: str, case: object, notes: tuple[str, ...] = ("dataset ", "  note:")) -> None:
    """The run's stderr ends in exactly one error line, naming the system, and holds no trace (the lines before it
    are the run's own notes: the data set loaded)."""
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() and line.startswith("memini-bench")]
    assert len(errors) == 1 and lines[-1] == errors[0], (case, err)
    assert errors[0].startswith("memini-bench: error: system misbehaving"), (case, err)
    assert "Traceback" not in err, (case, err)
    assert all(line.startswith((*notes, "memini-bench: error:")) for line in lines), (case, err)


def run_cli(tmp_path: Path, capsys, behaviour: dict, leaks: str, data: dict = DATA,
            mode: tuple[str, ...] = ("-k", str(K))) -> tuple[int, str, Path]:
    path = tmp_path / "two.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    for f in out.iterdir():
        f.unlink()
    misbehaving_plugin.BEHAVIOUR = {"gold": {q["query"]: tuple(q["gold"]) for q in data["questions"]}, **behaviour}
    capsys.readouterr()
    code = 0
    try:
        main(["-suite", "file", "-data", str(path), *mode, "-systems", "misbehaving_plugin:make",
              "-embedder", "hash", "-out", str(out), "-leaks", leaks, "-recall-timeout", str(RECALL_BOUND_S), "-quiet"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err, out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(behaviour=BEHAVIOURS, leaks=st.sampled_from(("error", "count")))
def test_a_misbehaving_plugin_ends_in_correct_results_or_one_line(tmp_path, capsys, behaviour, leaks):
    code, err, out = run_cli(tmp_path, capsys, behaviour, leaks)
    if expected_failure(behaviour, leaks):
        assert code == 2, (behaviour, err)
        assert_one_error_line(err, behaviour)
        assert not list(out.iterdir()), "nothing is written after a failure"
        return
    assert code == 0, (behaviour, err)
    [written] = [f for f in out.iterdir() if f.suffix == ".json"]
    [row] = json.loads(written.read_text())["results"]
    assert row["scores"][f"recall_any@{row['k']}"] == 1.0  # the gold comes first for every question
    assert row["scores"]["mrr"] == 1.0
    leaked = len(DATA["questions"]) if behaviour.get("extra") == "leak" else 0
    assert row["leaked"] == leaked


MULTIHOP_DATA = {
    "name": "two-groups",
    "items": DATA["items"],
    "questions": [{"id": f"q{g}{n}", "query": f"what links topic {n} and {(n + 1) % 4} in {g}",
                   "gold": [f"{g}{n}", f"{g}{(n + 1) % 4}"], "group": g, "category": "1"}
                  for g in ("a", "b") for n in range(4)],
}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(behaviour=BEHAVIOURS, leaks=st.sampled_from(("error", "count")))
def test_a_misbehaving_plugin_in_multihop_ends_in_correct_results_or_one_line(tmp_path, capsys, behaviour, leaks):
    code, err, out = run_cli(tmp_path, capsys, behaviour, leaks, MULTIHOP_DATA, ("-multihop", "-k", "2"))
    if expected_failure(behaviour, leaks, tuple(h for h in HOOKS if h != "prepare")):
        assert code == 2, (behaviour, err)
        assert_one_error_line(err, behaviour, notes=("dataset ", "  note:", "study "))
        assert not list(out.iterdir()), "nothing is written after a failure"
        return
    assert code == 0, (behaviour, err)
    [written] = [f for f in out.iterdir() if f.suffix == ".json"]
    [row] = json.loads(written.read_text())["results"]
    leaked = behaviour.get("extra") == "leak"
    regimes = {r["regime"]: (r["full_gold"], r["mean_gold_recall"]) for r in row["regimes"]}
    assert regimes == dict.fromkeys(("single", "realistic", "oracle"), (0.0, 0.5) if leaked else (1.0, 1.0))
    assert row.get("leaked") == ((3 * len(MULTIHOP_DATA["questions"]) if leaked else 0) if leaks == "count"
                                 else None)


@pytest.mark.parametrize("hook", HOOKS)
def test_each_hook_failure_names_the_system_and_the_hook(tmp_path, capsys, hook):
    code, err, out = run_cli(tmp_path, capsys, {"raise_in": hook, "error": ValueError("kaput")}, "error")
    assert code == 2
    assert_one_error_line(err, hook)
    assert f"{hook}" in err and "ValueError: kaput" in err and "misbehaving" in err
    assert not list(out.iterdir())


@pytest.mark.parametrize(("made", "fragment"), [("empty", "returned no system"), ("int_name", "named 7")])
def test_a_factory_returning_nothing_or_a_bad_name_is_one_line(tmp_path, capsys, made, fragment):
    code, err, out = run_cli(tmp_path, capsys, {"factory_returns": made}, "error")
    assert code == 2 and fragment in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("memini-bench: error: -systems misbehaving_plugin:make")
    assert not list(out.iterdir())


def test_traceback_shows_the_whole_trace(tmp_path, capsys):
    data = tmp_path / "two.json"
    data.write_text(json.dumps(DATA))
    misbehaving_plugin.BEHAVIOUR = {"raise_in": "recall", "error": ValueError("kaput")}
    with pytest.raises(SystemExit) as exc:
        main(["-suite", "file", "-data", str(data), "-systems", "misbehaving_plugin:make", "-embedder", "hash",
              "-no-write", "-traceback"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "misbehaving_plugin.py" in err
    assert err.rstrip().splitlines()[-1].startswith("memini-bench: error: system misbehaving: recall")


def test_a_recall_past_the_timeout_is_one_line(tmp_path, capsys):
    code, err, _ = run_cli(tmp_path, capsys, {"sleep": 5.0}, "error")
    assert code == 2
    assert f"ran past -recall-timeout {RECALL_BOUND_S:g} s" in err


def test_leaks_count_scores_without_the_leaked_hits(tmp_path, capsys):
    code, err, out = run_cli(tmp_path, capsys, {"extra": "leak"}, "count")
    assert code == 0, err
    [written] = list(out.iterdir())
    [row] = json.loads(written.read_text())["results"]
    assert row["leaked"] == 8
    assert "leaked" in capsys.readouterr().out or True  # the table is checked in test_leaks_column_in_the_table


def test_leaks_column_in_the_table(tmp_path, capsys):
    data = tmp_path / "two.json"
    data.write_text(json.dumps(DATA))
    misbehaving_plugin.BEHAVIOUR = {"gold": GOLD, "extra": "leak"}
    with pytest.raises(SystemExit) as exc:
        main(["-suite", "file", "-data", str(data), "-k", "3", "-systems", "misbehaving_plugin:make",
              "-embedder", "hash", "-no-write", "-leaks", "count"])
    assert exc.value.code == 0
    table = capsys.readouterr().out
    header = next(line for line in table.splitlines() if "leaked" in line)
    row = next(line for line in table.splitlines() if line.startswith("| misbehaving"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    names = [c.strip() for c in header.strip("|").split("|")]
    assert cells[names.index("leaked")] == "8"
