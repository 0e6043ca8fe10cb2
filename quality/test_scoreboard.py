"""The scoreboard corpus, its metric arithmetic, and the invariants a ranking change must keep on it.

The scoreboard's figures are measured and reported (``make quality``), not asserted; what is asserted here holds
for any embedder: with the reserve on, durable recall never drops below reserve=0 at the same k, the top hit is
never displaced, and every promoted durable cleared the gate ``max(0.5 x evictee, 0.4 x top-1)``.
"""

from __future__ import annotations

import os
from collections import Counter

import orjson
import pytest

from memini_bench.core.dataset import Dataset, Question
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import build_embedder
from memini_bench.errors import BenchError
from memini_bench.evaluation.runner import run_system
from memini_bench.retrieval.composite import DURABLE_TIERS, normalize_content
from quality import corpus
from quality import scoreboard as sb


@pytest.fixture(scope="module")
def ds() -> Dataset:
    return corpus.build()


def test_corpus_shape(ds):
    assert len(ds.items) == 243 and len(ds.questions) == 40
    ids = [it.id for it in ds.items]
    assert len(set(ids)) == 243
    assert len({normalize_content(it.content) for it in ds.items}) == 243  # dedup never merges two memories
    assert Counter(it.tier for it in ds.items) == {"episodic": 225, "semantic": 18}
    assert {it.time for it in ds.items} == {corpus.CLOCK} and {it.group for it in ds.items} == {corpus.GROUP}
    kinds = Counter(i.split("-")[-1] if not i.split("-")[-1].isdigit() else "ep" for i in ids)
    assert kinds == {"fact": 18, "dup": 5, "ep": 200, "detail": 20}
    assert [q.category for q in ds.questions] == ["fact"] * 10 + ["episodic"] * 6 + ["confusable"] * 4 + ["detail"] * 20
    by_id = {it.id: it for it in ds.items}
    for q in ds.questions:
        key = corpus.topic_key(q)
        assert all(g in by_id and corpus.on_topic(g, key) for g in q.gold)
        assert (len(q.gold) == 1) == (q.category in ("fact", "detail")), q.id
        assert q.now == corpus.CLOCK and q.group == corpus.GROUP
    # no topic key is a prefix-with-dash of another, so on-topic-by-prefix is exact ("db" vs "dbbackup")
    assert not corpus.on_topic("dbbackup-ep-0", "db") and corpus.on_topic("db-ep-0", "db")


def test_chatter_names_the_subject_repeatedly_and_never_the_decision(ds):
    by_id = {it.id: it.content for it in ds.items}
    for key, subject, decision in corpus.FACT_TOPICS:
        assert decision in by_id[f"{key}-fact"]
        for j in range(corpus.CHATTER_PER_TOPIC):
            text = by_id[f"{key}-ep-{j}"]
            assert text.count(subject) == 3 and decision not in text
    for key, _, decision in corpus.FACT_TOPICS[:corpus.NEAR_DUPS]:
        assert decision in by_id[f"{key}-dup"]


def test_confusable_topics_share_words_with_fact_topics():
    fact_words = {w for _, subject, _ in corpus.FACT_TOPICS for w in subject.split()} - {"the"}
    for _, subject in corpus.CONFUSABLE_TOPICS:
        assert fact_words & set(subject.split()), subject


def _run(rows: list[tuple[str, str, tuple[str, ...], list[str]]]) -> RunResult:
    runs = tuple(QuestionRun(Question(f"q{n}", "", gold, category=cls, meta=(("key", key),)),
                             tuple((i,) for i in returned), (0.0,) * len(returned), (0,) * len(returned), 0.0)
                 for n, (cls, key, gold, returned) in enumerate(rows))
    return RunResult("s", "d", 5, 0.0, 0, runs)


def test_score_board_arithmetic():
    tiers = {"x-fact": "semantic", "y-fact": "semantic", "z-fact": "procedural", "a-fact": "semantic"}
    tiers.update({i: "episodic" for i in ("a-ep-0", "a-ep-1", "b-ep-0", "b-ep-1", "a-detail", "b-detail")})
    result = _run([
        ("fact", "a", ("a-fact",), ["a-ep-0", "a-fact", "x-fact", "a-ep-1"]),  # on 3/4, first 3: 2/3, 1 inj, rank 2
        ("episodic", "b", (), ["b-ep-0", "y-fact", "z-fact"]),  # on 1/3, 2 injected (semantic + procedural)
        ("confusable", "c", (), []),  # empty: adds 0 to P, counts in the denominator
        ("detail", "a", ("a-detail",), ["a-detail", "b-ep-0"]),  # off-topic but episodic: no injection
        ("detail", "b", ("b-detail",), ["b-ep-1", "x-fact"]),  # gold missed, 1 injected
    ])
    b = sb.score_board(result, tiers)
    assert (b.dur_recall, b.dur_mrr) == (1.0, 0.5)
    assert (b.epi_recall, b.epi_mrr) == (0.5, 0.5)
    assert b.p5 == pytest.approx((3 / 4 + 1 / 3 + 0 + 1 / 2 + 1 / 2) / 5)
    assert b.p3 == pytest.approx((2 / 3 + 1 / 3 + 0 + 1 / 2 + 1 / 2) / 5)
    assert (b.spray_q, b.spray_n) == (1, 2)
    assert (b.inj_q, b.inj_n, b.inj_fact_n, b.inj_detail_n) == (3, 4, 1, 1)


class GateAudit:
    """Wraps a reserve-on hybrid system and checks each recall against its composite-ranked list (an
    independent oracle for the gate: the j-th promoted durable evicted the j-th lowest non-durable)."""

    def __init__(self, system: sb.HybridSystem) -> None:
        self.system, self.name = system, system.name
        self.promotions = 0

    def ingest(self, items):
        self.system.ingest(items)

    def recall(self, group, query, k, *, now=None, context=None):
        items = self.system.backend.items
        ids, scores = self.system.ranked(group, query, k, now)
        pre = [items[i].id for i in ids.tolist()]
        score = dict(zip(pre, scores.tolist(), strict=True))
        durable = {i: items[j].tier in DURABLE_TIERS for i, j in zip(pre, ids.tolist(), strict=True)}
        hits = self.system.recall(group, query, k, now=now)
        post = [h.ids[0] for h in hits]
        assert post[0] == pre[0], f"{query!r}: top hit {pre[0]} displaced by {post[0]}"
        promoted = [i for i in post if pre.index(i) >= k]
        evictees = [i for i in reversed(pre[:k]) if not durable[i]][:len(promoted)]
        assert len(promoted) <= max(0, self.system.config.semantic_reserve - sum(durable[i] for i in pre[:k]))
        assert post == [pre[0], *promoted, *[i for i in pre[1:k] if i not in evictees]]
        for cand, evictee in zip(promoted, evictees, strict=True):
            assert durable[cand], f"{query!r}: promoted non-durable {cand}"
            bar = max(0.5 * score[evictee], 0.4 * score[pre[0]])
            assert score[cand] >= bar, f"{query!r}: {cand} ({score[cand]:.3f}) promoted below the bar {bar:.3f}"
        self.promotions += len(promoted)
        return hits


def check_invariants(encoder: TextEncoder, ds: Dataset) -> dict[int, tuple[sb.Board, sb.Board, int]]:
    tiers = {it.id: it.tier for it in ds.items}
    out = {}
    for limit in (5, 3):
        base = sb.score_board(sb.run_config(encoder, ds, sb.Config("reserve=0", 0, limit)), tiers)
        audit = GateAudit(sb.hybrid(encoder, sb.Config("reserve=2", 2, limit)))
        board = sb.score_board(run_system(audit, ds, limit), tiers)
        assert board.dur_recall >= base.dur_recall, (limit, board, base)
        out[limit] = (base, board, audit.promotions)
    return out


def test_invariants_hash(ds):
    out = check_invariants(TextEncoder(build_embedder("hash")), ds)
    assert all(promotions > 0 for _, _, promotions in out.values())  # the gate was exercised, not idle


@pytest.mark.slow
def test_invariants_minilm(ds):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        encoder = TextEncoder(build_embedder("minilm"))
        encoder.documents(["probe"])
    except (BenchError, ImportError, OSError) as exc:
        pytest.skip(f"MiniLM is not available here: {exc}")
    check_invariants(encoder, ds)


def test_cli_writes_the_results_file(tmp_path, capsys):
    out = tmp_path / "quality.json"
    with pytest.raises(SystemExit) as done:
        sb.main(["-embedders", "hash", "-out", str(out)])
    assert done.value.code == 0
    printed = capsys.readouterr().out
    assert "| production | 5 | 2 |" in printed and "| prod k=3 | 3 | 2 |" in printed
    doc = orjson.loads(out.read_bytes())
    assert doc["config"]["memories"] == 243 and doc["config"]["questions"] == 40
    assert [(r["label"], r["limit"], r["reserve"]) for r in doc["results"]] == [
        ("reserve=0", 5, 0), ("production", 5, 2), ("prod k=3", 3, 2)]
    assert all(len(r["queries"]) == 40 for r in doc["results"])


def test_cli_unknown_embedder_is_one_line_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        sb.main(["-embedders", "nope", "-out", str(tmp_path / "q.json")])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("quality: error:") and "nope" in err and "\n" not in err
    assert not (tmp_path / "q.json").exists()


def test_sanity_check_compares_every_reserve_config_at_its_own_depth():
    fact = lambda n, returned: ("fact", f"t{n}", (f"t{n}-fact",), returned)  # noqa: E731
    # reserve=0 (k 5): facts at rank 4 (beyond the top 3) and rank 1 -> R@5 = 1.0, R@3 = 0.5
    base = _run([fact(0, ["a", "b", "c", "t0-fact"]), fact(1, ["t1-fact"])])
    good = _run([fact(0, ["t0-fact"]), fact(1, ["t1-fact"])])
    k3_ok = _run([fact(0, ["a"]), fact(1, ["t1-fact"])])  # R@3 0.5: not below the baseline's top-3 0.5
    k3_bad = _run([fact(0, ["a"]), fact(1, ["b"])])  # R@3 0.0
    r0, prod, prod3 = sb.CONFIGS
    assert sb.sanity_violations([(r0, base), (prod, good), (prod3, k3_ok)]) == []
    assert sb.sanity_violations([(r0, base), (prod, k3_bad), (prod3, k3_bad)]) == [
        "production: durable R@5 0.0% below reserve=0's R@5 (100.0%)",
        "prod k=3: durable R@3 0.0% below reserve=0's R@3 (50.0%)"]
    assert sb.durable_recall(base, 3) == 0.5 and sb.durable_recall(base, 5) == 1.0
