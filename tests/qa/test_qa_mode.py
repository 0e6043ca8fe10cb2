"""``-qa`` end to end against a loopback chat server: the numbers against an independent oracle, retries, a server
that dies midway, a killed run, resume equal to an uninterrupted run, and one-line errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_opts import cli_options
from loopback import ScriptedServer
from qa_server import ChatScript, scripted_llm_env, words

from memini_bench.cli import main
from memini_bench.loaders import load
from memini_bench.loaders.longmemeval import parse_lme_date
from memini_bench.qa import prompts
from memini_bench.systems.lineup import build_systems

ROOT = Path(__file__).resolve().parents[2]
ITEMS = [
    ("a1", "g1", "Alice moved to Lisbon for a design job.", "2023-01-05T10:00:00Z"),
    ("a2", "g1", "Alice now lives in Porto after moving again.", "2023-06-01T10:00:00Z"),
    ("a3", "g1", "The payments service is written in Go and deployed on Tuesdays.", "2023-02-01T10:00:00Z"),
    ("a4", "g1", "Bob adopted a cat named Miso from the shelter.", None),
    ("b1", "g2", "The team standup moved from 9am to 10am in March.", "2023-03-01T09:00:00Z"),
    ("b2", "g2", "Invoices are stored in Postgres because of the ledger constraints.", "2023-03-10T09:00:00Z"),
    ("b3", "g2", "Carol leads the search team and prefers Rust for services.", "2023-04-02T09:00:00Z"),
    ("b4", "g2", "The offsite is planned for the second week of May in Porto.", "2023-04-20T09:00:00Z"),
]
QUESTIONS = [
    ("q1", "g1", "Where did Alice move to?", "Porto", "knowledge-update"),
    ("q2", "g1", "Which language is the payments service written in?", "Go", "single-session-user"),
    ("q3", "g1", "What is the name of the cat Bob adopted?", "Miso", "single-session-user"),
    ("q4", "g2", "When does the team standup start now?", "10am", "temporal-reasoning"),
    ("q5", "g2", "Where are invoices stored?", "Postgres", "multi-session"),
    ("q6", "g2", "Which language does Carol prefer for services?", "Rust", "single-session-preference"),
    ("q7", "g2", "Where is the offsite planned?", "Porto", "multi-session"),
    ("q8_abs", "g2", "What is the name of Carol's dog?", "", "single-session-user"),
]
ARGS = ["-suite", "file", "-embedder", "hash", "-systems", "keyword", "-qa", "-qa-k", "1,3", "-concurrency", "2",
        "-qa-retries", "2"]
STEM = "tiny-qa-sys-keyword-qak1+3-m-scripted"


@pytest.fixture
def data(tmp_path):
    doc = {"name": "tiny",
           "items": [{"id": i, "group": g, "content": c, **({"time": t} if t else {})} for i, g, c, t in ITEMS],
           "questions": [{"id": i, "group": g, "query": q, "answer": a, "category": c, "gold": []}
                         for i, g, q, a, c in QUESTIONS]}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(autouse=True)
def _llm_env(monkeypatch):
    scripted_llm_env(monkeypatch)


def _run(args, url, capsys, monkeypatch):
    monkeypatch.setenv("MEMINI_LLM_BASE_URL", url)
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _qa(data, out, url, capsys, monkeypatch, *extra):
    """The QA run of ``ARGS``, each flag in ``extra`` replacing ARGS's own (a flag given twice is refused)."""
    base, i = [], 0
    while i < len(ARGS):
        step = 1 if ARGS[i] == "-qa" else 2
        if ARGS[i] not in extra:
            base += ARGS[i:i + step]
        i += step
    return _run([*base, "-data", str(data), "-out", str(out), *extra], url, capsys, monkeypatch)


def _results(out):
    doc = json.loads((out / f"{STEM}.json").read_text())
    return doc["results"], doc["comparisons"]


def _archive(out):
    return [json.loads(line) for line in (out / f"{STEM}.archive.jsonl").read_text().splitlines()]


class RewordingJudge(ChatScript):
    """The scripted server, except that the judge's reply on q2 is ``NOT CORRECT`` whatever it was, on q3 ``maybe``
    and a ``CORRECT`` elsewhere is ``**Correct.**``: a negation, an unparseable reply and a decorated label."""

    def __call__(self, path, body):
        status, reply = super().__call__(path, body)
        if body["messages"][0]["content"] in prompts.RUBRICS.values():
            user = body["messages"][-1]["content"]
            message = reply["choices"][0]["message"]
            question = user.split("\n", 1)[0]
            if "payments service" in question:
                message["content"] = "NOT CORRECT"
            elif "cat Bob adopted" in question:
                message["content"] = "maybe"
            elif message["content"] == "CORRECT":
                message["content"] = "**Correct.**"
        return status, reply


def test_verdicts_read_strictly_negation_wrong_and_unparseable_counted(data, tmp_path, capsys, monkeypatch):
    """``NOT CORRECT`` is wrong, ``maybe`` is unparseable: counted per judge in the table and the results file and
    left out of the accuracy (the oracle: the same run with a plain judge)."""
    plain, reworded = tmp_path / "plain", tmp_path / "reworded"
    with ScriptedServer(ChatScript()) as srv:
        assert _qa(data, plain, srv.url + "/v1", capsys, monkeypatch)[0] == 0
    with ScriptedServer(RewordingJudge()) as srv:
        code, stdout, err = _qa(data, reworded, srv.url + "/v1", capsys, monkeypatch)
    assert code == 0, err
    base = {r["arm"]: r for r in _results(plain)[0]}
    for r in _results(reworded)[0]:
        truth = {row["id"]: row["correct"] for row in _archive(plain) if row["arm"] == r["arm"]}
        assert truth["q2"] is True  # the plain judge says CORRECT on q2; the reworded one NOT CORRECT
        assert base[r["arm"]]["correct"] == sum(truth.values())
        truth["q2"] = False
        del truth["q3"]
        assert (r["questions"], r["unparseable"]) == (8, 1)
        assert r["correct"] == sum(truth.values())
        assert r["accuracy"] == pytest.approx(sum(truth.values()) / 7)
        assert f"({r['correct']} correct of 7 judged; 1 unparseable verdicts left out; 8 total questions)" in stdout
    doc = json.loads((reworded / f"{STEM}.json").read_text())
    assert doc["verdicts"] == {"scripted": {"replies": 16, "unparseable": 2, "unparseable_keys": [
        ["memini-keyword@k1", "q3", 1], ["memini-keyword@k3", "q3", 1]]}}
    assert "| scripted | 16 | 2 |" in stdout
    rows = {(x["arm"], x["id"]): x for x in _archive(reworded)}
    assert rows[("memini-keyword@k1", "q3")]["correct"] is None
    assert rows[("memini-keyword@k1", "q2")]["correct"] is False


def test_accuracy_tokens_and_mcnemar_match_an_independent_oracle(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch)
        calls = len(srv.requests)
    assert code == 0, err
    assert calls == 2 * 2 * len(QUESTIONS)  # reader + judge, two arms
    # Oracle: recall with the keyword system directly; the scripted reader copies the memories and the scripted
    # judge passes an answer holding every word of the reference (abstention: only "I don't know").
    ds = load("file", str(data))
    (system,) = build_systems(["memini-keyword"], cli_options(embedder="hash").context())
    system.ingest(ds.items)
    expected, recalled = {}, {}
    for k in (1, 3):
        for q in ds.questions:
            hits = system.recall(q.group, q.query, 3)[:k]
            recalled[(k, q.id)] = [list(h.ids) for h in hits]
            text = set(words(" ".join(h.content for h in hits)))
            expected[(k, q.id)] = (not q.id.endswith("_abs")) and set(words(q.answer)) <= text
    results, (comparison,) = _results(out)
    assert [r["arm"] for r in results] == ["memini-keyword@k1", "memini-keyword@k3"]
    for r in results:
        right = [expected[(r["k"], q[0])] for q in QUESTIONS]
        assert r["correct"] == sum(right) and r["accuracy"] == pytest.approx(sum(right) / len(QUESTIONS))
        by_cat = {c["category"]: (c["questions"], c["correct"]) for c in r["per_category"]}
        assert by_cat["multi-session"] == (2, sum(expected[(r["k"], q)] for q in ("q5", "q7")))
        assert by_cat["single-session-user_abs"] == (1, 0)
        assert r["tokens"]["calls"] == 2 * len(QUESTIONS) and r["tokens"]["estimated_calls"] == 0
        assert (f"QA accuracy (LLM-judge) {r['arm']}: {r['accuracy'] * 100:.1f}%  ({r['correct']} correct of 8 "
                "judged; 8 total questions)") in stdout
    only_1 = sum(expected[(1, q[0])] and not expected[(3, q[0])] for q in QUESTIONS)
    only_3 = sum(expected[(3, q[0])] and not expected[(1, q[0])] for q in QUESTIONS)
    assert (comparison["only_a"], comparison["only_b"]) == (only_1, only_3) and only_3 > 0
    assert "| memini-keyword@k1 | memini-keyword@k3 | 8 |" in stdout
    # the archive: every prompt, reply and verdict, in arm then question order, with the rubric per category
    rows = _archive(out)
    assert [(r["arm"], r["id"]) for r in rows] == [(a, q[0]) for a in ("memini-keyword@k1", "memini-keyword@k3")
                                                    for q in QUESTIONS]
    by_id = {r["id"]: r for r in rows if r["arm"].endswith("@k3")}
    assert by_id["q1"]["judge"]["system"] == "knowledge-update" and by_id["q4"]["judge"]["system"] == "temporal"
    assert by_id["q8_abs"]["judge"]["system"] == "abstention"
    assert "Reference: (no reference; unanswerable)" in by_id["q8_abs"]["judge"]["user"]
    assert by_id["q1"]["reader"]["user"].startswith("Today's date: 2023-11-14\nMemories:\n--- ")
    assert by_id["q1"]["answer"] == prompts.strip_thinking(by_id["q1"]["reader"]["reply"])
    assert all(r["recalled"] == recalled[(int(r["arm"][-1]), r["id"])] for r in rows)
    config = json.loads((out / f"{STEM}.json").read_text())["config"]
    assert config["qa"]["system_prompts"]["reader"] == prompts.READER_SYSTEM
    assert config["identity"]["mode_settings"]["prompts"] == prompts.fingerprint()

    # a rerun finds everything graded: no call, the same numbers
    with ScriptedServer(ChatScript()) as srv:
        code, _, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch)
        assert code == 0 and srv.requests == []
    assert "16 of 16 already graded" in err and _results(out) == (results, [comparison])


def _uninterrupted(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "clean"
    with ScriptedServer(ChatScript()) as srv:
        code, _, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch)
    assert code == 0, err
    return out


def test_server_errors_and_garbage_give_the_numbers_of_a_clean_run(data, tmp_path, capsys, monkeypatch):
    clean = _uninterrupted(data, tmp_path, capsys, monkeypatch)
    out = tmp_path / "flaky"
    with ScriptedServer(ChatScript(fail=frozenset({2, 5, 9}), garbage=frozenset({3, 12}), usage=False)) as srv:
        code, _, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch, "-concurrency", "1")
    assert code == 0, err
    attempts = [r[c]["attempts"] for r in _archive(out) for c in ("reader", "judge")]
    assert sorted(attempts, reverse=True)[:4] == [3, 2, 2, 2] and sum(attempts) == 32 + 5
    flaky, clean_results = _results(out), _results(clean)
    assert flaky[1] == clean_results[1]
    for a, b in zip(flaky[0], clean_results[0], strict=True):
        assert {**a, "tokens": None} == {**b, "tokens": None}
        assert a["tokens"]["estimated_calls"] == a["tokens"]["calls"]  # this server sent no usage


def _dying_server(die_after):
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "qa_server.py"), "--die-after", str(die_after)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    return proc, proc.stdout.readline().strip()


def test_a_server_dying_midway_then_resume_equals_an_uninterrupted_run(data, tmp_path, capsys, monkeypatch):
    clean = _uninterrupted(data, tmp_path, capsys, monkeypatch)
    out = tmp_path / "out"
    proc, url = _dying_server(7)
    try:
        code, stdout, err = _qa(data, out, url, capsys, monkeypatch, "-qa-retries", "1")
    finally:
        proc.kill()
        proc.wait()
    assert code == 2 and stdout == ""
    line = err.strip().splitlines()[-1]
    assert "answers are not graded (3 questions in a row failed" in line and "rerun the same command to resume" in line
    assert "Traceback" not in err and not (out / f"{STEM}.json").exists()
    ckpt = out / f"{STEM}.ckpt.jsonl"
    graded = len(ckpt.read_text().splitlines()) - 1
    assert 1 <= graded <= 3  # 7 requests answered: at most 3 reader + judge pairs
    with open(ckpt, "ab") as fh:
        fh.write(b'{"arm": "memini-keyword@k1", "id": "q')  # and the run was killed in mid-write
    with ScriptedServer(ChatScript()) as srv:
        code, _, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch)
        calls = len(srv.requests)
    assert code == 0, err
    assert f"{graded} of 16 already graded; dropped a torn last line" in err and calls == 2 * (16 - graded)
    assert _results(out) == _results(clean) and _archive(out) == _archive(clean)


def killed_at(args: list[str], ckpt: Path, *, hold_after: int, lines: int) -> None:
    """Run the CLI with ``args`` against a scripted LLM that answers ``hold_after`` calls and holds the rest, and
    SIGKILL it once its checkpoint ``ckpt`` has ``lines`` lines: a run stopped at a known point however slow the
    machine. With 2 workers (a reader and a judge call per question) ``hold_after`` calls grade
    ``(hold_after - 2) / 2`` to ``hold_after / 2`` questions."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    script = ChatScript(hold_after=hold_after)
    with ScriptedServer(script) as srv:
        env["MEMINI_LLM_BASE_URL"] = srv.url + "/v1"
        proc = subprocess.Popen([sys.executable, "-m", "memini_bench", *args], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 600  # a hang guard only: the lines come once the calls are answered
            while time.time() < deadline and not (ckpt.exists() and len(ckpt.read_text().splitlines()) >= lines):
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        finally:
            script.release.set()


def test_a_killed_run_resumes_where_it_stopped(data, tmp_path, capsys, monkeypatch):
    clean = _uninterrupted(data, tmp_path, capsys, monkeypatch)
    out = tmp_path / "out"
    ckpt = out / f"{STEM}.ckpt.jsonl"
    killed_at([*ARGS, "-data", str(data), "-out", str(out)], ckpt, hold_after=8, lines=4)  # 3 or 4 of 16 graded
    graded = len(ckpt.read_bytes().split(b"\n")) - 2
    assert 3 <= graded <= 4
    with ScriptedServer(ChatScript()) as srv:
        code, _, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch)
    assert code == 0, err
    assert _results(out) == _results(clean) and _archive(out) == _archive(clean)


def test_bad_inputs_are_one_line_and_write_nothing(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.delenv("MEMINI_LLM_BASE_URL", raising=False)
    with pytest.raises(SystemExit) as exc:
        main([*ARGS, "-data", str(data), "-out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "MEMINI_LLM_BASE_URL is not set" in err[0] and not out.exists()
    code, _, err = _qa(data, out, "http://127.0.0.1:9/v1", capsys, monkeypatch, "-k", "5")
    assert code == 2 and "-k: not used by -qa" in err and not out.exists()
    code, _, err = _qa(data, out, "http://127.0.0.1:9/v1", capsys, monkeypatch, "-qa-k", "0")
    assert code == 2 and "-qa-k" in err
    # a checkpoint of another run is refused before any call
    with ScriptedServer(ChatScript()) as srv:
        assert _qa(data, out, srv.url + "/v1", capsys, monkeypatch)[0] == 0
        code, _, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch, "-qa-k", "3",
                           "-qa-checkpoint", str(out / f"{STEM}.ckpt.jsonl"))
        assert code == 2 and "other settings (mode_settings)" in err.strip().splitlines()[-1]


def test_no_write_prints_and_writes_nothing(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, _ = _qa(data, out, srv.url + "/v1", capsys, monkeypatch, "-no-write")
    assert code == 0 and "QA accuracy (LLM-judge) memini-keyword@k3" in stdout and not out.exists()


def test_two_systems_are_two_arms_and_the_judge_can_be_another_model(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv("MEMINI_JUDGE_MODEL", "grader")
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _run(["-suite", "file", "-data", str(data), "-embedder", "hash", "-systems",
                                  "keyword,vector", "-qa", "-qa-k", "2", "-out", str(out)], srv.url, capsys,
                                 monkeypatch)
        models = {(b["messages"][0]["content"] == prompts.READER_SYSTEM, b["model"]) for _, b, _ in srv.requests}
    assert code == 0, err
    assert models == {(True, "scripted"), (False, "grader")}
    doc = json.loads((out / "tiny-qa-emb-hash-sys-keyword+vector-qak2-m-scripted-judge-grader.json").read_text())
    assert [c["arm_a"] + " vs " + c["arm_b"] for c in doc["comparisons"]] == [
        "memini-keyword@k2 vs memini-vector@k2"]
    assert doc["config"]["qa"]["judge_model"] == "grader"


def test_real_locomo_and_longmemeval_questions(tmp_path, capsys, monkeypatch, locomo_path, lme_dir):
    out = tmp_path / "out"
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _run(["-suite", "locomo", "-data", str(locomo_path), "-embedder", "hash", "-systems",
                                  "keyword", "-limit", "40", "-qa", "-qa-k", "5", "-out", str(out)], srv.url, capsys,
                                 monkeypatch)
        assert code == 0, err
        rows = [json.loads(x) for x in (out / "locomo-limit40-qa-sys-keyword-qak5-m-scripted.archive.jsonl")
                .read_text().splitlines()]
        assert len(rows) == 40 and "5 (adversarial)" in stdout and "1 (multi-hop)" in stdout
        adversarial = next(r for r in rows if r["category"] == "5")
        assert adversarial["reference"] == "" and "(no reference; unanswerable)" in adversarial["judge"]["user"]
        ds = load("locomo", str(locomo_path))
        now = {q.id: q.now for q in ds.questions}
        assert rows[0]["reader"]["user"].startswith(f"Today's date: {now[rows[0]['id']]:%Y-%m-%d}\n")

        lme = lme_dir / "longmemeval_oracle_examples.json"
        code, _, err = _run(["-suite", "longmemeval", "-data", str(lme), "-embedder", "hash", "-systems", "keyword",
                             "-abstention", "include", "-qa", "-qa-k", "3", "-out", str(out)], srv.url, capsys,
                            monkeypatch)
        assert code == 0, err
    rows = {r["id"]: r for r in (json.loads(x) for x in (out / "longmemeval-qa-abs-include-sys-keyword-qak3-m-"
                                                               "scripted.archive.jsonl").read_text().splitlines())}
    raw = {r["question_id"]: r for r in json.loads(lme.read_text())}
    assert rows["09ba9854_abs"]["category"].endswith("_abs") and rows["09ba9854_abs"]["judge"]["system"] == "abstention"
    assert rows["gpt4_2655b836"]["judge"]["system"] == "temporal"
    when = parse_lme_date(raw["gpt4_2655b836"]["question_date"])
    assert rows["gpt4_2655b836"]["reader"]["user"].startswith(f"Today's date: {when:%Y-%m-%d}\n")


def test_a_run_of_other_data_never_meets_a_checkpoint_under_the_same_name(data, tmp_path, capsys, monkeypatch):
    """The results name is claimed with its checkpoint: a checkpoint another run left (here A's, its results file
    gone as after a kill) sends a run of other data to the hashed name, results and checkpoint; A resumes from its
    own checkpoint untouched."""
    out = tmp_path / "out"
    edited = tmp_path / "edited" / "tiny.json"
    edited.parent.mkdir()
    doc = json.loads(data.read_text())
    doc["items"][0]["content"] = "Alice moved to Lisbon for a research job."
    edited.write_text(json.dumps(doc))
    with ScriptedServer(ChatScript()) as srv:
        assert _qa(data, out, srv.url + "/v1", capsys, monkeypatch)[0] == 0
        (out / f"{STEM}.json").unlink()
        (out / f"{STEM}.archive.jsonl").unlink()
        a_ckpt = (out / f"{STEM}.ckpt.jsonl").read_bytes()
        code, _, err = _qa(edited, out, srv.url + "/v1", capsys, monkeypatch)
        assert code == 0 and "this run writes" in err, err
        hashed = sorted(p.name for p in out.glob(f"{STEM}-*.json"))
        assert len(hashed) == 1 and (out / hashed[0].replace(".json", ".ckpt.jsonl")).exists()
        assert (out / f"{STEM}.ckpt.jsonl").read_bytes() == a_ckpt and not (out / f"{STEM}.json").exists()
        calls = len(srv.requests)
        code, _, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch)
        assert code == 0 and "already graded" in err and len(srv.requests) == calls, err   # resumed: no call
    assert json.loads((out / f"{STEM}.json").read_text())["config"]["identity"]["run"]["data_sha256"] != \
        json.loads((out / hashed[0]).read_text())["config"]["identity"]["run"]["data_sha256"]


def _full_context_oracle(ds, window: int) -> tuple[dict[str, bool], int]:
    """Each question's verdict under the copying reader given the group's most recent items (by time, undated
    ones after their predecessor) within ``window`` estimated tokens, and how many questions were cut."""
    from memini_bench.core.runs import estimate_tokens

    verdicts, cut = {}, 0
    for q in ds.questions:
        members = [i for i in ds.items if i.group == q.group]
        keyed, last = [], None
        for n, item in enumerate(members):
            last = item.time or last
            keyed.append(((last is not None, last.isoformat() if last else "", n), item))
        history = [item for _, item in sorted(keyed, key=lambda p: p[0])]
        given, used = [], 0
        for item in reversed(history):
            if used + estimate_tokens(item.content) > window:
                break
            given.append(item)
            used += estimate_tokens(item.content)
        cut += len(given) < len(history)
        text = set(words(" ".join(i.content for i in given)))
        verdicts[q.id] = (not q.id.endswith("_abs")) and bool(given) and set(words(q.answer)) <= text
    return verdicts, cut


@pytest.mark.parametrize("window", [1_000_000, 30])
def test_full_context_arm_gives_the_whole_history_cut_to_the_window(data, tmp_path, capsys, monkeypatch, window):
    out = tmp_path / "out"
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch, "-qa-k", "1", "-qa-full-context",
                                str(window))
    assert code == 0, err
    (path,) = [p for p in out.glob("*.json")]
    assert path.name == f"tiny-qa-sys-keyword-qak1-m-scripted-full{window}.json"
    doc = json.loads(path.read_text())
    verdicts, cut = _full_context_oracle(load("file", str(data)), window)
    (fc,) = [r for r in doc["results"] if r["arm"] == "full-context"]
    assert fc["correct"] == sum(verdicts.values()) and fc["questions"] == len(QUESTIONS)
    assert doc["full_context"]["questions_cut"] == cut and doc["full_context"]["window_tokens"] == window
    assert (cut == 0) == (window == 1_000_000)
    assert doc["full_context"]["statement"] in stdout and doc["full_context"]["statement"] in err
    assert [r["arm"] for r in doc["results"]] == ["memini-keyword@k1", "full-context"]
    rows = [json.loads(line) for line in path.with_suffix(".archive.jsonl").read_text().splitlines()]
    assert all(r["correct"] == verdicts[r["id"]] for r in rows if r["arm"] == "full-context")


GOLD = {"q1": ["a2"], "q2": ["a3"], "q3": ["a4"], "q4": ["b1"], "q5": ["b2"], "q6": ["b3"], "q7": ["b4"], "q8_abs": []}


def test_wrong_answers_are_attributed_per_arm_and_category(data, tmp_path, capsys, monkeypatch):
    """Each wrong answer's bucket recomputed from a direct recall: gold not in the top 3 (not retrieved), in the top 3
    but not the arm's top k (below the cut), given (answer wrong), or no gold at all."""
    from memini_bench.qa.losses import BUCKETS

    doc = json.loads(data.read_text())
    for q in doc["questions"]:
        q["gold"] = GOLD[q["id"]]
    data.write_text(json.dumps(doc))
    out = tmp_path / "out"
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch)
    assert code == 0, err
    results = json.loads((out / f"{STEM}.json").read_text())
    ds = load("file", str(data))
    (system,) = build_systems(["memini-keyword"], cli_options(embedder="hash").context())
    system.ingest(ds.items)
    for k in (1, 3):
        expected: dict[str, int] = {}
        for q in ds.questions:
            hits = system.recall(q.group, q.query, 3)
            given = {i for h in hits[:k] for i in h.ids}
            text = set(words(" ".join(h.content for h in hits[:k])))
            if (not q.id.endswith("_abs")) and set(words(q.answer)) <= text:
                continue  # answered right
            if not q.gold:
                b = "no gold ids"
            elif set(q.gold) & given:
                b = "gold given, answer wrong"
            elif set(q.gold) & {i for h in hits for i in h.ids}:
                b = "gold below the reader's cut"
            else:
                b = "gold not retrieved"
            expected[b] = expected.get(b, 0) + 1
        block = results["losses"][f"memini-keyword@k{k}"]
        assert block["buckets"] == {b: expected[b] for b in BUCKETS if b in expected}
        assert block["wrong"] == sum(expected.values()) == next(
            8 - r["correct"] for r in results["results"] if r["k"] == k)
    assert "### Where the wrong answers were lost (first pass)" in stdout
    assert len({b for a in results["losses"].values() for b in a["buckets"]}) >= 2


def test_loss_buckets_take_the_first_rule_that_holds():
    from memini_bench.qa.engine import Call, Graded, Verdict
    from memini_bench.qa.losses import bucket

    call = Call("judge", "", "INCORRECT", 0, 0, True, 1)

    def graded(recalled=(), extra=()):
        return Graded("a", "q", 0, "c", "ref", recalled, "ans", False, call, call, 1, extra)

    yes = (Verdict("other", call, True),)
    assert bucket(graded(extra=yes), ["g"], [], known_bad=True) == "known-bad gold"
    assert bucket(graded(extra=yes), ["g"], [], known_bad=False) == "judge disagreement"
    assert bucket(graded(), [], ["g"], known_bad=False) == "no gold ids"
    assert bucket(graded(), ["g"], None, known_bad=False) == "not attributed (external)"
    assert bucket(graded((("x",),)), ["g"], ["x"], known_bad=False) == "gold not retrieved"
    assert bucket(graded((("x",),)), ["g"], ["x", "g"], known_bad=False) == "gold below the reader's cut"
    assert bucket(graded((("x", "g"),)), ["g"], ["x", "g"], known_bad=False) == "gold given, answer wrong"


def test_answers_made_elsewhere_are_graded_with_the_runs_judge(data, tmp_path, capsys, monkeypatch):
    """-qa-hypotheses alone: no recall and no reader call; each answer graded by the judge, verdicts as the scripted
    judge's rule gives them (every word of the reference in the answer)."""
    answers = {"q1": "She lives in Porto now", "q2": "Rust", "q4": "at 10am", "q8_abs": "I don't know"}
    hyp = tmp_path / "theirs.jsonl"
    hyp.write_text("".join(json.dumps({"question_id": q, "hypothesis": a}) + "\n" for q, a in answers.items()))
    out = tmp_path / "out"
    monkeypatch.setenv("MEMINI_LLM_BASE_URL", "unused")
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _run(["-suite", "file", "-data", str(data), "-qa", "-qa-hypotheses", str(hyp), "-out",
                                  str(out)], srv.url + "/v1", capsys, monkeypatch)
        calls = len(srv.requests)
    assert code == 0, err
    assert calls == len(answers)  # the judge only
    (path,) = out.glob("*.json")
    assert path.name == "tiny-qa-m-scripted-hyp-theirs.json"
    doc = json.loads(path.read_text())
    (arm,) = doc["results"]
    assert arm["arm"] == "answers:theirs" and arm["questions"] == 4 and arm["correct"] == 3  # q2 is wrong
    assert doc["losses"]["answers:theirs"]["buckets"] == {"no gold ids": 1}
    assert "theirs.jsonl answers 4 of the 8 questions" in err


def test_estimate_prices_an_answers_file_as_judge_calls_only(data, tmp_path, capsys, monkeypatch):
    """-estimate with -qa-hypotheses: no reader call is counted; each answer costs one call per judge, whose input is
    the judge's prompt with that answer in it, counted by hand here as (UTF-8 bytes + 3) // 4."""
    answers = {"q1": "She lives in Porto now", "q2": "Rust"}
    hyp = tmp_path / "theirs.jsonl"
    hyp.write_text("".join(json.dumps({"question_id": q, "hypothesis": a}) + "\n" for q, a in answers.items()))
    prices = tmp_path / "prices.toml"
    prices.write_text("".join(f'[models."{m}"]\ninput_per_million = 0.5\noutput_per_million = 1.5\nsource = "t"\n'
                              for m in ("scripted", "contrary")))
    out = tmp_path / "out"
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _run(["-suite", "file", "-data", str(data), "-qa", "-qa-hypotheses", str(hyp), "-out",
                                  str(out), "-qa-judges", "scripted,contrary", "-estimate", "-prices", str(prices)],
                                 srv.url + "/v1", capsys, monkeypatch)
        assert srv.requests == []
    assert code == 0, err
    assert not out.exists()

    def tokens(text):
        return (len(text.encode()) + 3) // 4

    # q1 is knowledge-update (its rubric), q2 single-session-user (the base rubric)
    per_judge = (tokens(prompts.RUBRICS["knowledge-update"])
                 + tokens(prompts.judge_message("Where did Alice move to?", "Porto", "She lives in Porto now"))
                 + tokens(prompts.RUBRICS["base"])
                 + tokens(prompts.judge_message("Which language is the payments service written in?", "Go", "Rust")))
    assert "2 answers still to grade (1 arms, 1 runs)" in stdout
    assert "calls: 0 reader + 4 judge + 0 relevance = 4 (2 answers from -qa-hypotheses: judge calls only)" in stdout
    assert "reader input tokens (prompt + retrieved contexts): 0 " in stdout
    assert f"judge input tokens: {2 * per_judge:,};" in stdout
    dollars = 2 * (per_judge * 0.5 / 1e6 + 2 * 8 * 1.5 / 1e6)  # each judge: its input, 8 assumed output per call
    assert f"answers:theirs ${dollars:.4f}" in stdout and f"total ${dollars:.4f}" in stdout


@pytest.mark.parametrize("text, fragment", [
    ('{"question_id": "q1"}\n', "needs string fields question_id and hypothesis"),
    ('{"question_id": "q1", "hypothesis": "a"}\n{"question_id": "q1", "hypothesis": "b"}\n', "answered twice"),
    ('{"question_id": "nope", "hypothesis": "a"}\n', "is not among the 8 questions"),
    ("not json\n", "not a JSON line"),
])
def test_a_bad_answers_file_is_one_line(data, tmp_path, capsys, monkeypatch, text, fragment):
    hyp = tmp_path / "bad.jsonl"
    hyp.write_text(text)
    out = tmp_path / "out"
    code, stdout, err = _run(["-suite", "file", "-data", str(data), "-qa", "-qa-hypotheses", str(hyp), "-out",
                              str(out)], "http://127.0.0.1:9/v1", capsys, monkeypatch)
    assert code == 2 and stdout == "" and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("memini-bench: error: -qa-hypotheses") and fragment in err
    assert not out.exists() or not list(out.iterdir())
