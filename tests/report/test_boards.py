"""The report's boards, marks, published claims and figures: on the committed results/ (and their per-question
records), on hand-built runs checked against scipy's exact binomial test and a hand-computed Holm correction, and
the figures' label boxes measured with matplotlib's renderer."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.errors import BenchError
from memini_bench.report import boards, claims, model, plots, site
from memini_bench.report.collect import Inputs, Source, collect
from memini_bench.results.schema import CompareResults, Score

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
MAKEFILE = (ROOT / "Makefile").read_text()


def _make_list(name: str) -> list[str]:
    return re.search(rf"^{name} \?= (.+)$", MAKEFILE, re.M).group(1).split(",")


@pytest.fixture(scope="module")
def committed() -> tuple[Inputs, list[boards.Board]]:
    inputs = collect([str(RESULTS)])
    return inputs, boards.build_boards(inputs)


def _board(all_boards, dataset: str, split: str) -> boards.Board:
    (b,) = [b for b in all_boards if b.dataset == dataset and b.split == split and b.data == "locomo10"]
    return b


def test_locomo_turn_held_board_has_the_reference_and_every_peer_once(committed):
    _, all_boards = committed
    board = _board(all_boards, "locomo", "held")
    names = [r.name for r in board.rows]
    peers = {"reference"} | {f"memini-{s}" if s in ("hybrid", "keyword", "vector") else s
                             for s in _make_list("PEERS")} | set(re.search(
                                 r"^REF_PEER_VARIANTS := (.+)$", MAKEFILE, re.M).group(1).split(","))
    assert sorted(names) == sorted(set(names)) and peers <= set(names)
    assert all(r.questions >= boards.MIN_QUESTIONS for r in board.rows)
    assert board.rows[0].mark == "best" and all(r.mark in ("tied", "behind", "untested") for r in board.rows[1:])
    assert board.tuned == ("reference",)
    held = json.loads((RESULTS / "reference" / "locomo-held-peers.json").read_text())
    r10 = {r["system"]: r["scores"]["recall_any@10"] for r in held["results"] if r["k"] == 10}
    assert {r.name: r.value("recall_at_k", 10) for r in board.rows} == pytest.approx(r10)


def test_full_board_lists_the_tuned_system_apart_and_each_name_once(committed):
    _, all_boards = committed
    board = _board(all_boards, "locomo", "full")
    apart = [r.name for r in board.apart]  # the tuned system, with MiniLM and with each other embedder's run
    assert "reference" in apart and all(n == "reference" or n.startswith("reference [embedder ") for n in apart)
    names = [r.name for r in board.rows + board.apart]
    assert len(names) == len(set(names))
    # three memini-hybrid identities (plain, -reinforce, temporal boosts) are three names
    assert {"memini-hybrid", "memini-hybrid [reinforce]"} <= set(names)


def test_a_run_with_another_embedder_is_named_by_it(committed):
    """Every row from a run whose embedder is not the board's usual one carries that embedder in its name, even
    where no run of the system with the usual embedder is on the board (sqlite-vec-hybrid at LoCoMo session level,
    whose MiniLM run predates its recipe)."""
    _, all_boards = committed
    for b in (_board(all_boards, "locomo", "full"), _board(all_boards, "locomo-sessions", "full")):
        for r in b.rows + b.apart:
            embedder = r.source.results.config.get("embedder")
            if embedder in ("mpnet", "e5-small"):
                assert r.name.endswith(f"[embedder {embedder}]"), (b.key, r.name)
            elif embedder == "minilm":
                assert "[embedder" not in r.name, (b.key, r.name)


def test_no_run_under_the_minimum_is_ranked(committed):
    _, all_boards = committed
    smoke = [r for b in all_boards for r in b.apart if r.questions < boards.MIN_QUESTIONS]
    assert smoke, "the committed results hold 1-question smoke tests"
    assert all(r.questions >= boards.MIN_QUESTIONS for b in all_boards for r in b.rows)


def _run(system: str, hits: list[bool]) -> RunResult:
    qs = tuple(QuestionRun(question=Question(id=f"q{i}", query="", gold=("g",)),
                           ranked_ids=(("g",),) if hit else (("x",),), scores=(1.0,), tokens=(), latency_ms=0.0)
               for i, hit in enumerate(hits))
    return RunResult(system=system, dataset="t", depth=1, ingest_ms=0.0, corpus_tokens=0, questions=qs)


def _source(index: int, runs: list[RunResult], k: int = 1) -> Source:
    from memini_bench.evaluation.metrics import score_all

    scores = tuple(score_all(runs, [k]))
    doc = CompareResults(config={"mode": "compare", "dataset": "t", "data": "t.json", "holdout": "all",
                                 "identity": {"mode": "compare"}}, scores=scores, extra={},
                         path=Path(f"/nonexistent/t{index}.json"))
    return Source(index, doc, runs=runs)


def test_marks_are_mcnemar_against_the_leader_with_holm_across_the_board():
    from scipy.stats import binomtest

    n = 60
    lead = [True] * 50 + [False] * 10
    close = [True] * 48 + [False] * 12          # 2 only-leader, 0 only-row: not significant
    far = [True] * 20 + [False] * 40            # 30 only-leader: significant
    # discordant counts: close (2, 0), far (30, 0); the third row trails by 8 questions of 60
    third = lead[:42] + [False] * 8 + lead[50:]
    runs = [_run("lead", lead), _run("close", close), _run("far", far), _run("third", third)]
    board = boards._board(("t", "t", "full"), [_source(0, runs)], set())
    board_k = board.k
    assert board_k == 1 and [r.name for r in board.rows][0] == "lead"
    raw = {"close": binomtest(2, 2).pvalue, "far": binomtest(30, 30).pvalue, "third": binomtest(8, 8).pvalue}
    order = sorted(raw, key=raw.get)
    holm, running = {}, 0.0
    for i, name in enumerate(order):  # Holm: (m - i) * p, running maximum, capped at 1
        running = max(running, min(1.0, (len(order) - i) * raw[name]))
        holm[name] = running
    got = {r.name: r for r in board.rows[1:]}
    assert {name: got[name].test["p_adjusted"] for name in raw} == pytest.approx(holm)
    assert {name: got[name].mark for name in raw} == {name: "behind" if holm[name] < 0.05 else "tied"
                                                      for name in raw}
    assert got["close"].mark == "tied" and got["far"].mark == "behind"
    assert len(lead) == n


def test_a_board_without_records_marks_rows_untested():
    runs = [_run("a", [True] * 40), _run("b", [False] * 40)]
    src = _source(0, runs)
    src.runs = []
    board = boards._board(("t", "t", "full"), [src], set())
    assert [r.mark for r in board.rows] == ["best", "untested"]


def test_newest_run_of_an_identity_wins_and_other_identities_get_their_settings_named():
    a = _source(0, [_run("sys", [True] * 40)])
    b = _source(1, [_run("sys", [False] * 40)])
    c = _source(2, [_run("sys", [True] * 20 + [False] * 20)])
    c.results.config["identity"] = {"mode": "compare", "hybrid": {"reinforce": True}}
    a.results.config["identity"] = b.results.config["identity"] = {"mode": "compare", "hybrid": {"reinforce": False}}
    board = boards._board(("t", "t", "full"), [a, b, c], set())
    by_name = {r.name: r for r in board.rows}
    assert set(by_name) == {"sys", "sys [reinforce]"}
    assert by_name["sys"].source is b  # same commit time (none): the later path wins


def test_the_claims_file_is_well_formed_and_sourced():
    got = claims.load()
    assert got and all(c.source.startswith("https://") for c in got)
    memini = {(c.metric, c.value) for c in got if c.system == "memini-hybrid" and c.dataset == "locomo"}
    assert {("R@5", 59.8), ("R@10", 69.9), ("MRR", 42.6)} <= memini


@pytest.mark.parametrize("change, needle", [
    ({"metric": "recall"}, "metric"), ({"protocol": "some"}, "protocol"), ({"value": 140}, "percent"),
    ({"source": "memini"}, "URL"), ({"date": "last year"}, "date"), ({"extra": 1}, "unknown field"),
    ({"questions": "all"}, "questions")])
def test_a_malformed_claim_is_refused_naming_it(change, needle):
    entry = {"system": "s", "claimant": "c", "dataset": "d", "data": "x", "metric": "R@5", "value": 50.0,
             "protocol": "any-hit", "questions": 10, "source": "https://example.org", "date": "n.d."}
    claims.parse({"format": 1, "claims": [entry]}, "c.json")
    with pytest.raises(BenchError, match=f"claim 0.*{needle}"):
        claims.parse({"format": 1, "claims": [{**entry, **change}]}, "c.json")


def test_claims_sit_beside_the_measured_numbers(committed):
    _, all_boards = committed
    by_board, _ = claims.for_boards(claims.load(), all_boards)
    board = _board(all_boards, "locomo", "full")
    lines = {(c["claim"].system, c["claim"].metric, c["claim"].value): c for c in by_board[board.key]}
    line = lines[("memini-hybrid", "R@10", 69.9)]
    row = next(r for r in board.rows if r.name == "memini-hybrid")
    assert line["measured"] == pytest.approx(row.value("recall_at_k", 10) * 100)
    assert line["diff"] == round(line["measured"] - 69.9, 1)
    other = claims.Claim(**{**line["claim"].__dict__, "protocol": "fractional"})
    assert claims.beside(other, board)["reason"].startswith("not comparable")
    fewer = claims.Claim(**{**line["claim"].__dict__, "questions": 1986})
    assert "1986 questions" in claims.beside(fewer, board)["reason"]


def _no_overlaps(boxes) -> bool:
    return not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))


def test_labels_of_the_committed_figures_do_not_overlap(committed):
    pytest.importorskip("matplotlib", reason="the report extra is not installed: pip install 'memini-bench[report]'")
    inputs, _ = committed
    plt = plots._plt()
    rows = model.rows(inputs)
    for dataset in dict.fromkeys(r.dataset for r in rows):
        mine = [r for r in rows if r.dataset == dataset]
        k = max(model.ks_of(mine))
        fig, texts = plots.pareto_figure(site.pareto_points(mine, k), k, dataset)
        renderer = fig.canvas.get_renderer()
        assert _no_overlaps([t.get_window_extent(renderer) for t in texts]), dataset
        plt.close(fig)
    for source in inputs.sources:
        scores = list(source.results.scores)
        k = max(s.k for s in scores)
        fig = plots.category_figure(scores, source.results.config.get("category_labels") or {}, k, source.name)
        if fig is None:
            continue
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ticks = [t.get_window_extent(renderer) for t in fig.axes[0].get_xticklabels() if t.get_text()]
        assert _no_overlaps(ticks), source.name
        plt.close(fig)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["a", "bm25s-global", "memini-hybrid (locomo-peers)", "x" * 30]),
                          st.sampled_from([0.0, 0.05, 0.3, 0.31, 9.0, 400.0]),
                          st.sampled_from([0.0, 0.523, 0.524, 0.7, 1.0])), max_size=40))
def test_pareto_labels_never_overlap_at_any_number_of_points(points):
    pytest.importorskip("matplotlib", reason="the report extra is not installed: pip install 'memini-bench[report]'")
    plt = plots._plt()
    fig, texts = plots.pareto_figure(points, 10, "t")
    renderer = fig.canvas.get_renderer()
    assert _no_overlaps([t.get_window_extent(renderer) for t in texts])
    plt.close(fig)


def test_category_bars_of_runs_with_different_k_lists_build():
    pytest.importorskip("matplotlib", reason="the report extra is not installed: pip install 'memini-bench[report]'")
    one = Score(system="a", dataset="t", k=5, questions=3,
                scores={"recall_any@5": 0.5, "recall_all@5": 0.5, "mrr": 0.5, "ndcg@5": 0.5, "latency_p50": 1.0,
                        "latency_p95": 1.0, "tokens_injected@5": 0.0, "token_efficiency@5": 0.0},
                categories={"1": {"recall_any@5": 0.5}}, per_category_questions={"1": 3})
    assert plots.category_bars([one], {}, 10, "t") == ""
    assert plots.category_bars([one], {"1": "multi-hop"}, 5, "t").startswith("<svg")


def test_a_row_older_than_its_recipe_shows_under_the_older_recipes_name(committed):
    """sqlite-vec-hybrid's recipe changed (each leg k deep); the pooled one is now sqlite-vec-hybrid-pool."""
    _, all_boards = committed
    if not boards.newness(all_boards[0].rows[0].source)[0]:
        pytest.skip("needs the git history (the commits' dates) of the results files")
    sessions = _board(all_boards, "locomo-sessions", "full")
    names = {r.name: r for r in sessions.rows + sessions.apart}
    assert "sqlite-vec-hybrid" not in names
    assert (names["sqlite-vec-hybrid-pool"].system, names["sqlite-vec-hybrid-pool"].source.name) == \
        ("sqlite-vec-hybrid", "locomo-sessions-peers.json")
    turn = {r.name: r for r in _board(all_boards, "locomo", "full").rows}
    assert turn["sqlite-vec-hybrid"].source.name == "locomo-sqlite-vec-depth.json"
    assert turn["sqlite-vec-hybrid-pool"].value("recall_at_k", 5) == pytest.approx(0.528, abs=5e-4)
