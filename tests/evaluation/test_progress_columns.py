"""Visible progress and honest columns (issue 21, items 7 and 8): progress lines with an ETA outside a terminal,
silenced by -quiet; the ingest time split into model load, embedding and the store's own share; -reference for
-significance and -categories for the per-category tables."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest
from cli_run import run_cli

from memini_bench import progress
from memini_bench.core.contract import Hit
from memini_bench.core.dataset import Item, Question
from memini_bench.embed.encoder import TextEncoder
from memini_bench.evaluation.runner import run_system
from memini_bench.loaders import load

run = run_cli


def test_a_progress_line_states_done_total_elapsed_and_the_eta():
    # 1 of 4 in 30 s: the mean pace says 3 more take 90 s
    assert progress.line("embedding", 1, 4, "chunks", 30.0) == \
        "embedding: 1/4 chunks (25%), 0:30 elapsed, ETA 1:30"
    assert progress.line("x", 4, 4, "q", 3725.0) == "x: 4/4 q (100%), 1:02:05 elapsed"


def test_lines_every_interval_outside_a_terminal_and_none_when_quiet(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)  # a line at every tick
    for _ in progress.progress(range(3), 3, "work", "items"):
        pass
    err = capsys.readouterr().err.splitlines()
    assert any(re.fullmatch(r"progress: work: 1/3 items \(33%\), 0:00 elapsed, ETA 0:00, [\d.]+ items/s", e)
               for e in err), err
    assert err[-1].startswith("progress: work: 3/3 items (100%)") and err[-1].endswith(", done")
    progress.set_quiet(True)
    try:
        for _ in progress.progress(range(3), 3, "work"):
            time.sleep(0.03)
        with progress.stage("slow"):
            time.sleep(0.05)
    finally:
        progress.set_quiet(False)
    assert capsys.readouterr().err == ""


def test_a_stage_without_a_count_says_how_long_it_has_taken(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.02)
    with progress.stage("store ingest") as task:
        limit = time.monotonic() + 600  # a hang guard: the board prints once it runs, however busy the machine
        while not task.printed and time.monotonic() < limit:
            time.sleep(0.01)
    err = capsys.readouterr().err
    assert "progress: store ingest: 0:00 elapsed" in err


def test_the_cli_prints_progress_unless_quiet(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    code, _, err = run(["-systems", "keyword", "-no-write"], capsys)
    assert code == 0 and "progress: memini-keyword recall: 1/8 questions" in err
    code, _, err = run(["-systems", "keyword", "-no-write", "-quiet"], capsys)
    assert code == 0 and "progress:" not in err


class SlowEmbedder:
    """An embedder whose model takes ``LOAD`` s to load (on its first encode) and ``PER_CALL`` s per call."""

    LOAD, PER_CALL = 0.15, 0.05
    identity = "slow-test"
    dims = 4
    max_chars = None

    def __init__(self) -> None:
        self.load_ms = 0.0

    def encode(self, texts):
        if not self.load_ms:
            time.sleep(self.LOAD)
            self.load_ms = self.LOAD * 1e3
        time.sleep(self.PER_CALL)
        return np.ones((len(texts), self.dims), dtype=np.float32)


class EmbedsThenStores:
    """Embeds its items through the run's encoder, then spends ``STORE`` s storing them."""

    STORE = 1.0  # far above the embedding's time, so the split shows on a busy machine too
    name = "embeds-then-stores"

    def __init__(self, encoder: TextEncoder) -> None:
        self.encoder = encoder

    def ingest(self, items):
        self.items = list(items)
        self.encoder.documents([it.content for it in self.items])
        time.sleep(self.STORE)

    def recall(self, group, query, k, *, now=None, context=None):
        return [Hit((it.id,), 1.0, it.content) for it in self.items if it.group == group][:k]


def test_the_ingest_time_is_split_into_load_embedding_and_the_store():
    encoder = TextEncoder(SlowEmbedder())
    ds = load("sample")
    result = run_system(EmbedsThenStores(encoder), ds, 5, clock=encoder.clock)
    assert result.model_load_ms == pytest.approx(SlowEmbedder.LOAD * 1e3)
    # lower bounds only: a busy machine makes every part longer, never shorter; the embedding's time holds its
    # call and the store's holds its sleep, so neither was counted as the other (the three add up to the ingest)
    assert SlowEmbedder.PER_CALL * 1e3 <= result.embed_ms
    assert EmbedsThenStores.STORE * 1e3 <= result.store_ingest_ms
    assert result.ingest_ms == pytest.approx(result.model_load_ms + result.embed_ms + result.store_ingest_ms)


def test_the_table_has_the_three_columns(capsys):
    code, out, _ = run(["-embedder", "hash", "-no-write"], capsys)
    header = next(line for line in out.splitlines() if line.startswith("| System"))
    assert header.endswith("| load (ms) | embed (ms) | ingest (ms) |")
    cells = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")]
             for line in out.splitlines() if line.startswith("| memini-")}
    assert float(cells["memini-keyword"][-3]) == 0.0 and float(cells["memini-keyword"][-2]) == 0.0


def _two_systems_sample(tmp_path):
    """A file suite whose two categories tell the per-category tables apart."""
    items = [Item(f"i{n}", f"memory number {n} about topic {n}", "g") for n in range(6)]
    questions = [Question(f"q{n}", f"topic {n}", (f"i{n}",), "g", category="even" if n % 2 == 0 else "odd")
                 for n in range(6)]
    doc = {"name": "cats", "items": [{"id": i.id, "content": i.content, "group": i.group} for i in items],
           "questions": [{"id": q.id, "query": q.query, "gold": list(q.gold), "group": q.group,
                          "category": q.category} for q in questions]}
    path = tmp_path / "cats.json"
    path.write_text(json.dumps(doc))
    return path


def test_categories_for_a_chosen_system_or_all(tmp_path, capsys):
    data = _two_systems_sample(tmp_path)
    base = ["-suite", "file", "-data", str(data), "-embedder", "hash", "-systems", "keyword,vector", "-no-write"]
    code, out, _ = run(base, capsys)
    assert code == 0 and "### memini-keyword by category" in out and "### memini-vector by category" not in out
    code, out, _ = run([*base, "-categories", "memini-vector"], capsys)
    assert "### memini-vector by category" in out and "### memini-keyword by category" not in out
    code, out, _ = run([*base, "-categories", "all"], capsys)
    assert "### memini-vector by category" in out and "### memini-keyword by category" in out
    code, _, err = run([*base, "-categories", "nosuch"], capsys)
    assert code == 2 and "-categories nosuch: not among this run's systems" in err and "dataset" not in err
    code, out, err = run([*base, "-categories", "vector"], capsys)  # the alias -systems takes
    assert code == 0 and "### memini-vector by category" in out and "### memini-keyword by category" not in out, err
    code, out, _ = run([*base, "-categories", "vector,memini-vector"], capsys)  # one table, not two
    assert out.count("### memini-vector by category") == 1
    code, _, err = run([*base, "-categories", "hybrid"], capsys)  # an alias of a system this run lacks
    assert code == 2 and "-categories hybrid: not among this run's systems" in err


def test_significance_against_a_chosen_reference(tmp_path, capsys):
    data = _two_systems_sample(tmp_path)
    base = ["-suite", "file", "-data", str(data), "-embedder", "hash", "-systems", "hybrid,keyword,vector",
            "-no-write", "-significance", "-resamples", "200"]
    code, out, err = run([*base, "-reference", "memini-vector"], capsys)
    assert code == 0, err
    assert "memini-vector against each system, paired on the same questions" in out
    code, out, _ = run(base, capsys)
    assert "memini-hybrid against each system" in out
    code, _, err = run([*base, "-reference", "nosuch"], capsys)
    assert code == 2 and "-reference nosuch: not among this run's systems" in err and "dataset" not in err
    code, _, err = run(["-systems", "keyword,vector", "-embedder", "hash", "-no-write", "-reference",
                        "memini-vector"], capsys)
    assert code == 2 and "-reference: used with -significance" in err


def test_a_stage_that_fails_leaves_no_done_line(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    with pytest.raises(RuntimeError):
        for i in progress.progress(range(3), 3, "work", "items"):
            if i == 1:
                raise RuntimeError("the run stopped")
    err = capsys.readouterr().err
    assert "progress: work: 1/3 items" in err and ", done" not in err
