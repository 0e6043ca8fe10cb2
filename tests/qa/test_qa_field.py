# ruff: noqa: F811 (the test functions take the imported fixture `data`)
"""``-qa`` scored the ways the field scores it, end to end against loopback servers: repeated runs (spread, and a
kill mid-run resumed to the same numbers), two judges and human labels (agreement against scikit-learn), money from
a price table, ``-estimate`` without a call, category filters, LongMemEval's prompts from a (fake) checkout, and
judged retrieval for id-less hits."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from loopback import ScriptedServer, closed_port_url
from qa_server import ChatScript, words
from sklearn.metrics import cohen_kappa_score
from test_qa_mode import ARGS, QUESTIONS, ROOT, _llm_env, _qa, _run, data, killed_at  # noqa: F401 (fixtures: the tiny data set)

from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Question
from memini_bench.qa import judged_retrieval, lexical, prompts

STEM = "tiny-qa-sys-keyword-qak1+3-m-scripted"


def _doc(out, stem):
    return json.loads((out / f"{stem}.json").read_text())


def _archive(out, stem):
    return [json.loads(x) for x in (out / f"{stem}.archive.jsonl").read_text().splitlines()]


class NoisyJudge(ChatScript):
    """The scripted server, except that the judge flips a verdict on the n-th sight of a judge message when
    sha256(message, n) says so: independent runs of one question can disagree."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.seen: dict[str, int] = {}

    def __call__(self, path, body):
        status, reply = super().__call__(path, body)
        system = body["messages"][0]["content"]
        if system in prompts.RUBRICS.values():
            user = body["messages"][-1]["content"]
            with self._lock:
                self.seen[user] = n = self.seen.get(user, 0) + 1
            if hashlib.sha256(f"{user}{n}".encode()).digest()[0] % 3 == 0:
                text = reply["choices"][0]["message"]["content"]
                reply["choices"][0]["message"]["content"] = "INCORRECT" if text == "CORRECT" else "CORRECT"
        return status, reply


def test_three_runs_report_mean_std_and_interval(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    with ScriptedServer(NoisyJudge()) as srv:
        code, stdout, err = _qa(data, out, srv.url + "/v1", capsys, monkeypatch, "-qa-runs", "3", "-concurrency", "1")
        assert len(srv.requests) == 3 * 2 * 2 * len(QUESTIONS)
    assert code == 0, err
    stem = STEM + "-runs3"
    doc, rows = _doc(out, stem), _archive(out, stem)
    for arm in ("memini-keyword@k1", "memini-keyword@k3"):
        per_run = [np.mean([r["correct"] for r in rows if r["arm"] == arm and r["run"] == run]) for run in (1, 2, 3)]
        got = doc["runs"][arm]["overall"]["accuracy"]
        assert got["mean"] == pytest.approx(np.mean(per_run)) and got["std"] == pytest.approx(np.std(per_run, ddof=1))
        assert got["low"] <= got["mean"] <= got["high"]
        cat = doc["runs"][arm]["per_category"]["multi-session"]["accuracy"]
        assert cat["runs"] == 3 and len(cat["values"]) == 3
    assert any(doc["runs"][a]["overall"]["accuracy"]["std"] > 0 for a in doc["runs"])
    assert "| accuracy mean | std | 95% interval |" in stdout


def test_three_runs_killed_midway_resume_to_the_same_numbers(data, tmp_path, capsys, monkeypatch):
    args = [*ARGS, "-data", str(data), "-qa-runs", "3"]
    clean = tmp_path / "clean"
    with ScriptedServer(ChatScript()) as srv:
        assert _run([*args, "-out", str(clean)], srv.url + "/v1", capsys, monkeypatch)[0] == 0
    stem = STEM + "-runs3"
    out = tmp_path / "out"
    ckpt = out / f"{stem}.ckpt.jsonl"
    killed_at([*args, "-out", str(out)], ckpt, hold_after=40, lines=20)  # 19 or 20 of 48 graded, 16 a run
    records = [json.loads(x) for x in ckpt.read_text().splitlines()[1:] if x.endswith("}")]
    assert 19 <= len(records) <= 20 and {r["run"] for r in records} == {1, 2}  # killed inside run 2
    with ScriptedServer(ChatScript()) as srv:
        code, _, err = _run([*args, "-out", str(out)], srv.url + "/v1", capsys, monkeypatch)
    assert code == 0, err
    assert "of 48 already graded" in err
    a, b = _doc(out, stem), _doc(clean, stem)
    assert a["results"] == b["results"] and a["runs"] == b["runs"] and a["lexical"] == b["lexical"]
    assert _archive(out, stem) == _archive(clean, stem)


class TwoJudges(ChatScript):
    """Judge model ``contrary`` disagrees with the scripted judge on the questions whose id ends in an odd digit."""

    def __call__(self, path, body):
        status, reply = super().__call__(path, body)
        if body.get("model") == "contrary":
            user = body["messages"][-1]["content"]
            q = next(q for q in QUESTIONS if f"Question: {q[2]}\n" in user)
            if int(q[0][1]) % 2:
                text = reply["choices"][0]["message"]["content"]
                reply["choices"][0]["message"]["content"] = "INCORRECT" if text == "CORRECT" else "CORRECT"
        return status, reply


def test_two_judges_human_labels_and_money(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    labels = tmp_path / "labels.jsonl"
    human = {q[0]: q[0] in ("q1", "q2", "q5") for q in QUESTIONS}
    labels.write_text("".join(json.dumps({"arm": "memini-keyword@k3", "id": i, "correct": c}) + "\n"
                              for i, c in human.items()))
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."scripted"]\ninput_per_million = 2.0\noutput_per_million = 8.0\n'
                      '[models."contrary"]\ninput_per_million = 1.0\noutput_per_million = 4.0\n')
    with ScriptedServer(TwoJudges()) as srv:
        code, stdout, err = _run([*ARGS, "-data", str(data), "-out", str(out), "-qa-judges", "scripted,contrary",
                                  "-qa-labels", str(labels), "-prices", str(prices)], srv.url + "/v1", capsys,
                                 monkeypatch)
    assert code == 0, err
    stem = STEM + "-judges-contrary"
    doc, rows = _doc(out, stem), _archive(out, stem)
    first = [r["correct"] for r in rows]
    second = [r["extra"][0]["correct"] for r in rows]
    (judges, *vs_human) = doc["agreement"]
    assert (judges["grader_a"], judges["grader_b"], judges["n"]) == ("scripted", "contrary", 16)
    assert judges["percent"] == pytest.approx(np.mean(np.equal(first, second)))
    assert judges["kappa"] == pytest.approx(cohen_kappa_score(first, second))
    assert judges["only_a_correct"] == sum(a and not b for a, b in zip(first, second, strict=True))
    k3 = [r for r in rows if r["arm"] == "memini-keyword@k3"]
    for row, key in zip(vs_human, ("correct", None), strict=True):
        verdicts = [r[key] if key else r["extra"][0]["correct"] for r in k3]
        truth = [human[r["id"]] for r in k3]
        assert row["grader_b"] == "human" and row["n"] == 8
        assert row["kappa"] == pytest.approx(cohen_kappa_score(verdicts, truth))
    assert "Cohen's kappa" in stdout
    # money: each call's tokens (the archive) at its model's prices
    for arm in ("memini-keyword@k1", "memini-keyword@k3"):
        mine = [r for r in rows if r["arm"] == arm]
        dollars = sum((r["reader"]["tokens_in"] + r["judge"]["tokens_in"]) * 2.0 / 1e6
                      + (r["reader"]["tokens_out"] + r["judge"]["tokens_out"]) * 8.0 / 1e6
                      + r["extra"][0]["call"]["tokens_in"] * 1.0 / 1e6 + r["extra"][0]["call"]["tokens_out"] * 4.0 / 1e6
                      for r in mine)
        assert doc["cost"]["per_arm"][arm]["dollars"] == pytest.approx(dollars)
        assert doc["cost"]["per_arm"][arm]["per_question"] == pytest.approx(dollars / 8)
    assert doc["cost"]["total"] == pytest.approx(sum(a["dollars"] for a in doc["cost"]["per_arm"].values()))
    # lexical block: the oracle is qa.lexical over the archive (itself checked against nltk)
    lex = doc["lexical"]["memini-keyword@k3"]["overall"]
    scored = [(r["answer"], r["reference"]) for r in k3 if r["reference"]]
    assert lex["scored"] == 7 and lex["skipped"] == 1
    assert lex["f1"] == pytest.approx(np.mean([lexical.token_f1(a, b) for a, b in scored]))
    assert lex["bleu1"] == pytest.approx(np.mean([lexical.bleu1(a, b) for a, b in scored]))


def test_bad_extras_are_one_line_before_any_call(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."other"]\ninput_per_million = 1\noutput_per_million = 1\n')
    url = closed_port_url() + "/v1"
    for extra, why in [(["-prices", str(prices)], 'no [models."scripted"] table'),
                       (["-qa-judges", "one"], "give two or more judge models"),
                       (["-qa-exclude", "nope"], "-qa-exclude nope: no question of tiny has that category"),
                       (["-qa-categories", "multi-session", "-qa-exclude", "knowledge-update"], "give one of them"),
                       (["-qa-prompts", "locomo:/tmp"], "LoCoMo's repository has no judge prompt"),
                       (["-qa-prompts", "longmemeval:" + str(tmp_path)], "no src/evaluation/evaluate_qa.py"),
                       (["-qa-labels", str(tmp_path / "none.jsonl")], "-qa-labels"),
                       (["-qa-judged-k", "5"], "above the recall depth 3")]:
        code, stdout, err = _run([*ARGS, "-data", str(data), "-out", str(out), *extra], url, capsys, monkeypatch)
        lines = err.strip().splitlines()
        assert code == 2 and why in lines[-1] and "Traceback" not in err and not out.exists(), (extra, err)
    prices.write_text("models = 3")
    code, _, err = _run([*ARGS, "-data", str(data), "-out", str(out), "-prices", str(prices)], url, capsys,
                        monkeypatch)
    assert code == 2 and 'no [models."NAME"] table' in err


def test_category_filter_is_stated_and_recorded(data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _run([*ARGS, "-data", str(data), "-out", str(out), "-qa-exclude",
                                  "multi-session,single-session-user_abs"], srv.url + "/v1", capsys, monkeypatch)
        assert len(srv.requests) == 2 * 2 * 5
    assert code == 0, err
    doc = _doc(out, STEM + "-ex-multi-session+single-session-user_abs")
    assert doc["config"]["qa"]["categories"]["excluded"] == ["multi-session", "single-session-user_abs"]
    assert "categories: excluded multi-session, single-session-user_abs" in stdout


def test_locomo_estimate_prints_calls_tokens_and_money_without_a_call(tmp_path, capsys, monkeypatch, locomo_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."scripted"]\ninput_per_million = 0.5\noutput_per_million = 1.5\nsource = "a test"\n')
    out = tmp_path / "out"
    with ScriptedServer(ChatScript()) as srv:
        code, stdout, err = _run(["-suite", "locomo", "-data", str(locomo_path), "-embedder", "hash", "-systems",
                                  "keyword", "-limit", "60", "-qa", "-qa-k", "5", "-qa-exclude", "5", "-out", str(out),
                                  "-estimate", "-prices", str(prices)], srv.url + "/v1", capsys, monkeypatch)
        assert srv.requests == []
    assert code == 0, err
    assert not out.exists()
    first = stdout.splitlines()[0]
    n = int(first.split("): ")[1].split()[0])
    assert 0 < n < 60  # category 5 left out of the first 60
    assert f"calls: {n} reader + {n} judge + 0 relevance = {2 * n}" in stdout
    reader_in = int(stdout.split("reader input tokens (prompt + retrieved contexts): ")[1].split()[0].replace(",", ""))
    judge_in = int(stdout.split("judge input tokens: ")[1].split(";")[0].replace(",", ""))
    assert "estimated as (UTF-8 bytes + 3) // 4" in stdout and "assumed (nothing graded yet)" in stdout
    total = (reader_in + judge_in) * 0.5 / 1e6 + n * (256 + 8) * 1.5 / 1e6
    assert f"total ${total:.4f}" in stdout
    assert "time: not estimated" in stdout


FAKE_LME = '''import json


def get_anscheck_prompt(task, question, answer, response, abstention=False):
    if not abstention:
        if task in ['single-session-user', 'single-session-assistant', 'multi-session']:
            template = "PLACEHOLDER-A Q={} R={} M={} yes/no"
            prompt = template.format(question, answer, response)
        elif task == 'temporal-reasoning':
            template = "PLACEHOLDER-T Q={} R={} M={} yes/no"
            prompt = template.format(question, answer, response)
        elif task == 'knowledge-update':
            template = "PLACEHOLDER-K Q={} R={} M={} yes/no"
            prompt = template.format(question, answer, response)
        elif task == 'single-session-preference':
            template = "PLACEHOLDER-P Q={} R={} M={} yes/no"
            prompt = template.format(question, answer, response)
        else:
            raise NotImplementedError
    else:
        template = "PLACEHOLDER-ABS Q={} R={} M={} yes/no"
        prompt = template.format(question, answer, response)
    return prompt
'''


class PlaceholderJudge(ChatScript):
    """Answers the placeholder templates yes / no by the scripted judge's own rule."""

    def __call__(self, path, body):
        user = body["messages"][-1]["content"]
        if not user.startswith("PLACEHOLDER"):
            return super().__call__(path, body)
        assert len(body["messages"]) == 1  # LongMemEval sends the prompt as the only (user) message
        head, rest = user.split(" Q=", 1)
        reference, candidate = rest.split(" R=", 1)[1].split(" M=", 1)
        candidate = candidate.removesuffix(" yes/no")
        ok = ("know" in candidate.lower()) if head.endswith("ABS") else set(words(reference)) <= set(words(candidate))
        return 200, {"choices": [{"message": {"content": "Yes." if ok else "No."}}]}


def test_longmemeval_prompts_from_a_checkout(data, tmp_path, capsys, monkeypatch):
    checkout = tmp_path / "LongMemEval"
    (checkout / "src" / "evaluation").mkdir(parents=True)
    (checkout / "src" / "evaluation" / "evaluate_qa.py").write_text(FAKE_LME)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    with ScriptedServer(PlaceholderJudge()) as srv:
        assert _run([*ARGS, "-data", str(data), "-out", str(ours)], srv.url + "/v1", capsys, monkeypatch)[0] == 0
        code, _, err = _run([*ARGS, "-data", str(data), "-out", str(theirs), "-qa-prompts",
                             f"longmemeval:{checkout}"], srv.url + "/v1", capsys, monkeypatch)
    assert code == 0, err
    doc = _doc(theirs, STEM + "-p-longmemeval")
    record = doc["config"]["qa"]["prompt_set"]
    assert record["name"] == "longmemeval" and record["file_sha256"] == hashlib.sha256(FAKE_LME.encode()).hexdigest()
    assert doc["config"]["identity"]["mode_settings"]["prompt_set"]["sha256"] == record["sha256"]
    rows = {r["id"]: r for r in _archive(theirs, STEM + "-p-longmemeval") if r["arm"].endswith("@k3")}
    assert rows["q4"]["judge"]["user"].startswith("PLACEHOLDER-T Q=When does the team standup start now? R=10am M=")
    assert rows["q8_abs"]["judge"]["system"] == "abstention" and rows["q8_abs"]["judge"]["user"].startswith(
        "PLACEHOLDER-ABS")
    assert rows["q1"]["judge"]["system"] == "knowledge-update"
    # the same verdict rule behind both prompt sets: the same accuracies
    assert [r["correct"] for r in doc["results"]] == [r["correct"] for r in _doc(ours, STEM)["results"]]
    (checkout / "src" / "evaluation" / "evaluate_qa.py").write_text("def get_anscheck_prompt(task):\n    return 1\n")
    code, _, err = _run([*ARGS, "-data", str(data), "-out", str(tmp_path / "x"), "-qa-prompts",
                         f"longmemeval:{checkout}"], closed_port_url(), capsys, monkeypatch)
    assert code == 2 and "of the shape this reader knows" in err


def test_judged_retrieval_for_id_less_hits():
    questions = [Question(id="q1", query="Where does Alice live?", gold=("a", "b"), answer="Porto"),
                 Question(id="q2", query="Cat name?", gold=("c",), answer="Miso")]
    hits = [[Hit((), 1.0, "Alice lives in Porto"), Hit((), 0.5, "Bob likes Go"), Hit((), 0.2, "Porto is sunny")],
            [Hit((), 1.0, "The offsite is in May")]]
    assert judged_retrieval.id_less(hits) and not judged_retrieval.id_less([[Hit(("a",), 1.0, "x")]])

    def handler(path, body):
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        assert system == judged_retrieval.RELEVANCE_SYSTEM
        fields = dict(line.split(": ", 1) for line in user.split("\n") if ": " in line)
        ok = set(words(fields["Reference answer"])) <= set(words(fields["Memory"]))
        return 200, {"choices": [{"message": {"content": "RELEVANT" if ok else "IRRELEVANT"}}]}

    from memini_bench.clients.llm import ChatClient

    kept = {}
    with ScriptedServer(handler) as srv:
        judged_retrieval.judge_all("mem0-infer", questions, hits, 3, ChatClient(srv.url, retries=0).chat, {},
                                   lambda r: kept.__setitem__(r.key, r), concurrency=2, retries=0, backoff=0)
        assert len(srv.requests) == 4
        # a resumed pass asks only what is missing
        del kept[("mem0-infer", "q2", 1)]
        judged_retrieval.judge_all("mem0-infer", questions, hits, 3, ChatClient(srv.url, retries=0).chat, kept,
                                   lambda r: kept.__setitem__(r.key, r), concurrency=1, retries=0, backoff=0)
        assert len(srv.requests) == 5
    m = judged_retrieval.metrics("mem0-infer", questions, kept, 3)
    # q1: hits 1 and 3 relevant: precision 2/3, hit 1, recall min(1, 2/2) = 1; q2: none relevant: 0, 0, 0
    assert m["judged"] is True and "recall@3" not in m
    assert m["judged_precision@3"] == pytest.approx((2 / 3 + 0) / 2)
    assert (m["judged_hit@3"], m["judged_recall@3"]) == (pytest.approx(0.5), pytest.approx(0.5))
