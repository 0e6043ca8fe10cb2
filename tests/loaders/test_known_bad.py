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
            assert set(e.suites) <= set(kb.suites)
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
    # each audited entry names the question whose evidence it quotes
    evidence = {f"{conv['sample_id']}/qa{j}": qa.get("evidence") for conv in raw for j, qa in enumerate(conv["qa"])}
    audited = [e for e in kb.entries if e.problem == "wrong-gold"]
    assert len(audited) == 93
    for e in audited:
        cited = re.search(r"the evidence cites (.*); the audit's evidence is", e.what).group(1)
        assert cited == ", ".join(evidence[e.question_id]), e.question_id
    # a wrong citation within the right sessions is wrong gold at turn level only
    sessions = for_suite("locomo-sessions")
    assert sessions.ids < kb.ids and all(not e.suites for e in sessions.entries)


def test_never_silently_applied(locomo):
    held = for_suite("locomo").ids & {q.id for q in locomo.questions}
    n, kept = len(locomo.questions), len(locomo.questions) - len(held)
    assert any(n_.startswith(f"locomo known-bad list v1: {len(held)} of the {n} questions are listed") and "scored"
               in n_ for n_ in locomo.notes)
    cut = annotate(locomo.with_(notes=()), "locomo", "known-bad")
    assert len(cut.questions) == kept and {q.id for q in cut.excluded} == held
    assert cut.notes == (f"locomo known-bad list v1: {len(held)} of the {n} questions are listed (4 more listed ones "
                         f"are not loaded); excluded by -exclude known-bad: {n} -> {kept} questions",)
    # every kept question keeps its place in the holdout split
    index = {q.id: i for i, q in enumerate(locomo.questions)}
    assert all(q.position == index[q.id] for q in cut.questions + cut.excluded)
    assert annotate(locomo, "sample", "known-bad") is locomo  # no list: untouched


def test_the_default_adds_nothing_to_a_committed_identity():
    committed = json.loads((ROOT / "results" / "locomo.json").read_text())["config"]["identity"]["load"]
    assert identity_of(LoadOptions()) == committed
    assert identity_of(LoadOptions(exclude="known-bad"))["exclude"] == "known-bad"


def test_exclude_is_refused_where_no_list_applies(capsys):
    code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-exclude", "known-bad", "-no-write"], capsys)
    assert code == 2 and err.strip() == "memini-bench: error: -exclude: not used by -suite sample; drop it"


def test_run_table_states_n_protocol_and_the_exclusion(locomo, locomo_path, tmp_path, capsys):
    held = len(for_suite("locomo").ids & {q.id for q in locomo.questions})
    kept = len(locomo.questions) - held
    code, out, err = run_cli(["-suite", "locomo", "-data", str(locomo_path), "-systems", "keyword", "-k", "5",
                              "-exclude", "known-bad", "-out", str(tmp_path)], capsys)
    assert code == 0, err
    assert (f"## locomo — {kept} questions, recall_any@5\n\n{kept} questions; protocol turn; locomo known-bad list "
            f"v1: {held} listed questions excluded (-exclude known-bad).") in out
    (path,) = tmp_path.glob("*.json")
    assert path.name == "locomo-no-known-bad-sys-keyword.json"
    config = json.loads(path.read_text())["config"]
    assert config["protocol"] == "turn" and config["questions"] == kept
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
