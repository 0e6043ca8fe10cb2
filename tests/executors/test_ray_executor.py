"""-executor ray on a local 2-CPU Ray cluster (slow: starting Ray and its workers takes seconds).

The local run is the oracle: MiniLM vectors embedded through Ray actors must be the same bits as those embedded
in this process, and a -sweep run on Ray workers must give every per-question ranking (ids and scores) of the local
sweep, with the same results files.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_opts import cli_options

from memini_bench import executors
from memini_bench.cli import main
from memini_bench.embed import encoder as encoder_module
from memini_bench.embed.factory import EmbedSettings, build_encoder

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    executors._ACTIVE.clear()
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    executors._ACTIVE.clear()
    ray.shutdown()


def test_minilm_vectors_from_ray_workers_are_the_local_bits(cluster, locomo, monkeypatch):
    pytest.importorskip("sentence_transformers")
    monkeypatch.setattr(encoder_module, "CHUNK", 128)  # several chunks, each cut into batch-aligned pieces
    texts = list(dict.fromkeys(item.content for item in locomo.items))[:300]
    local = build_encoder(EmbedSettings(embedder="minilm", no_cache=True)).documents(texts)
    opts = cli_options(embedder="minilm", no_cache=True, executor="ray")
    encoder = executors.run_encoder(opts.embed, opts.executor)
    assert encoder.chunk_map is not None
    remote = encoder.documents(texts)
    assert encoder.embedder._model is None  # the driver never loaded the model: the workers embedded
    assert remote.dtype == np.float32 and np.array_equal(local, remote)
    assert executors.executor_for(opts.executor).describe()["embed_workers"] == 2


def test_a_sweep_on_ray_workers_gives_the_local_rankings_and_files(cluster, locomo_path, tmp_path, capsys):
    from memini_bench.modes.sweep import CellRunner, apply
    from memini_bench.modes.sweep_grid import cells, label, parse_grid

    grid_text = "pool=30,50 fusion=0.5,-1"
    axes = parse_grid(grid_text)
    grid = cells(axes)
    labels = [label(axes, c) for c in grid]
    runs = {}
    for name in ("local", "ray"):
        opts = cli_options(suite="locomo", data=str(locomo_path), limit=100, embedder="hash", executor=name)
        runs[name] = CellRunner().run_many([apply(opts, c, axes, "all") for c in [(), *grid]], labels, "all")
    for local, remote in zip(runs["local"], runs["ray"], strict=True):
        assert len(local.questions) == 100
        assert [(q.question.id, q.ranked_ids, q.scores) for q in local.questions] == \
            [(q.question.id, q.ranked_ids, q.scores) for q in remote.questions]

    docs = {}
    for name in ("local", "ray"):
        args = ["-suite", "locomo", "-data", str(locomo_path), "-limit", "100", "-embedder", "hash", "-sweep",
                grid_text, "-resamples", "200", "-out", str(tmp_path / name), "-executor", name]
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == 0, capsys.readouterr().err
        folder = tmp_path / name / "locomo-limit100-emb-hash-sweep-pool-fusion"
        docs[name] = {p.name: json.loads(p.read_text()) for p in folder.glob("*.json")}
    assert sorted(docs["local"]) == sorted(docs["ray"])  # the executor changes no file name

    def numbers(doc: dict) -> list:
        return [{k: v for k, v in row.items() if not k.endswith("_ms")} for row in doc["results"]]

    for file_name, local in docs["local"].items():
        remote = docs["ray"][file_name]
        if file_name == "summary.json":
            assert local["tune"]["significance"] == remote["tune"]["significance"]
            assert remote["config"]["executor"]["name"] == "ray"
            continue
        assert numbers(local) == numbers(remote)
        assert local["config"]["identity"] == remote["config"]["identity"]
        assert local["config"]["executor"] == {"name": "local"} and remote["config"]["executor"]["workers"] == 2
