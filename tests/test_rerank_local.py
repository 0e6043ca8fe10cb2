"""The local cross-encoder tier (``-rerank-model local:PATH``) with a tiny, randomly initialised BERT
cross-encoder built offline in the test (a vocabulary we write, no download)."""

from __future__ import annotations

import json

import pytest

from memini_bench.cli import main
from memini_bench.errors import BenchError
from memini_bench.rerankers import Candidate
from memini_bench.rerankers.crossencoder import LocalCrossEncoder, order_by_scores

WORDS = "the a is of to on what which who cache ttl database postgres auth token deploy helm minutes ten".split()


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    path = tmp_path_factory.mktemp("tiny-ce")
    (path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=128,
                                     num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


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
    doc = json.loads((tmp_path / "memini-sample-rerank-tier.json").read_text())
    assert doc["config"]["reranker"] == "cross-encoder" and doc["latency"]["rerank_added"]["p50_ms"] > 0
