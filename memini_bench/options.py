"""The run's settings, one field per CLI flag (same names, ``-pool-factor`` -> ``pool_factor``)."""

from __future__ import annotations

from dataclasses import dataclass, field


def parse_ks(text: str) -> list[int]:
    """memini's -k: comma-separated; non-positive or unparsable entries dropped; empty -> [5]; sorted, unique."""
    ks = set()
    for part in text.split(","):
        try:
            k = int(part.strip())
        except ValueError:
            continue
        if k > 0:
            ks.add(k)
    return sorted(ks) or [5]


@dataclass(frozen=True)
class RunOptions:
    suite: str = "sample"
    data: str = ""
    k: tuple[int, ...] = (5,)
    dims: int = 256
    limit: int = 0
    out: str = "results"
    fusion: float = 0.5
    pool_factor: int = 0
    pool_floor: int = 0
    semantic_reserve: int = 0
    temporal_boost: float = 0.0
    temporal_extractor: str = "regex"
    holdout: str = "all"
    session_doc: str = "full"
    abstention: str = "exclude"
    shared_haystack: bool = False
    keyword_backend: str = "numpy"
    embedder: str = "auto"
    max_tokens: int = 0
    batch_size: int = 64
    device: str = "auto"
    cache_dir: str = ""
    no_cache: bool = False
    reinforce: bool = False
    systems: tuple[str, ...] = ()
    per_question: str = ""
    trec: str = ""
    no_write: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def embed_settings(self):
        from memini_bench.embed.factory import EmbedSettings

        return EmbedSettings(name=self.embedder, dims=self.dims, max_tokens=self.max_tokens,
                             batch_size=self.batch_size, device=self.device, cache_dir=self.cache_dir,
                             no_cache=self.no_cache)

    @property
    def depth(self) -> int:
        """The recall depth: the largest K (memini recalls once at max K and scores every K from that list)."""
        return max(self.k)
