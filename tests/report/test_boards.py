"""The report's boards (one embedder each, the primary metric from the data), marks, claims with their verdicts
and figures: on the committed results/ (and their per-question
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
from memini_bench.results.schema import CompareResults
from tests.conftest import needs_extra

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
MAKEFILE = (ROOT / "Makefile").read_text()


def _make_list(name: str) -> list[str]:
    return re.search(rf"^{name} \?= (.+)$", MAKEFILE, re.M).group(1).split(",")


@pytest.fixture(scope="module")
def committed() -> tuple[Inputs, list[boards.Board]]:
    inputs = collect([str(RESULTS)])
    return inputs, boards.build_boards(inputs)


def _board(all_boards, dataset: str, split: str, embedder: str = "minilm") -> boards.Board:
    (b,) = [b for b in all_boards if b.dataset == dataset and b.split == split and b.data == "locomo10"
            and b.embedder == embedder]
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
    assert {r.name: r.value("recall_any@K", 10) for r in board.rows} == pytest.approx(r10)


def test_full_board_lists_the_tuned_system_apart_and_each_name_once(committed):
    _, all_boards = committed
    board = _board(all_boards, "locomo", "full")
    assert [r.name for r in board.apart] == ["reference"]
    names = [r.name for r in board.rows + board.apart]
    assert len(names) == len(set(names))
    # three memini-hybrid identities (plain, -reinforce, temporal boosts) are three names
    assert {"memini-hybrid", "memini-hybrid [reinforce]"} <= set(names)


def test_every_board_holds_one_embedder_and_minilm_comes_first(committed):
    """Rows of a board share their vectors: one embedder per board; the LoCoMo full set has a board per embedder,
    MiniLM's first."""
    _, all_boards = committed
    for b in all_boards:
        assert {boards.embedder_of(r.source) for r in b.rows + b.apart} == {b.embedder}, b.key
    turn = [b.embedder for b in all_boards if b.dataset == "locomo" and b.split == "full" and b.data == "locomo10"]
    assert turn[0] == "minilm" and {"mpnet", "e5-small"} <= set(turn)


def test_the_primary_metric_follows_the_items_a_question_searches(committed):
    """LoCoMo sessions (27 a conversation): recall_any@10 would saturate, so recall_any@5; turns (588): @10; a
    board where every K is above a quarter of the items per question ranks by mrr."""
    _, all_boards = committed
    assert _board(all_boards, "locomo-sessions", "full").primary == "recall_any@5"
    assert _board(all_boards, "locomo", "full").primary == "recall_any@10"
    assert boards.primary_metric([5, 10], (27.2, 272, 10))[0] == "recall_any@5"
    assert boards.primary_metric([5, 10], (588.2, 5882, 10))[0] == "recall_any@10"
    assert boards.primary_metric([5, 10], (12.0, 1200, 100))[0] == "mrr"
    assert boards.primary_metric([5, 10], None)[0] == "recall_any@10"


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


def test_a_later_run_at_other_ks_never_hides_the_run_with_the_primary_metric():
    """A later ``-k 5`` run of the same settings beside an earlier ``-k 5,10`` one: the board ranks by
    recall_any@10 and reads the earlier run."""
    early = _source(0, [_run("sys", [True] * 40)], k=10)
    late = _source(1, [_run("sys", [False] * 40)], k=5)
    board = boards._board(("t", "t", "full"), [early, late], set())
    assert board.primary == "recall_any@10" and [r.source for r in board.rows] == [early]


def test_untested_rows_say_why_and_are_never_behind():
    runs = [_run("a", [True] * 40), _run("b", [False] * 40)]
    src = _source(0, runs)
    src.runs = runs[:1]
    board = boards._board(("t", "t", "full"), [src], set())
    assert [r.mark for r in board.rows] == ["best", "untested"]
    assert board.rows[1].untested.startswith("no per-question records for this row")
    assert board.tested == [] and board.untested_rows == [board.rows[1]]


def test_the_claims_file_is_well_formed_and_sourced():
    got = claims.load()
    assert got and all(c.source.startswith("https://") for c in got)
    memini = {(c.metric, c.value) for c in got if c.system == "memini-hybrid" and c.dataset == "locomo"
              and c.protocol == "turn"}
    assert {("recall_any@5", 59.8), ("recall_any@10", 69.9), ("mrr@10", 42.6)} <= memini
    assert {c.claimant for c in got} >= {"memini", "Engram", "taOSmd", "FluctlightDB"}


ENTRY = {"system": "s", "claimant": "c", "dataset": "d", "protocol": "turn", "data": "x", "embedder": "minilm",
         "metric": "recall_any@5", "value": 50.0, "questions": 10, "source": "https://example.org", "date": "n.d."}


@pytest.mark.parametrize("change, needle", [
    ({"metric": "recall"}, "metric"), ({"metric": "R@5"}, "registered name 'recall_any@5'"),
    ({"metric": "latency_p50"}, "not a rate"), ({"value": 140}, "percent"),
    ({"source": "memini"}, "URL"), ({"date": "last year"}, "date"), ({"extra": 1}, "unknown field"),
    ({"questions": "all"}, "questions"), ({"embedder": ""}, "embedder")])
def test_a_malformed_claim_is_refused_naming_it(change, needle):
    claims.parse({"format": 2, "claims": [ENTRY]}, "c.json")
    with pytest.raises(BenchError, match=f"claim 0.*{needle}"):
        claims.parse({"format": 2, "claims": [{**ENTRY, **change}]}, "c.json")


def _graded(system: str, found: list[int], golds: int = 2) -> RunResult:
    """Each question has ``golds`` gold ids; ``found[i]`` of them are ranked at the top."""
    qs = tuple(QuestionRun(question=Question(id=f"q{i}", query="", gold=tuple(f"g{j}" for j in range(golds))),
                           ranked_ids=tuple((f"g{j}",) for j in range(n)) + (("x",),), scores=(1.0,) * (n + 1),
                           tokens=(), latency_ms=0.0) for i, n in enumerate(found))
    return RunResult(system=system, dataset="t", depth=5, ingest_ms=0.0, corpus_tokens=0, questions=qs)


def test_claim_verdicts_follow_the_measured_interval():
    """recall_frac@5 computed from the records (hand count: 40 questions, half find both gold items, half one:
    0.75); a claim inside the bootstrap interval is reproduced, one outside is not (with the gap), and a claim of
    another data set, embedder or LLM is not comparable with its reason."""
    src = _source(0, [_graded("sys", [2] * 20 + [1] * 20)], k=5)
    src.results.config["identity"] = {"mode": "compare", "embedder": "minilm"}
    board = boards._board(("locomo", "locomo10", "full", "minilm"), [src], set())
    claim = claims.Claim(system="sys", claimant="c", dataset="locomo", protocol="turn", data="locomo10",
                         embedder="minilm", metric="recall_frac@5", value=75.0, questions=40, source="https://x",
                         date="n.d.")
    line = claims.verdict(claim, [board])
    assert line["verdict"] == "reproduced" and line["measured"] == pytest.approx(75.0)
    assert line["low"] < 75.0 < line["high"]
    high = claims.verdict(claims.Claim(**{**claim.__dict__, "value": 95.0}), [board])
    assert high["verdict"] == "not reproduced" and high["gap"] == 20.0
    for change, reason in (({"embedder": "bge-large-en-v1.5"}, "embedder bge-large-en-v1.5 is not available"),
                           ({"data": "longmemeval_s"}, "another data set"), ({"llm": "gpt-4o"}, "LLM gpt-4o"),
                           ({"questions": 41}, "another question set"), ({"protocol": "session"}, "another data")):
        line = claims.verdict(claims.Claim(**{**claim.__dict__, **change}), [board])
        assert line["verdict"] == "not comparable" and reason in line["reason"], (change, line["reason"])
    lines = claims.verdicts([claims.Claim(**{**claim.__dict__, "value": 95.0}), claim], [board])
    assert [x["verdict"] for x in lines] == ["reproduced", "not reproduced"]


def test_every_committed_claim_has_a_verdict_and_fluctlightdb_is_not_reproduced(committed):
    _, all_boards = committed
    lines = claims.verdicts(claims.load(), all_boards)
    assert {x["verdict"] for x in lines} <= set(claims.VERDICTS) and len(lines) == len(claims.load())
    assert all(x["reason"] for x in lines if x["verdict"] == "not comparable")
    (fluct,) = [x for x in lines if x["claim"].system == "fluctlightdb-maxsim" and x["claim"].value == 72.6]
    assert fluct["verdict"] == "not reproduced" and fluct["gap"] > 0
    assert fluct["board"] == "locomo-locomo10-full-minilm"
    memini = [x for x in lines if x["claim"].claimant == "memini" and x["claim"].dataset == "locomo"
              and x["claim"].metric.startswith("recall_any") and not x["claim"].llm
              and x["claim"].system != "memini-hybrid-rrf"]
    assert memini and all(x["verdict"] == "reproduced" for x in memini)


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
    for board in boards.build_boards(inputs):
        metric, rows = site.heatmap_rows(board)
        fig = plots.category_figure(rows, {}, metric, board.key)
        if fig is None:
            continue
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
            assert _no_overlaps([t.get_window_extent(renderer) for t in ticks if t.get_text()]), board.key
        values = [t.get_text() for t in ax.texts]
        assert len(values) == sum(1 + len(v) for _, _, v, _ in rows)  # every cell's value printed
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


def test_category_heatmap_prints_every_value_and_leaves_missing_cells_blank():
    needs_extra("report", "matplotlib")
    rows = [("a", 0.5, {"1": 0.25, "2": 1.0}, {"1": 4, "2": 1}), ("b", 0.0, {"1": 0.0}, {"1": 4})]
    fig = plots.category_figure(rows, {"1": "multi-hop"}, "recall_any@5", "t")
    assert sorted(t.get_text() for t in fig.axes[0].texts) == sorted(["50.0", "25.0", "100.0", "0.0", "0.0"])
    plots._plt().close(fig)
    assert plots.category_heatmap([], {}, "recall_any@5", "t") == ""


def test_recall_against_latency_shows_the_top_twelve_memini_and_the_reference(committed):
    _, all_boards = committed
    board = _board(all_boards, "locomo", "full")
    shown, rest = site.plotted_rows(board)
    names = [r.name for r in shown]
    assert rest and len(shown) + len(rest) == len(board.rows) + len(board.apart)
    assert {"reference", "memini-hybrid", "memini-keyword", "memini-vector"} <= set(names)
    top = sorted(board.rows + board.apart, key=lambda r: -(r.score(board.primary) or 0))[:site.PARETO_TOP]
    assert {r.name for r in top} <= set(names) and len(shown) <= site.PARETO_TOP + len(site.ALWAYS_PLOTTED)


def test_a_row_older_than_its_recipe_shows_under_the_older_recipes_name(committed):
    """sqlite-vec-hybrid's recipe changed (each leg k deep); the pooled one is now sqlite-vec-hybrid-pool."""
    _, all_boards = committed
    if not boards.newness(all_boards[0].rows[0].source)[0]:
        pytest.skip("needs the git history (the commits' dates) of the results files")
    sessions = _board(all_boards, "locomo-sessions", "full")
    names = {r.name: r for r in sessions.rows + sessions.apart}
    assert "sqlite-vec-hybrid" not in names
    # the older file's sqlite-vec-hybrid is the same run as the variants file's sqlite-vec-hybrid-pool (one slot);
    # the file with per-question records stands for it (collect.preference), so the row is tested
    assert (names["sqlite-vec-hybrid-pool"].system, names["sqlite-vec-hybrid-pool"].source.name) == \
        ("sqlite-vec-hybrid-pool", "locomo-sessions-peers-variants.json")
    assert boards.shown_name(next(s for s in committed[0].sources if s.name == "locomo-sessions-peers.json"),
                             "sqlite-vec-hybrid") == "sqlite-vec-hybrid-pool"
    turn = {r.name: r for r in _board(all_boards, "locomo", "full").rows}
    assert turn["sqlite-vec-hybrid"].source.name == "locomo-sqlite-vec-depth.json"
    assert turn["sqlite-vec-hybrid-pool"].value("recall_any@K", 5) == pytest.approx(0.528, abs=5e-4)
