"""The API is the CLI: ``evaluate()`` and ``score()`` run under the CLI's contract (a plugin's ``os._exit``, a stray
thread it leaves running, a stream it closes are refused the same way), ``quiet=True`` writes nothing to stdout or
stderr, every bad argument is one ``BenchError`` naming it (never click's exception or a TypeError) and writes
nothing, ``score()`` returns the Report ``memini-bench score`` prints, and a Report's rows, DataFrame and repr are
flat, one column per registered metric and K, one line."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from cli_run import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.core.contract import Hit
from memini_bench.errors import BenchError

RELEASE = threading.Event()


def _wait() -> None:
    RELEASE.wait(60)


class Plugin:
    """A System over the sample that does one bad thing in ``recall`` (``what``), else ranks the group's items."""

    name = "plugin"

    def __init__(self, what: str = "") -> None:
        self.what = what

    def ingest(self, items):
        self.items = list(items)
        if self.what == "thread":
            threading.Thread(target=_wait, name="stray", daemon=False).start()

    def recall(self, group, query, k, *, now=None, context=None):
        if self.what == "exit":
            os._exit(3)
        if self.what == "thread-exit":
            t = threading.Thread(target=os._exit, args=(4,), name="exiter")
            t.start()
            t.join()
        if self.what == "print":
            print("plugin says hello")
        if self.what == "close-stdout":
            import sys

            sys.stdout.close()
        mine = [it for it in self.items if it.group == group]
        return [Hit((it.id,), 1.0, it.content) for it in mine[:k]]


def make_exit(ctx):
    return Plugin("exit")


def make_thread_exit(ctx):
    return Plugin("thread-exit")


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMINI_BENCH_CACHE", str(tmp_path / "cache"))
    yield tmp_path
    RELEASE.set()


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and "cache" not in p.parts]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the exiting thread's end
@pytest.mark.parametrize("what, fragment", [("exit", "called os._exit(3); a plugin may not end the process"),
                                            ("thread-exit", "called os._exit(4) during the run")])
def test_a_plugins_os_exit_is_refused_as_the_cli_refuses_it(in_tmp, capsys, what, fragment):
    from memini_bench import evaluate

    with pytest.raises(BenchError, match=fragment.replace("(", r"\(").replace(")", r"\)")) as api:
        evaluate(Plugin(what), suite="sample", embedder="hash")
    code, out, err = run_cli(["run", "-suite", "sample", "-embedder", "hash", "-system",
                              f"{__name__}:make_{what.replace('-', '_')}", "-out", str(in_tmp / "runs")], capsys)
    assert code == 2 and str(api.value) in err, err
    assert not (in_tmp / "runs").exists() or not _files(in_tmp / "runs")


STRAY = """
import threading
from memini_bench.core.contract import Hit

def _wait():
    threading.Event().wait(5)

class Stray:
    name = "stray-plugin"
    def ingest(self, items):
        self.items = list(items)
        threading.Thread(target=_wait, name="stray", daemon=False).start()
    def recall(self, group, query, k, *, now=None, context=None):
        return [Hit((it.id,), 1.0, it.content) for it in self.items if it.group == group][:k]

from memini_bench import evaluate
from memini_bench.errors import BenchError
try:
    evaluate(Stray(), suite="sample", embedder="hash")
except BenchError as exc:
    print(type(exc).__name__, exc)
"""


def test_a_stray_plugin_thread_fails_the_run(in_tmp):
    """In a fresh process (the guard remembers the threads it has seen by ident, which this process reuses)."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", STRAY], capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.startswith("PluginError system stray-plugin: ingest started thread 'stray' (not a daemon)"), \
        done.stdout + done.stderr
    assert done.stderr == ""  # quiet


def test_a_plugin_closing_stdout_is_refused(in_tmp):
    from memini_bench import evaluate

    with pytest.raises(BenchError, match="closed|stdout"):
        evaluate(Plugin("close-stdout"), suite="sample", embedder="hash")


def test_quiet_writes_nothing_to_stdout_or_stderr(in_tmp, capfd):
    from memini_bench import evaluate, score

    capfd.readouterr()
    report = evaluate([Plugin("print"), "memini-keyword"], suite="sample", embedder="hash", k=(1, 5),
                      significance=True, resamples=200)
    assert capfd.readouterr() == ("", "")
    evaluate(Plugin("print"), suite="sample", embedder="hash", quiet=False)
    out, err = capfd.readouterr()
    assert "plugin says hello" in out and 'dataset "memini-sample"' in err
    path = report.save(in_tmp / "runs")
    assert path.is_file()
    run = _trec_run(in_tmp, capfd)
    capfd.readouterr()
    scored = score(run["runs"], qrels=run["qrels"], k=(1, 5), significance=True, resamples=200)
    assert capfd.readouterr() == ("", "") and scored.systems


def _trec_run(folder: Path, capsys) -> dict:
    code, _, err = run_cli(["run", "-suite", "sample", "-embedder", "hash", "-k", "5,10", "-systems",
                            "keyword,vector", "-trec", str(folder / "trec"), "-out", str(folder / "r"), "-quiet"],
                           capsys)
    assert code == 0, err
    return {"qrels": next((folder / "trec").glob("*.qrels")), "runs": sorted((folder / "trec").glob("*.run"))}


def test_score_returns_the_report_the_cli_prints(in_tmp, capsys):
    from memini_bench import Report, score

    files = _trec_run(in_tmp, capsys)
    report = score(files["runs"], qrels=files["qrels"], k=5, metrics=["recall_frac@5", "mrr@10"],
                   significance=True, resamples=300)
    args = ["score", "-qrels", str(files["qrels"]), "-k", "5", "-metrics", "recall_frac@5,mrr@10", "-significance",
            "-resamples", "300", "-out", str(in_tmp / "cli")]
    code, out, err = run_cli(args + [a for r in files["runs"] for a in ("-run", str(r))], capsys)
    assert code == 0, err
    assert isinstance(report, Report) and report.to_markdown() == out
    cli_doc = json.loads(next((in_tmp / "cli").glob("*.json")).read_text())
    (in_tmp / "api").mkdir()
    written = report.save(in_tmp / "api")
    assert written.name == report.file_name == next((in_tmp / "cli").glob("*.json")).name
    api_doc = json.loads(written.read_text())
    assert api_doc["results"] == cli_doc["results"] and api_doc["config"]["identity"] == cli_doc["config"]["identity"]
    assert all("latency_p50" not in row for row in report.rows())
    assert report.rows()[0]["recall_frac@5"] == cli_doc["results"][0]["scores"]["recall_frac@5"]


def test_rows_are_flat_the_dataframe_has_a_column_per_metric_and_k_and_repr_is_one_line(in_tmp):
    pytest.importorskip("pandas")
    from memini_bench import evaluate

    report = evaluate(["memini-keyword", "memini-vector"], suite="sample", embedder="hash", k=(1, 5))
    rows = report.rows()
    assert len(rows) == 4
    for row in rows:
        assert all(isinstance(v, str | int | float) for v in row.values()), row
        assert {f"recall_any@{row['k']}", f"ndcg@{row['k']}", "mrr", "latency_p50"} <= set(row)
    frame = report.to_dataframe()
    assert list(frame.index) == ["memini-keyword", "memini-vector"]
    assert {"recall_any@1", "recall_any@5", "recall_all@5", "ndcg@1", "mrr"} <= set(frame.columns)
    for system in report.systems:
        for k in (1, 5):
            assert frame.loc[system, f"recall_any@{k}"] == report.score(system, k).scores[f"recall_any@{k}"]
    text = repr(report)
    assert "\n" not in text and text.startswith("Report(dataset='memini-sample', systems=['memini-keyword'")
    assert len(text) < 200


@pytest.mark.parametrize("kwargs, fragment", [
    ({"k": 5.5}, "evaluate(): k=5.5: give a whole number"),
    ({"k": None}, "evaluate(): k=None"),
    ({"k": True}, "evaluate(): k=True"),
    ({"k": "5"}, "evaluate(): k='5'"),
    ({"k": 0}, "evaluate(): k=0"),
    ({"k": (5, -1)}, "evaluate(): k=(5, -1)"),
    ({"k": []}, "evaluate(): k=[]"),
    ({"suite": None}, "evaluate(): suite=None: give a string"),
    ({"data": None}, "evaluate(): data=None"),
    ({"embedder": 3}, "evaluate(): embedder=3"),
    ({"significance": "yes"}, "evaluate(): significance='yes': give True or False"),
    ({"quiet": None}, "evaluate(): quiet=None"),
    ({"resamples": 5, "significance": True}, "evaluate(): resamples=5: 5 is below the allowed minimum 100"),
    ({"resamples": "many"}, "evaluate(): resamples='many'"),
    ({"resamples": None}, "evaluate(): resamples=None"),
    ({"limit": -1}, "evaluate(): limit=-1: -1 is below the allowed minimum 0"),
    ({"limit": 1.5}, "evaluate(): limit=1.5"),
    ({"fusion": float("nan")}, "evaluate(): fusion=nan"),
    ({"holdout": "middle"}, "evaluate(): holdout='middle'"),
    ({"holdot": "held"}, "evaluate(): no setting holdot; did you mean holdout?"),
    ({"trec": "x"}, "evaluate(): trec writes files"),
])
def test_a_bad_evaluate_argument_is_one_bench_error(in_tmp, kwargs, fragment):
    from memini_bench import evaluate

    with pytest.raises(BenchError) as caught:
        evaluate("memini-keyword", **{"suite": "sample", **kwargs})
    assert type(caught.value) is BenchError and str(caught.value).startswith(fragment), str(caught.value)
    assert "\n" not in str(caught.value) and not _files(in_tmp)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"runs": None}, "score(): runs=None"),
    ({"runs": []}, "score(): runs=[]"),
    ({"qrels": None}, "score(): qrels=None"),
    ({"k": 5.5}, "score(): k=5.5"),
    ({"metrics": ["nope@5"]}, "-metrics 'nope@5': unknown metric"),
    ({"metrics": [5]}, "score(): metrics=5"),
    ({"significance": True, "alpha": 2.0}, "score(): alpha=2.0"),
    ({"significance": True, "resamples": 1}, "score(): resamples=1"),
    ({"out": "x"}, "score(): out writes files"),
    ({"qrels": "", "suite": "sample", "exclude": "known-bad"}, "-exclude known-bad: -suite sample has no list"),
])
def test_a_bad_score_argument_is_one_bench_error(in_tmp, capsys, kwargs, fragment):
    from memini_bench import score

    files = _trec_run(in_tmp, capsys)
    before = set(_files(in_tmp))
    args = {"runs": [str(p) for p in files["runs"]], "qrels": str(files["qrels"]), **kwargs}
    with pytest.raises(BenchError) as caught:
        score(args.pop("runs"), **args)
    assert type(caught.value) is BenchError and str(caught.value).startswith(fragment), str(caught.value)
    assert set(_files(in_tmp)) == before


@pytest.mark.parametrize("path", [None, "", 3, b"runs"])
def test_save_refuses_a_bad_path_by_its_argument(in_tmp, path):
    from memini_bench import evaluate

    report = evaluate("memini-keyword", suite="sample")
    with pytest.raises(BenchError, match=r"^Report\.save\(path="):
        report.save(path)
    assert not _files(in_tmp)


def test_save_onto_another_run_speaks_of_its_argument_not_flags(in_tmp):
    from memini_bench import evaluate

    path = evaluate("memini-keyword", suite="sample").save(in_tmp)
    other = evaluate("memini-keyword", suite="sample", limit=4)
    with pytest.raises(BenchError) as caught:
        other.save(path)
    message = str(caught.value)
    assert message.startswith(f"Report.save(path={str(path)!r}): ") and "other settings" in message
    assert " -name" not in message and " -out" not in message


_value = st.one_of(st.none(), st.booleans(), st.integers(-3, 200), st.floats(allow_nan=True), st.text(max_size=6),
                   st.lists(st.integers(-2, 12), max_size=3), st.tuples(st.integers(0, 3)))


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["k", "resamples", "limit", "suite", "seed", "significance", "holdout",
                                        "fusion", "pool", "kk", "quiet"]), _value, max_size=3))
def test_any_evaluate_arguments_give_a_report_or_one_bench_error(in_tmp, kwargs):
    """Whatever values: a Report, or one BenchError (one line, no other exception), and no file written."""
    from memini_bench import Report, evaluate

    try:
        report = evaluate("memini-keyword", **{"suite": "sample", "quiet": True, **kwargs})
    except BenchError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(report, Report)
    assert not _files(in_tmp)
