"""Print the BEAM entries of memini_bench/data/catalog.json from a git clone of mohammadtavakoli78/BEAM.

    python cmd/beam_catalog.py /path/to/BEAM.git > /tmp/beam.json

For every tier folder (chats/100K, 500K, 1M, 10M) it lists, per chat, the chat file BEAM's answer_generation.py
reads (chat_trunecated.json when present, else chat.json) and probing_questions/probing_questions.json, with the
raw.githubusercontent.com URL at the clone's HEAD commit, the git blob id (sha1 of "blob <size>\\0" + bytes) and,
when the clone holds the blob's bytes, their size and SHA-256. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

REPO = "mohammadtavakoli78/BEAM"
TIERS = {"100K": "beam-100k", "500K": "beam-500k", "1M": "beam-1m", "10M": "beam-10m"}


def git(gitdir: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def blob_bytes(gitdir: str, blob: str) -> bytes | None:
    done = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "blob", blob], capture_output=True)
    return done.stdout if done.returncode == 0 else None


def main(gitdir: str) -> None:
    commit = git(gitdir, "rev-parse", "HEAD").decode().strip()
    listing = {}
    for line in git(gitdir, "ls-tree", "-r", "HEAD", "chats").decode().splitlines():
        meta, path = line.split("\t", 1)
        listing[path] = meta.split()[2]
    sets = []
    for tier, name in TIERS.items():
        parts = [p.split("/") for p in listing if p.startswith(f"chats/{tier}/")]
        chats = sorted({p[2] for p in parts if p[2].isdigit()}, key=int)
        files = []
        for chat in chats:
            base = f"chats/{tier}/{chat}"
            chat_file = next(f for f in ("chat_trunecated.json", "chat.json") if f"{base}/{f}" in listing)
            for rel in (chat_file, "probing_questions/probing_questions.json"):
                blob = listing[f"{base}/{rel}"]
                data = blob_bytes(gitdir, blob)
                url = f"https://raw.githubusercontent.com/{REPO}/{commit}/{base}/{rel}"
                entry = {"path": f"{chat}/{rel}", "urls": [url], "git_sha1": blob}
                if data is not None and hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob:
                    entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
                files.append(entry)
        have = sum("sha256" in f for f in files)
        sets.append({"name": name, "suite": "beam", "tier": tier, "chats": len(chats), "files": files,
                     "checksum_source": f"git tree of {REPO} at {commit}: blob ids for every file"
                                        + (f", size and SHA-256 of the {have} blobs whose bytes the clone held"
                                           if have else "; the clone held none of the bytes (size unknown)")})
    json.dump(sets, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
