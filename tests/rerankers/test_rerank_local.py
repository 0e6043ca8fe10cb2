"""The local cross-encoder tier (``-rerank-model local:PATH``) with a tiny, randomly initialised BERT
cross-encoder built offline in the test (a vocabulary we write, no download)."""

from __future__ import annotations

import json

import pytest
from cli_opts import cli_options

from memini_bench.cli import main
from memini_bench.errors import BenchError
from memini_bench.rerankers import Candidate
from memini_bench.rerankers.crossencoder import LocalCrossEncoder, order_by_scores

WORDS = "the a is of to on what which who cache ttl database postgres auth token deploy helm minutes ten".split()


def _tiny_model(tmp_path_factory, num_labels):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    path = tmp_path_factory.mktemp(f"tiny-ce-{num_labels}")
    (path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=128,
                                     num_labels=num_labels)
    transformers.BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    return _tiny_model(tmp_path_factory, 1)


def test_local_scores_match_sentence_transformers(tiny_cross_encoder):
    from sentence_transformers import CrossEncoder

    cands = [Candidate("a", "postgres is the database"), Candidate("b", "the cache ttl is ten minutes"),
             Candidate("c", "auth token"), Candidate("d", "x" * 50)]
    ce = LocalCrossEncoder(str(tiny_cross_encoder), max_doc_chars=10)
    scores = ce.scores("what is the cache ttl", cands)
    expected = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict(
        [("what is the cache ttl", c.content[:10]) for c in cands])       # each document cut to 10 characters
    assert scores == pytest.approx(dict(zip("abcd", map(float, expected), strict=True)), abs=1e-6)
    assert ce.rerank("what is the cache ttl", cands) == order_by_scores(scores)


def test_unloadable_folder_is_one_line(tmp_path):
    pytest.importorskip("sentence_transformers",
                        reason="the minilm extra is not installed: pip install 'memini-bench[minilm]'")
    with pytest.raises(BenchError, match="cannot load a cross-encoder there") as exc:
        LocalCrossEncoder(str(tmp_path)).rerank("q", [Candidate("a", "x"), Candidate("b", "y")])
    assert "\n" not in str(exc.value)


def test_cli_rerank_tier_with_a_local_model(tiny_cross_encoder, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["-suite", "sample", "-embedder", "hash", "-rerank-model", f"local:{tiny_cross_encoder}",
              "-out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    assert "| all | baseline | 8 |" in out and "| all | cross-encoder | 8 |" in out
    doc = json.loads((tmp_path / "memini-sample-rerank-tier-cross-encoder-emb-hash.json").read_text())
    assert doc["config"]["reranker"] == "cross-encoder" and doc["latency"]["rerank_added"]["p50_ms"] > 0


def test_multi_label_model_is_refused_at_load(tmp_path_factory, tmp_path, capsys):
    """An NLI-style head (3 labels) used to crash in float(v) on the first question."""
    path = _tiny_model(tmp_path_factory, 3)
    with pytest.raises(BenchError, match="has 3 output labels") as exc:
        LocalCrossEncoder(str(path)).load()
    assert "\n" not in str(exc.value)
    capsys.readouterr()
    with pytest.raises(SystemExit) as code:
        main(["-suite", "sample", "-embedder", "hash", "-rerank-model", f"local:{path}", "-out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code.value.code == 2 and "has 3 output labels" in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("flag", "expected"), [("cpu", "cpu"), ("cuda", "cuda"), ("auto", None)])
def test_device_reaches_the_local_cross_encoder(tiny_cross_encoder, monkeypatch, flag, expected):
    """-device used to be ignored (always CPU)."""
    import sentence_transformers
    import torch

    from memini_bench.modes.rerank_tier import reranker_from

    seen = []

    class FakeCrossEncoder:
        num_labels = 1

        def __init__(self, path, *, device, local_files_only):
            seen.append(device)

    monkeypatch.setattr(sentence_transformers, "CrossEncoder", FakeCrossEncoder)
    reranker = reranker_from(cli_options(device=flag, rerank_model=f"local:{tiny_cross_encoder}"), llm=False)
    reranker.load()
    assert seen == [expected or ("cuda" if torch.cuda.is_available() else "cpu")]
