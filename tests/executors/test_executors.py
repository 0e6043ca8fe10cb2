"""-executor: the option's plumbing, the executor contract (through a pickling stand-in, no Ray) and the refusals.

The Ray executor itself is exercised by the slow tests in test_ray_executor.py (they start a local Ray cluster).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_opts import cli_options
from cli_run import run_cli, untimed

from memini_bench import executors
from memini_bench.core.registry import EXECUTORS
from memini_bench.embed import encoder as encoder_module
from memini_bench.embed.factory import EmbedSettings, build_encoder
from memini_bench.embed.shipped import ShippedVectors
from memini_bench.errors import BenchError

SAMPLE = ["-suite", "sample", "-embedder", "hash"]
PICKLING = "pickling_executor:make"


@pytest.fixture(autouse=True)
def _fresh_executors():
    executors._ACTIVE.clear()
    yield
    executors._ACTIVE.clear()


@pytest.mark.parametrize(("args", "fragment"), [
    (["-executor", "nope"], "-executor 'nope': unknown executor; use one of local, ray"),
    (["-executor", "ray", "-rerank"], "-executor: not used by -rerank"),
    (["-executor", "local", "-multihop"], "-executor: not used by -multihop"),
    (["-ray-workers", "2"], "-ray-workers: used by -executor ray only"),
    (["-ray-workers", "-1", "-executor", "ray"], "below the allowed minimum 0"),
])
def test_bad_or_unused_executor_flags_are_one_line(args, fragment, tmp_path, capsys):
    code, out, err = run_cli([*SAMPLE, "-out", str(tmp_path / "out"), *args], capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1, err
    assert not out and not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", [[], ["-sweep", "fusion=0.5,-1"]])
def test_ray_without_its_package_is_the_extra_line(mode, tmp_path, capsys):
    """The registry's own import failure (a module that is not installed, as ``ray`` is not where the extra is
    missing): one line naming the extra, exit 2, nothing written."""
    saved = EXECUTORS._entries["ray"]
    EXECUTORS.add("ray", "ray_is_not_installed_here.executor:make", saved.help, extra="ray")
    try:
        code, out, err = run_cli([*SAMPLE, "-out", str(tmp_path / "out"), "-executor", "ray", *mode], capsys)
    finally:
        EXECUTORS._entries["ray"] = saved
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "ray needs the ray extra" in err and "pip install 'memini-bench[ray]'" in err
    assert not out and not (tmp_path / "out").exists()


def test_the_executor_is_recorded_but_changes_no_name_or_identity(tmp_path, capsys):
    docs = {}
    for name, extra in (("local", []), ("plugin", ["-executor", PICKLING])):
        code, _, err = run_cli([*SAMPLE, "-out", str(tmp_path / name), *extra], capsys)
        assert code == 0, err
        docs[name] = json.loads((tmp_path / name / "memini-sample-emb-hash.json").read_text())
    local, plugin = docs["local"]["config"], docs["plugin"]["config"]
    assert local["executor"] == {"name": "local"} and plugin["executor"] == {"name": "pickling"}
    assert local["identity"] == plugin["identity"]
    assert untimed(docs["local"]["results"]) == untimed(docs["plugin"]["results"])


def test_chunk_map_embeds_elsewhere_and_the_driver_keeps_validation_cache_and_memo(tmp_path, monkeypatch):
    monkeypatch.setattr(encoder_module, "CHUNK", 10)  # several chunks, each cut into pieces by the executor
    texts = [f"memory number {i} about {'deploys' if i % 3 else 'alerts'} " * (1 + i % 5) for i in range(37)]
    settings = {"embedder": "hash", "dims": 64}
    local = build_encoder(EmbedSettings(**settings))
    opts = cli_options(**settings, executor=PICKLING)
    remote = executors.run_encoder(opts.embed, opts.executor)
    assert remote.chunk_map is not None
    assert np.array_equal(local.documents(texts), remote.documents(texts))
    assert executors.executor_for(opts.executor).calls["pieces"] == 2 + 2 + 2 + 1  # chunks 10, 10, 10, 7; pieces of 7
    assert remote.embedded == 37 and remote.documents(texts[:3]).shape == (3, 64)  # memo hits: nothing sent
    assert executors.executor_for(opts.executor).calls["pieces"] == 7

    def zeros(chunks):
        for chunk in chunks:
            yield np.zeros((len(chunk), 64), dtype=np.float32)

    remote.chunk_map = zeros
    with pytest.raises(BenchError, match="vectors are all zeros"):
        remote.documents(["a text no one embedded yet"])  # a worker's bad vector is refused in the driver


def test_shipped_vectors_rebuild_the_memo_and_refuse_to_embed():
    driver = build_encoder(EmbedSettings(embedder="hash", dims=32))
    vectors = driver.documents(["alpha", "beta"])
    worker = ShippedVectors.of(driver).encoder()
    assert np.array_equal(worker.documents(["beta", "alpha"]), vectors[::-1])
    with pytest.raises(BenchError, match="reached a worker without the driver's vectors"):
        worker.documents(["gamma"])


def test_a_sweep_through_an_executor_gives_the_local_rankings(locomo_path):
    """The -executor ray path of -sweep (prepare in the driver, ship data sets and vectors, one runner per
    worker) through the pickling stand-in: every per-question ranking and score equals the local sweep's."""
    from memini_bench.modes.sweep import CellRunner, apply
    from memini_bench.modes.sweep_grid import cells, label, parse_grid

    axes = parse_grid("pool=30,50 fusion=0.5,-1")
    grid = cells(axes)
    labels = [label(axes, c) for c in grid]
    runs = {}
    for name in ("local", PICKLING):
        opts = cli_options(suite="locomo", data=str(locomo_path), limit=60, embedder="hash", executor=name)
        runs[name] = CellRunner().run_many([apply(opts, c, axes, "all") for c in [(), *grid]], labels, "all")
    assert executors.executor_for(cli_options(executor=PICKLING).executor).calls["items"] == 1 + len(grid)
    for local, shipped in zip(runs["local"], runs[PICKLING], strict=True):
        assert len(local.questions) == 60
        assert [(q.question.id, q.ranked_ids, q.scores) for q in local.questions] == \
            [(q.question.id, q.ranked_ids, q.scores) for q in shipped.questions]


def test_a_ray_address_where_nothing_answers_is_one_line_at_once(monkeypatch, tmp_path, capsys):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # loopback, a port nothing listens on
    code, out, err = run_cli([*SAMPLE, "-out", str(tmp_path / "out"), "-executor", "ray"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "RAY_ADDRESS=127.0.0.1:1: no Ray cluster answers there" in err and "unset RAY_ADDRESS" in err
    assert not out and not (tmp_path / "out").exists()
