"""The ``reference`` system: its analyzer and BM25 against independent oracles (nltk's Snowball, bm25s, memini's
FTS5-exact keyword leg), its fusion and session grouping by hand, its settings as flags and sweep axes."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("Stemmer", reason="the reference extra is not installed: pip install 'memini-bench[reference]'")
pytest.importorskip("scipy", reason="the reference extra is not installed: pip install 'memini-bench[reference]'")
from cli_opts import cli_options

from memini_bench.core.dataset import Item
from memini_bench.errors import BenchError
from memini_bench.retrieval.analyzer import ENGLISH_STOP_WORDS, Analyzer
from memini_bench.retrieval.bm25_analyzed import AnalyzedBM25
from memini_bench.retrieval.keyword import NumpyBM25

ROOT = Path(__file__).resolve().parents[2]


def _cli(args: list[str]) -> int:
    from memini_bench.cli import main

    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
TEXTS = [
    "Caroline went to the LGBTQ support group on Tuesday and felt inspired.",
    "Melanie is painting a sunrise over the lake; painting relaxes her.",
    "The support group meets every week, and Caroline is running a workshop.",
    "Melanie's kids love camping near the mountains in summer.",
    "Caroline researched adoption agencies generously recommended by friends.",
    "They were running late to the concert, but the band played encores.",
]
GROUPS = ["a", "a", "a", "b", "b", "b"]


def test_analyzer_rules_and_snowball_matches_nltk():
    snowball = pytest.importorskip("nltk.stem.snowball")
    plain = Analyzer("none", "none")
    assert plain.terms("Caroline's well-being, café!") == ["caroline", "s", "well", "being", "cafe"]
    stop = Analyzer("none", "english")
    assert stop.terms("The cat is on the mat") == ["cat", "mat"]
    assert len(ENGLISH_STOP_WORDS) == 33
    bm25s_stop = pytest.importorskip("bm25s.stopwords")
    assert ENGLISH_STOP_WORDS == set(bm25s_stop.STOPWORDS_EN)
    oracle = snowball.SnowballStemmer("english")
    words = " ".join(TEXTS).lower().replace(";", " ").replace(",", " ").replace(".", " ").split()
    ours = Analyzer("snowball", "none")
    for w in words:
        if w.isalpha():
            assert ours.terms(w) == [oracle.stem(w)], w


def test_porter_fts5_bm25_equals_memini_keyword_leg():
    """Porter, no stop words, FTS5 IDF, global statistics: NumpyBM25's ids and scores (ASCII-word queries)."""
    ours = AnalyzedBM25(TEXTS, GROUPS, Analyzer("porter", "none"), idf="fts5", stats="global")
    memini = NumpyBM25(TEXTS, GROUPS)
    for query in ["caroline support group", "painting painting lake", "running workshop", "kids camping summer",
                  "nothing here"]:
        for group in "ab":
            a_ids, a_scores = ours.search(group, query, 5)
            m_ids, m_scores = memini.search(group, query, 5)
            assert a_ids.tolist() == m_ids.tolist()
            np.testing.assert_allclose(a_scores, m_scores, rtol=1e-12)


def _plain_bm25(docs: list[list[str]], query: list[str], k1: float, b: float) -> list[float]:
    """Lucene's BM25 written out term by term (the oracle): idf ln(1 + (N - n + 0.5) / (n + 0.5))."""
    n_docs = len(docs)
    avgdl = sum(map(len, docs)) / n_docs
    out = []
    for doc in docs:
        total = 0.0
        for term in query:
            n = sum(term in d for d in docs)
            f = doc.count(term)
            if f:
                total += math.log(1 + (n_docs - n + 0.5) / (n + 0.5)) * f * (k1 + 1) / (
                    f + k1 * (1 - b + b * len(doc) / avgdl))
        out.append(total)
    return out


def test_lucene_per_group_bm25_by_hand():
    analyzer = Analyzer("snowball", "english")
    ours = AnalyzedBM25(TEXTS, GROUPS, analyzer, idf="lucene", stats="group", k1=1.5, b=0.6)
    for group in "ab":
        members = [i for i, g in enumerate(GROUPS) if g == group]
        docs = [analyzer.terms(TEXTS[i]) for i in members]
        for query in ["Caroline support groups", "painting painting lakes", "running late concert", "camping"]:
            expected = _plain_bm25(docs, analyzer.terms(query), 1.5, 0.6)
            ids, scores = ours.search(group, query, 10)
            got = dict(zip(ids.tolist(), scores.tolist(), strict=True))
            for local, item in enumerate(members):
                assert math.isclose(got.get(item, 0.0), expected[local], rel_tol=1e-12, abs_tol=1e-12)


def test_fusion_by_hand():
    from memini_bench.systems.reference import fuse
    from memini_bench.systems.reference_settings import ReferenceSettings

    vector = (np.array([1, 2, 3]), np.array([0.9, 0.5, 0.1]))
    keyword = (np.array([3, 4]), np.array([8.0, 2.0]))
    ids, scores = fuse(vector, keyword, ReferenceSettings(ref_fusion="rrf", ref_alpha=0.25, ref_rrf_k=10))
    expected = {1: 0.25 / 11, 2: 0.25 / 12, 3: 0.25 / 13 + 0.75 / 11, 4: 0.75 / 12}
    assert ids.tolist() == sorted(expected, key=lambda i: -expected[i])
    np.testing.assert_allclose(scores, [expected[i] for i in ids.tolist()])
    ids, scores = fuse(vector, keyword, ReferenceSettings(ref_fusion="minmax", ref_alpha=0.25))
    expected = {1: 0.25, 2: 0.25 * 0.5, 3: 0.0 + 0.75, 4: 0.0}
    assert ids.tolist() == [3, 1, 2, 4]
    np.testing.assert_allclose(scores, [expected[i] for i in ids.tolist()])


def test_adaptive_fusion_by_hand():
    """Each leg's confidence is (top - mean) / (top - bottom) of its own scores; the prior alpha is re-weighted by
    them per query, then min-max fused as ``minmax`` is."""
    from memini_bench.retrieval.fusion import adaptive_alpha, leg_confidence
    from memini_bench.systems.reference import fuse
    from memini_bench.systems.reference_settings import ReferenceSettings

    vector = (np.array([1, 2, 3]), np.array([0.9, 0.5, 0.1]))  # mean 0.5: (0.9 - 0.5) / 0.8 = 1/2
    keyword = (np.array([3, 4, 5]), np.array([8.0, 2.0, 2.0]))  # mean 4: (8 - 4) / 6 = 2/3
    assert math.isclose(leg_confidence(vector[1]), 0.5) and math.isclose(leg_confidence(keyword[1]), 2 / 3)
    # 0.25 * 1/2 = 0.125 against 0.75 * 2/3 = 0.5: a = 0.125 / 0.625 = 0.2
    assert math.isclose(adaptive_alpha(0.25, vector[1], keyword[1]), 0.2)
    ids, scores = fuse(vector, keyword, ReferenceSettings(ref_fusion="adaptive", ref_alpha=0.25))
    expected = {1: 0.2, 2: 0.2 * 0.5, 3: 0.0 + 0.8, 4: 0.0, 5: 0.0}
    assert ids.tolist() == [3, 1, 2, 4, 5]
    np.testing.assert_allclose(scores, [expected[i] for i in ids.tolist()])
    # a leg that found nothing gets no weight; one candidate is fully confident; flat lists keep the prior
    assert adaptive_alpha(0.25, vector[1], np.array([])) == 1.0
    assert math.isclose(adaptive_alpha(0.25, vector[1], np.array([3.0])), 0.125 / (0.125 + 0.75))
    assert adaptive_alpha(0.25, np.array([0.4, 0.4]), np.array([2.0, 2.0])) == 0.25
    assert leg_confidence(np.array([0.4, 0.4])) == 0.0


def test_sessions_of_groups_consecutive_turns_with_one_time():
    from memini_bench.systems.reference import sessions_of

    t1, t2 = datetime(2023, 5, 1), datetime(2023, 6, 1)
    items = [Item("a1", "x", "g", t1), Item("a2", "y", "g", t1), Item("a3", "z", "g", t2), Item("b1", "w", "h", t2),
             Item("c1", "v", "h", None), Item("c2", "u", "h", None), Item("s1", "t", "h", None, session="S"),
             Item("s2", "r", "h", t1, session="S")]
    assert sessions_of(items).tolist() == [0, 0, 1, 2, 3, 4, 5, 5]


def test_reference_runs_on_the_sample_and_describes_every_setting(tmp_path):
    rc = _cli(["-suite", "sample", "-embedder", "hash", "-systems", "reference,hybrid", "-ref-session-weight", "0.2",
               "-ref-temporal-boost", "0.2", "-out", str(tmp_path), "-name", "ref"])
    assert rc == 0
    doc = json.loads((tmp_path / "memini-sample-ref.json").read_text())
    described = next(s for s in doc["config"]["systems"] if s["name"] == "reference")
    from memini_bench.core.settings import flag_fields
    from memini_bench.systems.reference_settings import ReferenceSettings

    for f in flag_fields(ReferenceSettings):
        assert f.name in described
    assert described["ref_session_weight"] == 0.2
    assert doc["config"]["identity"]["reference"]["ref_temporal_boost"] == 0.2
    assert {r["system"] for r in doc["results"]} >= {"reference", "memini-hybrid"}


def test_ref_flags_are_refused_where_unused_and_checked():
    from memini_bench.modes import check_given, selected_mode
    from memini_bench.modes.options import RunOptions

    opts = RunOptions.build({"suite": "sample", "embedder": "hash", "rerank": True, "ref_alpha": 0.3},
                            given=frozenset({"suite", "embedder", "rerank", "ref_alpha"}))
    with pytest.raises(BenchError, match="-ref-alpha: not used"):
        check_given(selected_mode(opts), opts)
    with pytest.raises(BenchError, match="local:PATH"):
        cli_options(ref_rerank_model="somemodel")


def test_sweep_axes_are_the_swept_systems_settings():
    from memini_bench.modes.sweep_grid import parse_grid
    from memini_bench.modes.sweep_targets import target_for
    from memini_bench.systems.reference_settings import ReferenceSettings

    axes = parse_grid("ref-stemmer=porter,snowball ref-alpha=0.3,0.5", ReferenceSettings)
    assert [a.values for a in axes] == [("porter", "snowball"), (0.3, 0.5)]
    with pytest.raises(BenchError, match="not a sweepable setting"):
        parse_grid("ref-alpha=0.3")  # the hybrid's axes
    with pytest.raises(BenchError, match="not a sweepable setting"):
        parse_grid("pool=30", ReferenceSettings)
    assert target_for(cli_options(systems="reference")).settings is ReferenceSettings
    assert target_for(cli_options()).system == "memini-hybrid"
    with pytest.raises(BenchError, match="sweeps one system"):
        target_for(cli_options(systems="reference,hybrid"))


def test_reference_sweep_cells_match_plain_runs(tmp_path):
    """A sweep cell's figures are those of an ordinary run with the cell's flags."""
    assert _cli(["-suite", "sample", "-embedder", "hash", "-systems", "reference", "-sweep",
                 "ref-fusion=minmax,rrf", "-out", str(tmp_path), "-resamples", "100"]) == 0
    summary = json.loads(next(tmp_path.glob("*-sweep-*/summary.json")).read_text())
    rrf = next(c for c in summary["tune"]["cells"] if c["cell"] == "ref-fusion=rrf")["scores"][0]
    assert _cli(["-suite", "sample", "-embedder", "hash", "-systems", "reference", "-ref-fusion", "rrf",
                 "-out", str(tmp_path), "-name", "plain"]) == 0
    plain = json.loads((tmp_path / "memini-sample-plain.json").read_text())["results"][0]
    same = ("recall_any@5", "recall_all@5", "mrr", "ndcg@5")
    assert plain["k"] == rrf["k"] == 5 and [plain["scores"][m] for m in same] == [rrf["scores"][m] for m in same]


def test_defaults_are_the_committed_selection():
    path = ROOT / "results" / "reference" / "selection.json"
    if not path.exists():
        pytest.skip("results/reference/selection.json not committed (make reference-search)")
    from memini_bench.modes.sweep_grid import parse_grid
    from memini_bench.systems.reference_settings import ReferenceSettings

    selected = json.loads(path.read_text())["selected"]
    defaults = ReferenceSettings()
    for axis in parse_grid(selected, ReferenceSettings):
        assert getattr(defaults, axis.field) == axis.values[0], axis.flag


class _LoadingEmbedder:
    """A hash-like embedder that 'loads a model' on its first call (``load_ms``, as the local models set it) and
    takes a little time per call, so the run's load and embed columns have something to show."""

    dims = 8
    max_chars = None
    identity = "loading-8d"

    def encode(self, texts):
        import time

        if not hasattr(self, "load_ms"):
            self.load_ms = 5.0
        time.sleep(0.02)
        return np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=self.dims) for t in texts])


def test_reference_reports_model_load_and_embedding_apart_from_its_ingest():
    """The ingest column's load and embed parts are the encoder's clock across the ingest that embedded the items;
    a second reference variant on the same store embeds nothing and reports 0 for both."""
    from memini_bench.core.dataset import Dataset, Question
    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.evaluation.runner import run_system
    from memini_bench.systems.lineup import build_systems

    encoder = TextEncoder(_LoadingEmbedder())
    ctx = cli_options().context(lambda: encoder)
    items = tuple(Item(f"{g}{i}", t, g) for i, (t, g) in enumerate(zip(TEXTS, GROUPS, strict=True)))
    ds = Dataset(name="tiny", items=items, questions=(Question("q", "who paints?", (items[1].id,), "a"),))
    first, second = build_systems(["reference"], ctx)[0], build_systems(["reference"], ctx)[0]
    before = encoder.clock()
    r1 = run_system(first, ds, depth=5, clock=encoder.clock)
    load, embed = encoder.clock()
    r2 = run_system(second, ds, depth=5, clock=encoder.clock)
    assert r1.model_load_ms == load - before[0] == 5.0
    assert r1.embed_ms > 0 and r1.embed_ms <= r1.ingest_ms
    assert (r2.model_load_ms, r2.embed_ms) == (0.0, 0.0)
    assert r1.store_ingest_ms >= 0
