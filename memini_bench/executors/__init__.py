"""Where a run's work runs: ``-executor local`` (this process, the default) or ``-executor ray`` (a Ray cluster).

An executor is a registered plug point (``registry.EXECUTORS``: the built-ins ``local`` and ``ray``, the latter
behind the ``ray`` extra, plus ``memini_bench.executors`` entry points). Its factory is
``make(options: ExecutorOptions) -> Executor``. Two kinds of work can leave the driver:

- **embedding** (``chunk_map``): ``embed.encoder.TextEncoder`` hands it the length-sorted chunks it would embed
  and gets each chunk's raw vectors back, in order. Validation, the disk cache writes and the memo stay in the
  driver, so a worker never writes the cache. ``None`` = embed in this process (the local path, unchanged).
- **independent runs** (``map_stateful``): each worker builds its state once with ``make_state(state_arg)``, then
  runs ``work(state, item)`` per item; results come back in item order. ``-sweep`` runs its cells this way.

``local`` does both in this process, one after another. Executors change where work runs, never a number: they
are recorded in the results config (``describe``) but not in the identity, so file names do not change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memini_bench.core.registry import EXECUTORS
from memini_bench.core.settings import Int, setting
from memini_bench.errors import BenchError

if TYPE_CHECKING:  # at run time only run_encoder needs the embedders: the flags (ExecutorOptions) stay light
    import numpy as np

    from memini_bench.embed.encoder import TextEncoder
    from memini_bench.embed.settings import EmbedSettings

ChunkMap = Callable[[Sequence[Sequence[str]]], Iterator["np.ndarray"]]


@dataclass(frozen=True)
class ExecutorOptions:
    """Which executor runs the work that can leave the driver (embedding, sweep cells)."""

    GROUP = "execution"

    executor: str = setting("executor", "local", "Where embedding and -sweep cells run: local (this process) or ray "
                            "(RAY_ADDRESS, else a local Ray cluster; needs the ray extra). Same numbers either way.")
    ray_workers: int = setting("ray-workers", 0, "With -executor ray: workers per pool (0 = one per GPU of the "
                               "cluster for embedding, else one per CPU).", type=Int(min=0, max=4096))

    def __post_init__(self) -> None:
        if not EXECUTORS.known(self.executor):
            raise EXECUTORS.unknown_error(self.executor)
        if self.ray_workers and EXECUTORS.canonical(self.executor) != "ray":
            raise BenchError(f"-ray-workers: used by -executor ray only (not {self.executor}); drop it")


@runtime_checkable
class Executor(Protocol):
    """What an executor provides (see the module docstring)."""

    name: str

    def describe(self) -> dict[str, object]: ...

    def chunk_map(self, settings: Any, embedder: Any) -> ChunkMap | None: ...

    def map_stateful(self, make_state: Callable[[Any], Any], state_arg: Any, work: Callable[[Any, Any], Any],
                     items: Sequence[Any]) -> list[Any]: ...


class LocalExecutor:
    """Everything in this process, in order: embedding stays in ``TextEncoder`` (``chunk_map`` is None)."""

    name = "local"
    parallel = False

    def describe(self) -> dict[str, object]:
        return {"name": "local"}

    def chunk_map(self, settings: Any, embedder: Any) -> ChunkMap | None:
        return None

    def map_stateful(self, make_state, state_arg, work, items):
        state = make_state(state_arg)
        return [work(state, item) for item in items]


def make_local(options: ExecutorOptions) -> Executor:
    return LocalExecutor()


_ACTIVE: dict[ExecutorOptions, Executor] = {}


def executor_for(options: ExecutorOptions | None = None) -> Executor:
    """The executor ``options`` name, made once per process and options (a Ray connection is opened once); a
    missing optional package is the registry's one-line error naming the extra."""
    options = options or ExecutorOptions()
    if options not in _ACTIVE:
        factory = EXECUTORS.get(options.executor)
        if not callable(factory):
            raise BenchError(f"-executor {options.executor}: not a factory (a callable taking ExecutorOptions)")
        made = factory(options)
        if not isinstance(made, Executor):
            raise BenchError(f"-executor {options.executor}: its factory returned {type(made).__name__}, not an "
                             "Executor (name, describe, chunk_map, map_stateful)")
        _ACTIVE[options] = made
    return _ACTIVE[options]


def describe(options: ExecutorOptions | None = None) -> dict[str, object]:
    """What a results config records about where the run's work ran (``{"name": "local"}`` by default)."""
    if options is None or options == ExecutorOptions():
        return {"name": "local"}
    return executor_for(options).describe()


def run_encoder(embed: EmbedSettings, executor: ExecutorOptions | None = None) -> TextEncoder:
    """The run's ``TextEncoder`` (``embed.factory.build_encoder``) with the executor's ``chunk_map`` attached."""
    from memini_bench.embed.factory import build_encoder

    encoder = build_encoder(embed)
    if executor is not None and executor != ExecutorOptions():
        encoder.chunk_map = executor_for(executor).chunk_map(embed, encoder.embedder)
    return encoder
