"""The known-bad gold lists: well formed, the LoCoMo list equal to what the raw file says (an oracle apart from the
loader), applied only by -exclude known-bad and noted either way; the default adds nothing to a results identity;
the suites' protocols."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_run import run_cli

from memini_bench.loaders import LoadOptions, identity_of, load
from memini_bench.loaders.known_bad import PROBLEMS, annotate, for_suite, lists
from memini_bench.loaders.protocols import PROTOCOLS, depth_notes, protocol_of

ROOT = Path(__file__).resolve().parents[2]


def test_lists_are_well_formed():
    assert {kb.dataset for kb in lists()} == {"locomo", "longmemeval"}
    for kb in lists():
        ids = [e.question_id for e in kb.entries]
        assert len(ids) == len(set(ids)) and kb.version >= 1
        for e in kb.entries:
            assert e.problem in PROBLEMS and e.what and e.source.startswith("https://")
    (lme,) = for_suite("longmemeval").entries
    assert lme.question_id == "eac54add" and lme.source == "https://github.com/xiaowu0162/LongMemEval/issues/37"


def test_locomo_list_is_what_the_raw_file_says(locomo_path):
    """Read locomo10.json without the loader: questions whose evidence names no D<n>:<m> id, and those naming an id
    that is no dialogue turn of their conversation."""
    raw = json.loads(locomo_path.read_text())
    no_evidence, dangling = set(), set()
    for conv in raw:
        turns = {t["dia_id"] for key, session in conv["conversation"].items()
                 if re.fullmatch(r"session_\d+", key) and isinstance(session, list) for t in session}
        for j, qa in enumerate(conv["qa"]):
            ids = re.findall(r"D\d+:\d+", json.dumps(qa.get("evidence")))
            qid = f"{conv['sample_id']}/qa{j}"
            if not ids:
                no_evidence.add(qid)
            elif any(i not in turns for i in ids):
                dangling.add(qid)
    kb = for_suite("locomo")
    assert {e.question_id for e in kb.entries if e.problem == "no-evidence"} == no_evidence and len(no_evidence) == 4
    assert {e.question_id for e in kb.entries if e.problem == "dangling-gold"} == dangling and len(dangling) == 3


def test_never_silently_applied(locomo):
    assert any(n.startswith("locomo known-bad list v1: 3 of the 1982 questions are listed") and "scored" in n
               for n in locomo.notes)
    cut = annotate(locomo.with_(notes=()), "locomo", "known-bad")
    assert len(cut.questions) == 1979 and {q.id for q in cut.excluded} == {"conv-42/qa58", "conv-47/qa38",
                                                                           "conv-50/qa69"}
    assert cut.notes == ("locomo known-bad list v1: 3 of the 1982 questions are listed (4 more listed ones are not "
                         "loaded); excluded by -exclude known-bad: 1982 -> 1979 questions",)
    # every kept question keeps its place in the holdout split
    placed = {q.id: q.position for q in cut.questions}
    assert [placed[q.id] for q in cut.questions[:3]] == [i for i, q in enumerate(locomo.questions[:3])]
    assert annotate(locomo, "sample", "known-bad") is locomo  # no list: untouched


def test_the_default_adds_nothing_to_a_committed_identity():
    committed = json.loads((ROOT / "results" / "locomo.json").read_text())["config"]["identity"]["load"]
    assert identity_of(LoadOptions()) == committed
    assert identity_of(LoadOptions(exclude="known-bad"))["exclude"] == "known-bad"


def test_exclude_is_refused_where_no_list_applies(capsys):
    code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-exclude", "known-bad", "-no-write"], capsys)
    assert code == 2 and err.strip() == "memini-bench: error: -exclude: not used by -suite sample; drop it"


def test_run_table_states_n_protocol_and_the_exclusion(locomo_path, tmp_path, capsys):
    code, out, err = run_cli(["-suite", "locomo", "-data", str(locomo_path), "-systems", "keyword", "-k", "5",
                              "-exclude", "known-bad", "-out", str(tmp_path)], capsys)
    assert code == 0, err
    assert ("## locomo — 1979 questions, recall_any@5\n\n1979 questions; protocol turn; locomo known-bad list v1: 3 "
            "listed questions excluded (-exclude known-bad).") in out
    (path,) = tmp_path.glob("*.json")
    assert path.name == "locomo-no-known-bad-sys-keyword.json"
    config = json.loads(path.read_text())["config"]
    assert config["protocol"] == "turn" and config["questions"] == 1979
    assert config["identity"]["load"]["exclude"] == "known-bad"


@pytest.mark.parametrize("suite, options, name", [
    ("longmemeval", LoadOptions(), "answerable-470"),
    ("longmemeval", LoadOptions(abstention="include"), "all-500"),
    ("longmemeval", LoadOptions(granularity="turn"), "official"),
    ("locomo", LoadOptions(), "turn"),
    ("locomo-sessions", LoadOptions(), "session"),
    ("sample", LoadOptions(), ""),
])
def test_protocols_are_declared(suite, options, name):
    assert protocol_of(suite, options) == name
    assert name == "" or name in PROTOCOLS[suite]


def test_a_k_past_the_smallest_group_is_noted(locomo_sessions):
    assert depth_notes(locomo_sessions, (5, 10)) == []
    (note,) = depth_notes(locomo_sessions, (5, 19))
    assert note.startswith("K=19 is at least the 19 items of the smallest group")


def test_exclude_on_a_real_load(locomo_path):
    full = load("locomo", str(locomo_path))
    cut = load("locomo", str(locomo_path), LoadOptions(exclude="known-bad"))
    assert len(full.questions) - len(cut.questions) == len(for_suite("locomo").ids & {q.id for q in full.questions})
