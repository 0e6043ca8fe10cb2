"""``-executor ray``: embedding chunks and ``-sweep`` cells on Ray actors (behind the ``ray`` extra).

What runs where:

- **The driver** (this process) connects to ``RAY_ADDRESS`` when it is set (shipping this ``memini_bench`` package
  to the workers as a ``py_modules`` runtime env; the cluster must have the other dependencies installed), else
  starts a local cluster of this machine's CPUs (and GPUs) with this package on the workers' ``PYTHONPATH``; a
  cluster already started in this process (``ray.init`` by the caller, as the tests do) is used as it is. The
  driver loads data, validates every vector, writes the disk cache, keeps the memo, runs the systems of an ordinary
  run and writes every results file.
- **Embedding actors** (``chunk_map``): each builds the run's embedder once, from the picklable ``EmbedSettings``
  (``embed.factory.build_embedder``), and checks that its ``identity`` is the driver's (a worker that would embed
  differently, e.g. without bf16, is refused before a vector is cached). One actor per GPU of the cluster
  (``num_gpus=1``) when it has GPUs, else one per CPU (``num_cpus=1``); ``-ray-workers N`` sets the count. Each
  chunk of ``TextEncoder`` (up to 1,024 length-sorted texts) is cut into pieces of a multiple of the embedder's
  ``batch_size``, so sentence-transformers forms the same batches (the same padding) as a local run and the
  vectors are the same bits; each chunk's vectors come back whole and in order. The hash embedders (``hash``,
  ``fnv64``) stay in the driver: hashing is cheaper than a round trip.
- **Cell actors** (``map_stateful``): ``num_cpus=1`` each, one per CPU (or ``-ray-workers``); each builds its state
  once from one shared object (``ray.put``: for ``-sweep`` the prepared data sets and the driver's vectors) and runs
  items handed out as workers free up; results come back in item order.

Only one pool of actors lives at a time (a new pool ends the previous one), so a small cluster never waits on
itself. A ``BenchError`` raised in a worker is raised again in the driver as the same one line; a worker that dies
is a one-line error too.
"""

from __future__ import annotations

import logging
import math
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import ray

from memini_bench.errors import BenchError
from memini_bench.executors import ChunkMap, ExecutorOptions

PIECES_PER_WORKER = 4  # pieces of one chunk per worker: keeps every worker busy while the longest texts finish
IN_FLIGHT = 2  # calls queued on each actor, so it never idles between pieces


@ray.remote
class Worker:
    """One actor: ``make_state(state_arg)`` once, then ``work(state, item)`` per call."""

    def __init__(self, make_state: Callable[[Any], Any], state_arg: Any, work: Callable[[Any, Any], Any]) -> None:
        self.state = make_state(state_arg)
        self.work = work

    def info(self) -> object:
        return getattr(self.state, "identity", None)

    def run(self, item: Any) -> Any:
        return self.work(self.state, item)


def _embedder_state(settings: Any) -> Any:
    """The worker's embedder, its model loaded now (a local model's load then counts as the pool's start)."""
    from memini_bench.embed.factory import build_embedder

    embedder = build_embedder(settings)
    if isinstance(getattr(type(embedder), "model", None), property):
        _ = embedder.model
    return embedder


def _encode(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    return np.asarray(embedder.encode(list(texts)), dtype=np.float32)


def _get(ref: Any) -> Any:
    """``ray.get`` with a worker's BenchError raised again as itself and a dead worker as one line."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BenchError):
            raise BenchError(str(cause)) from None
        raise
    except ray.exceptions.RayActorError as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BenchError(f"-executor ray: a worker died ({why}); check the cluster's memory, or lower "
                         "-ray-workers") from None


def _probe(address: str, timeout_s: float = 5.0) -> None:
    """A TCP connection to ``RAY_ADDRESS``'s ``host:port`` (``ray://`` or not) within ``timeout_s``, so a wrong
    address is one line now rather than Ray's minutes of retries (``auto`` and other forms are left to Ray)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise BenchError(f"RAY_ADDRESS={address}: no Ray cluster answers there ({exc.strerror or exc}); fix the "
                         "address, or unset RAY_ADDRESS for a local cluster") from None


def ordered_map(actors: Sequence[Any], items: Sequence[Any]) -> Iterator[Any]:
    """``actor.run(item)`` for every item, handed to whichever actor is free (``IN_FLIGHT`` queued on each);
    results are yielded in item order."""
    free = [a for _ in range(IN_FLIGHT) for a in actors]
    pending: dict[Any, tuple[int, Any]] = {}
    done: dict[int, Any] = {}
    submitted = returned = 0
    while returned < len(items):
        while free and submitted < len(items):
            actor = free.pop(0)
            pending[actor.run.remote(items[submitted])] = (submitted, actor)
            submitted += 1
        if returned in done:
            yield done.pop(returned)
            returned += 1
            continue
        ready, _ = ray.wait(list(pending), num_returns=1)
        index, actor = pending.pop(ready[0])
        done[index] = _get(ready[0])
        free.append(actor)


def piece_size(chunk: int, workers: int, batch: int) -> int:
    """Texts per piece: about ``PIECES_PER_WORKER`` pieces per worker, rounded up to a multiple of ``batch``."""
    return batch * max(1, math.ceil(chunk / (workers * PIECES_PER_WORKER * batch)))


class RayExecutor:
    """``-executor ray`` (see the module docstring)."""

    name = "ray"

    def __init__(self, options: ExecutorOptions) -> None:
        self.options = options
        self.address = self._connect()
        resources = ray.cluster_resources()
        self.cluster_cpus = int(resources.get("CPU", 0))
        self.cluster_gpus = int(resources.get("GPU", 0))
        self._pool: tuple[object, list] | None = None
        self.workers(False), self.workers(self.cluster_gpus > 0)  # a -ray-workers the cluster cannot hold: now

    def _connect(self) -> str:
        if ray.is_initialized():
            return "existing"
        address = os.environ.get("RAY_ADDRESS", "")
        package = Path(__file__).resolve().parent
        if address:
            runtime_env: dict = {"py_modules": [str(package)]}
        else:
            path = os.pathsep.join(p for p in (str(package.parent), os.environ.get("PYTHONPATH", "")) if p)
            runtime_env = {"env_vars": {"PYTHONPATH": path}}
        if address:
            _probe(address)
        try:
            ray.init(address=address or "local", include_dashboard=False, logging_level=logging.ERROR,
                     runtime_env=runtime_env)
        except Exception as exc:  # ray raises ConnectionError, ValueError, RuntimeError... for a bad address
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if address:
                raise BenchError(f"RAY_ADDRESS={address}: cannot connect to the Ray cluster ({why}); fix the "
                                 "address, or unset RAY_ADDRESS for a local cluster") from None
            raise BenchError(f"-executor ray: cannot start a local Ray cluster ({why})") from None
        return address or "local"

    def workers(self, gpu: bool) -> int:
        """Actors per pool: ``-ray-workers``, else one per GPU (``gpu``) or per CPU of the cluster."""
        have = self.cluster_gpus if gpu else self.cluster_cpus
        unit = "GPUs" if gpu else "CPUs"
        if self.options.ray_workers > have:
            raise BenchError(f"-ray-workers {self.options.ray_workers}: the Ray cluster has {have} {unit}; use at "
                             f"most {have} (or 0 for one per {unit[:-1]})")
        return max(1, self.options.ray_workers or have)

    def describe(self) -> dict[str, object]:
        gpu = self.cluster_gpus > 0
        return {"name": "ray", "address": self.address, "workers": self.workers(False),
                "embed_workers": self.workers(gpu), "embed_device": "gpu" if gpu else "cpu",
                "cluster_cpus": self.cluster_cpus, "cluster_gpus": self.cluster_gpus,
                "note": "embedding ran on the workers (hash embedders: in the driver); -sweep cells too, so their "
                        "per-question latencies are the workers'"}

    def _actors(self, key: object, make_state, state_arg, work, count: int, gpu: bool) -> list:
        """The pool for ``key`` (kept while the same key asks again); any other pool is ended first."""
        if self._pool is not None and self._pool[0] == key and key is not None:
            return self._pool[1]
        self.close()
        arg = ray.put(state_arg)
        worker = Worker.options(num_cpus=1, num_gpus=1 if gpu else 0)
        actors = [worker.remote(make_state, arg, work) for _ in range(count)]
        self._pool = (key, actors)
        return actors

    def chunk_map(self, settings: Any, embedder: Any) -> ChunkMap | None:
        from memini_bench.embed.hashing import HashEmbedder, VetoHashEmbedder

        if isinstance(embedder, HashEmbedder | VetoHashEmbedder):
            return None
        gpu = self.cluster_gpus > 0
        batch = int(getattr(embedder, "batch_size", 1) or 1)

        def run(chunks: Sequence[Sequence[str]]) -> Iterator[np.ndarray]:
            workers = self.workers(gpu)
            fresh = self._pool is None or self._pool[0] != ("embed", settings)
            actors = self._actors(("embed", settings), _embedder_state, settings, _encode, workers, gpu)
            if fresh:
                for identity in _get([a.info.remote() for a in actors]):
                    if identity != embedder.identity:
                        self.close()
                        raise BenchError(f"-executor ray: a worker's embedder is {identity!r}, the driver's "
                                         f"{embedder.identity!r}; give the workers the same model, packages and "
                                         "device kind (or use -executor local)")
            pieces: list[tuple[int, list[str]]] = []
            for n, chunk in enumerate(chunks):
                size = piece_size(len(chunk), workers, batch)
                pieces += [(n, list(chunk[i:i + size])) for i in range(0, len(chunk), size)]
            parts: list[np.ndarray] = []
            current = 0
            for (n, _), vectors in zip(pieces, ordered_map(actors, [p for _, p in pieces]), strict=True):
                if n != current:
                    yield np.concatenate(parts)
                    parts, current = [], n
                parts.append(vectors)
            if parts:
                yield np.concatenate(parts)

        return run

    def map_stateful(self, make_state, state_arg, work, items):
        items = list(items)
        if not items:
            return []
        actors = self._actors(None, make_state, state_arg, work, min(self.workers(False), len(items)), False)
        try:
            return list(ordered_map(actors, items))
        finally:
            self.close()

    def close(self) -> None:
        """End the live pool's actors (the cluster connection stays for the rest of the process)."""
        if self._pool is not None:
            for actor in self._pool[1]:
                ray.kill(actor)
            self._pool = None


def make(options: ExecutorOptions) -> RayExecutor:
    return RayExecutor(options)
