"""Loaders: counts, contents and gold exactly as memini's (behaviour doc section 1), and clear errors."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from memini_bench.errors import BenchError
from memini_bench.loaders import LoadOptions, load


def test_locomo_turn_level(locomo):
    assert len(locomo.items) == 5882
    assert len(locomo.questions) == 1982
    assert Counter(q.category for q in locomo.questions) == {"1": 282, "2": 321, "3": 92, "4": 841, "5": 446}
    by_id = {item.id: item for item in locomo.items}
    assert by_id["conv-26/D1:3"].content == (
        "[1:56 pm on 8 May, 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.")
    first = locomo.questions[0]
    assert (first.query, first.gold, first.answer, first.group) == (
        "When did Caroline go to the LGBTQ support group?", ("conv-26/D1:3",), "7 May 2023", "conv-26")
    assert first.now.isoformat() == max(i.time for i in locomo.items if i.group == "conv-26").isoformat()
    assert [sum(1 for i in locomo.items if i.group == g) for g in locomo.groups] == \
        [419, 369, 663, 629, 680, 675, 689, 681, 509, 568]
    assert any("skipped 4 questions" in n for n in locomo.notes)
    assert any("conv-50/D30:05" in n for n in locomo.notes)


def test_locomo_gold_regex_reads_combined_evidence(locomo):
    # Evidence such as ["D8:6; D9:17"] yields both ids; adversarial (5) questions keep their evidence.
    multi = [q for q in locomo.questions if len(q.gold) >= 2]
    assert multi and all(all(g.startswith(q.group + "/D") for g in q.gold) for q in multi)
    adversarial = [q for q in locomo.questions if q.category == "5"]
    assert len(adversarial) == 446 and sum(q.answer == "" for q in adversarial) == 444  # 2 carry an "answer"


def test_locomo_session_level(locomo_sessions):
    ds = locomo_sessions
    assert (len(ds.items), len(ds.questions)) == (272, 1981)
    item = next(i for i in ds.items if i.id == "conv-26/session_1")
    lines = item.content.split("\n")
    assert lines[0] == "[1:56 pm on 8 May, 2023]" and lines[1].startswith("Caroline: ")
    assert not item.content.endswith("\n")
    assert all(len(set(q.gold)) == len(q.gold) for q in ds.questions)
    assert not any(q.query == "When did Dave buy a vintage camera?" for q in ds.questions)


def test_longmemeval_files(lme_dir):
    s = load("longmemeval", str(lme_dir / "longmemeval_s_single.json"))
    assert (len(s.items), len(s.questions)) == (53, 1)
    q = s.questions[0]
    assert q.group == "e47becba" and q.category == "single-session-user"
    assert all(g.startswith("e47becba/") for g in q.gold)
    assert s.items[0].content.startswith(("user: ", "assistant: ")) and s.items[0].content.endswith("\n")
    oracle = load("longmemeval", str(lme_dir / "longmemeval_oracle_sample97.json"))
    assert len(oracle.questions) + sum(1 for n in oracle.notes if "abstention" in n) >= 95
    examples = load("longmemeval", str(lme_dir / "longmemeval_oracle_examples.json"), LoadOptions(abstention="include"))
    assert [q.id for q in examples.questions] == ["gpt4_2655b836", "09ba9854_abs"]
    excluded = load("longmemeval", str(lme_dir / "longmemeval_oracle_examples.json"))
    assert [q.id for q in excluded.questions] == ["gpt4_2655b836"]
    assert len(excluded.items) == len(examples.items)  # abstention sessions stay in the corpus
    assert any("excluded 1 abstention" in n for n in excluded.notes)


def test_longmemeval_session_docs(lme_dir):
    path = str(lme_dir / "longmemeval_s_single.json")
    full = load("longmemeval", path)
    user = load("longmemeval", path, LoadOptions(session_doc="user-only"))
    dated = load("longmemeval", path, LoadOptions(session_doc="dated"))
    assert user.name == "longmemeval-user-only" and dated.name == "longmemeval-dated"
    row = json.loads((lme_dir / "longmemeval_s_single.json").read_text())[0]
    turns = row["haystack_sessions"][0]
    assert full.items[0].content == "".join(f"{t['role']}: {t['content']}\n" for t in turns)
    users = "".join(f"{t['content']}\n" for t in turns if t["role"] == "user")
    assert user.items[0].content == (users or full.items[0].content)
    assert dated.items[0].content == f"[{row['haystack_dates'][0]}]\n" + full.items[0].content
    assert full.items[0].time.strftime("%Y/%m/%d") == row["haystack_dates"][0][:10]


def test_longmemeval_shared_haystack(lme_dir):
    ds = load("longmemeval", str(lme_dir / "longmemeval_oracle_sample97.json"), LoadOptions(shared_haystack=True))
    assert ds.name == "longmemeval-shared" and ds.groups == ["longmemeval"]
    ids = [i.id for i in ds.items]
    assert len(ids) == len(set(ids))
    known = set(ids)
    assert all(set(q.gold) <= known for q in ds.questions)


def test_sample_loads():
    ds = load("sample")
    assert ds.name == "memini-sample" and len(ds.items) == 10 and len(ds.questions) == 8
    assert [q.gold for q in ds.questions] == [(f"k{i}",) for i in range(1, 9)]


@pytest.mark.parametrize("doc, message", [
    ({"items": [], "questions": [{"query": "q", "gold": ["a"]}]}, "no items"),
    ({"items": [{"id": "a", "content": "x"}], "questions": []}, "no questions"),
    ({"items": [{"id": "a"}], "questions": [{"query": "q", "gold": ["a"]}]},
     "bad.json: items[0].content: missing (expected a string)"),
    ({"items": [{"id": "a", "content": 3}], "questions": [{"query": "q", "gold": ["a"]}]},
     "items[0].content: expected a string, got a number"),
    ({"items": [{"id": "a", "content": "x"}, {"id": "a", "content": "y"}], "questions": [{"query": "q", "gold": []}]},
     "items[1].id: duplicate item id 'a' (also items[0])"),
    ({"items": [{"id": "a", "content": "x"}], "questions": [{"query": "q", "gold": "a"}]},
     "questions[0].gold: expected an array, got a string"),
    ([1, 2], "expected a JSON object with name, items and questions, got an array"),
])
def test_file_schema_errors(tmp_path, doc, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(BenchError) as exc:
        load("file", str(path))
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_file_errors_name_the_input(tmp_path):
    with pytest.raises(BenchError, match="no such file"):
        load("file", str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BenchError, match="not valid JSON"):
        load("file", str(bad))
    with pytest.raises(BenchError, match="unknown suite"):
        load("nope", "x")
    with pytest.raises(BenchError, match="needs -data"):
        load("locomo", "")
