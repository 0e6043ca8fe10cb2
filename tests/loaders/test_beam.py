"""-suite beam on a small fixture in BEAM's upstream format (written here: BEAM's data is not committed)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memini_bench.errors import BenchError
from memini_bench.loaders import load


def _msg(mid, role, content, **extra):
    return {"role": role, "id": mid, "content": content, **extra}


def _chat(n_pairs: int, offset: int = 0) -> list:
    """BEAM's chat.json: batches of turns, each turn a list of messages; user messages carry time anchors."""
    batches = []
    mid = offset
    for b in range(2):
        turns = []
        for t in range(n_pairs):
            user = _msg(mid, "user", f"user says {b}.{t} ->-> {b + 1},{t + 1}", index=f"{b + 1},{t + 1}",
                        question_type="main_question", **({"time_anchor": f"March-{15 + b}-2024"} if t == 0 else {}))
            turns.append([user, _msg(mid + 1, "assistant", f"assistant answers {b}.{t}")])
            mid += 2
        batches.append({"batch_number": b + 1, "time_anchor": f"March-{15 + b}-2024", "turns": turns})
    return batches


PROBING = {
    "abstention": [{"question": "What is my dog's name?", "ideal_response": "Not in the chat.",
                    "source_chat_ids": None}],
    "information_extraction": [{"question": "What did the user say first?", "answer": "0.0",
                                "source_chat_ids": [0]},
                               {"question": "Which message does not exist?", "answer": "-", "source_chat_ids": [999]}],
    "contradiction_resolution": [{"question": "Did I contradict myself?", "ideal_answer": "yes",
                                  "source_chat_ids": {"first_statement": [2], "second_statement": [4, [6]]}}],
    "summarization": [{"question": "Summarize.", "ideal_summary": "...", "source_chat_ids": [1, 3, 999]},
                      {"question": "Summarize nothing.", "ideal_summary": "...", "source_chat_ids": []}],
}


def write_chat(folder: Path, chat: object, probing: dict = PROBING, name: str = "chat.json") -> Path:
    (folder / "probing_questions").mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(chat))
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(probing))
    return folder


@pytest.fixture
def tier(tmp_path) -> Path:
    root = tmp_path / "100K"
    write_chat(root / "1", _chat(2))
    write_chat(root / "2", _chat(2))
    (root / "2" / "chat_trunecated.json").write_text(json.dumps(_chat(1)))  # BEAM reads this one when present
    write_chat(root / "10", _chat(3))
    (root / "notes").mkdir()  # a non-numbered folder is not a chat
    return root


def test_tier_folder(tier):
    ds = load("beam", str(tier))
    assert ds.name == "beam-100k"
    assert ds.groups == ["1", "2", "10"]  # numeric order
    per_group = {g: sum(1 for i in ds.items if i.group == g) for g in ds.groups}
    assert per_group == {"1": 8, "2": 4, "10": 12}  # chat 2 from chat_trunecated.json: 2 batches x 1 pair
    first = ds.items[0]
    assert (first.id, first.content) == ("1/0", "user: user says 0.0 ->-> 1,1")
    assert first.time == datetime(2024, 3, 15, tzinfo=UTC)
    assert ds.items[5].time == datetime(2024, 3, 16, tzinfo=UTC)  # the anchor of batch 2 carries forward
    q = {x.id: x for x in ds.questions}
    assert q["1/information_extraction/0"].gold == ("1/0",)
    assert q["1/contradiction_resolution/0"].gold == ("1/2", "1/4", "1/6")  # dict of (nested) lists, flattened
    assert q["1/summarization/0"].gold == ("1/1", "1/3")
    assert q["1/summarization/0"].answer == "..." and q["1/contradiction_resolution/0"].category == \
        "contradiction_resolution"
    assert ds.category_labels["contradiction_resolution"] == "Contradiction Resolution"
    # chat 2 is truncated to ids 0..3: its contradiction question keeps id 2 only
    assert q["2/contradiction_resolution/0"].gold == ("2/2",)
    assert len(ds.questions) == 3 * 3
    notes = " | ".join(ds.notes)
    assert "3 chats, 24 messages, 9 scored questions" in notes
    assert "skipped 6 questions with no source_chat_ids (not scored) (abstention: 3, summarization: 3)" in notes
    assert "skipped 3 questions whose source_chat_ids name no message of their chat" in notes
    assert "source_chat_ids name no message of their chat and were dropped" in notes
    assert len(ds.sources) == 6


def test_one_chat_folder_and_the_10m_shape(tmp_path):
    plans = [{"plan-1": _chat(1)}, {"plan-2": _chat(1, offset=4)}]  # download_dataset.py's combine_10m_chats shape
    folder = write_chat(tmp_path / "7", plans)
    ds = load("beam", str(folder))
    assert ds.name == "beam-chat-7"
    assert [i.id for i in ds.items] == [f"7/{n}" for n in range(8)]


def test_repeated_message_ids_keep_the_first(tmp_path):
    chat = _chat(1)
    chat[1]["turns"][0][0]["id"] = 0
    ds = load("beam", str(write_chat(tmp_path / "1", chat)))
    assert sum(i.id == "1/0" for i in ds.items) == 1
    assert any("repeat an earlier id" in n for n in ds.notes)


@pytest.mark.parametrize("breakage, message", [
    (lambda f: (f / "probing_questions" / "probing_questions.json").unlink(), "no such file"),
    (lambda f: (f / "chat.json").write_text('[{"turns": [[{"role": "user", "id": "x", "content": "c"}]]}]'),
     "chat.json: [0].turns[0][0].id: expected a number, got a string"),
    (lambda f: (f / "probing_questions" / "probing_questions.json").write_text(
        '{"summarization": [{"question": "q", "source_chat_ids": ["a"]}]}'), "source_chat_ids[0]: expected a number"),
])
def test_bad_input_is_one_line(tmp_path, breakage, message):
    folder = write_chat(tmp_path / "1", _chat(1))
    breakage(folder)
    with pytest.raises(BenchError, match=None) as err:
        load("beam", str(folder))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_not_a_beam_folder(tmp_path):
    with pytest.raises(BenchError, match="holds neither chat.json nor numbered chat folders"):
        load("beam", str(tmp_path))
    with pytest.raises(BenchError, match="not a folder"):
        load("beam", str(tmp_path / "nope"))


def test_cli_run_writes_results_with_counts_in_notes(tier, tmp_path, capsys):
    from memini_bench.cli import main

    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["-suite", "beam", "-data", str(tier), "-embedder", "hash", "-k", "1,5", "-out", str(out)])
    assert done.value.code == 0
    doc = json.loads((out / "beam-100k-emb-hash.json").read_text())
    assert doc["config"]["items"] == 24 and doc["config"]["questions"] == 9
    assert any("skipped 6 questions with no source_chat_ids" in n for n in doc["config"]["notes"])
    assert {r["system"] for r in doc["results"]} == {"memini-hybrid", "memini-vector", "memini-keyword"}
    with pytest.raises(SystemExit) as done:
        main(["-suite", "beam", "-data", str(tier), "-unit", "summary", "-no-write"])
    assert done.value.code == 2
    assert "-unit: not used by -suite beam" in capsys.readouterr().err


def test_a_fetched_set_folder_keeps_its_name(tier):
    fetched = tier.rename(tier.parent / "beam-100k")  # data fetch places the tier in <data>/beam-100k
    assert load("beam", str(fetched)).name == "beam-100k"
