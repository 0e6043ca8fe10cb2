"""A user's run never touches the committed results and its outputs are one unit (issue 21, items 1, 2 and 5):
the default output folder is runs/; a results file's identity covers the data's sha256, the K list, the
embedder and each system's settings, and a clash is refused before any system ingests anything; the results
JSON, per-question JSONL, TREC files and plots of one run are placed together, none left after a failure or an
interrupt, earlier files intact; -per-question equal to the results file is refused; TREC run names are
one-to-one."""

from __future__ import annotations

import hashlib
import json
import os
import signal
from pathlib import Path

import pytest
from cli_run import run_cli

from memini_bench.errors import BenchError
from memini_bench.results.atomic_io import RunOutputs, atomic_write
from memini_bench.results.write import trec_run_names

SAMPLE = Path(__file__).resolve().parents[2] / "memini_bench" / "data" / "sample.json"
HASH = ["-suite", "file", "-data", str(SAMPLE), "-embedder", "hash"]

PLUGIN = '''
from memini_bench.core.contract import Hit

MARKER = {marker!r}

class Marked:
    name = "marked"
    def ingest(self, items):
        open(MARKER, "a").write("ingested\\n")
        self.items = list(items)
    def recall(self, group, query, k, *, now=None, context=None):
        return [Hit((it.id,), 1.0, it.content) for it in self.items if it.group == group][:k]

def make(ctx):
    return Marked()
'''


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_a_run_without_out_writes_into_runs_not_results(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli([*HASH], capsys)
    assert code == 0, err
    assert _files(tmp_path) == {"runs/memini-sample-emb-hash.json"}


def _hashed(out: Path, stem: str, run_folder: Path) -> Path:
    """The hashed name a run's results take beside ``<stem>.json``: the first 8 hex digits of the SHA-256 of the
    identity that the same run recorded in ``run_folder`` (computed here from the file, not by the harness)."""
    ident = json.loads((run_folder / f"{stem}.json").read_text())["config"]["identity"]
    canonical = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return out / f"{stem}-{hashlib.sha256(canonical).hexdigest()[:8]}.json"


def test_runs_the_name_cannot_tell_apart_get_a_hashed_name_and_nothing_is_lost(tmp_path, capsys):
    marker = tmp_path / "marker"
    plugin = tmp_path / "marked.py"
    plugin.write_text(PLUGIN.format(marker=str(marker)))
    out = tmp_path / "out"
    base = [*HASH, "-systems", f"{plugin}:make", "-out", str(out), "-name", "mine"]
    assert run_cli([*base, "-k", "5"], capsys)[0] == 0
    first = (out / "memini-sample-mine.json").read_bytes()
    ident = json.loads(first)["config"]["identity"]
    assert ident["run"]["ks"] == [5] and len(ident["run"]["data_sha256"]) == 64
    assert ident["run"]["system_settings"] == [{"name": "marked"}]
    assert json.loads(first)["config"]["command"].startswith("memini-bench -suite file -data ")   # provenance
    code, _, err = run_cli([*base, "-k", "5,10"], capsys)           # another K list, same readable name
    alone = tmp_path / "alone"                                       # the same run where nothing is in the way
    assert run_cli([*base[:-4], "-out", str(alone), "-name", "mine", "-k", "5,10"], capsys)[0] == 0
    hashed = _hashed(out, "memini-sample-mine", alone)
    assert code == 0 and f"this run writes {hashed}" in err and "(run)" in err
    assert json.loads(hashed.read_text())["config"]["identity"]["run"]["ks"] == [5, 10]
    edited = tmp_path / "sample.json"
    doc = json.loads(SAMPLE.read_text())
    doc["items"][0]["content"] += " (edited)"
    edited.write_text(json.dumps(doc))
    code, _, err = run_cli([*[a if a != str(SAMPLE) else str(edited) for a in base], "-k", "5"], capsys)
    assert code == 0 and "this run writes" in err                   # the data file's sha256 differs
    assert (out / "memini-sample-mine.json").read_bytes() == first
    assert len(_files(out)) == 3
    assert run_cli([*base, "-k", "5"], capsys)[0] == 0              # the same run again: its own file, replaced
    assert run_cli([*base, "-k", "5,10"], capsys)[0] == 0           # and the same hashed file again
    assert len(_files(out)) == 3 and json.loads((out / "memini-sample-mine.json").read_text())["config"][
        "identity"] == ident


def test_a_hashed_name_holding_another_file_is_refused_before_any_system_ingests(tmp_path, capsys):
    marker = tmp_path / "marker"
    plugin = tmp_path / "marked.py"
    plugin.write_text(PLUGIN.format(marker=str(marker)))
    out, alone = tmp_path / "out", tmp_path / "alone"
    base = [*HASH, "-systems", f"{plugin}:make"]
    assert run_cli([*base, "-k", "5", "-out", str(out)], capsys)[0] == 0       # takes the readable name
    assert run_cli([*base, "-k", "5,10", "-out", str(alone)], capsys)[0] == 0
    hashed = _hashed(out, "memini-sample-sys-marked", alone)
    hashed.write_text("{}")                                                      # a foreign file there
    marker.write_text("")
    code, _, err = run_cli([*base, "-k", "5,10", "-out", str(out)], capsys)
    last = err.strip().splitlines()[-1]
    assert code == 2 and str(hashed) in last and "other settings (no identity)" in last, err
    assert marker.read_text() == "" and hashed.read_text() == "{}"              # refused before any ingest


def test_per_question_equal_to_the_results_file_is_refused_first(tmp_path, capsys):
    out = tmp_path / "out"
    code, _, err = run_cli([*HASH, "-out", str(out), "-per-question", str(out / "memini-sample-emb-hash.json")],
                           capsys)
    assert code == 2 and "-per-question" in err and "is this run's results file" in err
    assert not out.exists() or _files(out) == set()


def test_trec_run_names_are_one_to_one():
    names = trec_run_names(["x/y", "x_y", "memini-hybrid"])
    assert names["memini-hybrid"] == "memini-hybrid" and names["x_y"] == "x_y"
    assert names["x/y"].startswith("x_y-") and len(set(names.values())) == 3


def test_two_systems_whose_safe_names_meet_write_two_trec_files(tmp_path, capsys):
    plugin = tmp_path / "twins.py"
    plugin.write_text(PLUGIN.format(marker=str(tmp_path / "m")).replace('name = "marked"', "name = NAME").replace(
        "class Marked:", "NAME = 'x'\nclass Marked:") + '''

def make_slash(ctx):
    s = Marked(); s.name = "x/y"; return s

def make_under(ctx):
    s = Marked(); s.name = "x_y"; return s
''')
    code, _, err = run_cli([*HASH, "-systems", f"{plugin}:make_slash,{plugin}:make_under", "-out", str(tmp_path / "o"),
                            "-trec", str(tmp_path / "trec")], capsys)
    assert code == 0, err
    runs = sorted(p.name for p in (tmp_path / "trec").glob("*.run"))
    assert len(runs) == 2 and any(".x_y.run" in r for r in runs)


def test_outputs_are_placed_together_at_the_end(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "sub" / "b.jsonl"
    with RunOutputs():
        atomic_write(a, lambda w: w(b"A"))
        atomic_write(b, lambda w: w(b"B"))
        assert not a.exists() and not b.exists()                     # staged, not placed
    assert a.read_bytes() == b"A" and b.read_bytes() == b"B"
    assert _files(tmp_path) == {"a.json", "sub/b.jsonl"}            # no temp file left


def test_a_failure_or_an_interrupt_leaves_none_of_the_runs_files(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(b"earlier")
    with pytest.raises(BenchError), RunOutputs():
        atomic_write(a, lambda w: w(b"new"))
        raise BenchError("the run failed after writing a.json")
    assert a.read_bytes() == b"earlier" and _files(tmp_path) == {"a.json"}
    # Python's own Ctrl-C handler for this part, whatever an earlier test's library left installed, and the signal
    # raised in this thread (delivered and handled before raise_signal returns)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), RunOutputs():
            atomic_write(a, lambda w: w(b"new"))
            atomic_write(b, lambda w: w(b"new"))
            signal.raise_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert a.read_bytes() == b"earlier" and _files(tmp_path) == {"a.json"}


def test_a_destination_that_cannot_take_its_file_undoes_the_files_placed_before(tmp_path, monkeypatch):
    from memini_bench.results import atomic_io

    a, b, blocked = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "blocked"
    a.write_bytes(b"earlier")
    (blocked / "inside").mkdir(parents=True)                         # a folder where a file should go
    with pytest.raises(BenchError, match="is a folder"), RunOutputs():
        atomic_write(a, lambda w: w(b"new"))
        atomic_write(blocked, lambda w: w(b"new"))
    assert a.read_bytes() == b"earlier" and _files(tmp_path) == {"a.json"}
    real, calls = os.replace, []

    def failing(src, dst):                                           # the disk fills while b.json is placed
        calls.append(dst)
        if Path(dst) == b:
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(atomic_io.os, "replace", failing)
    with pytest.raises(BenchError, match="none of them was kept"), RunOutputs():
        atomic_write(a, lambda w: w(b"new"))
        atomic_write(b, lambda w: w(b"new"))
    assert a.read_bytes() == b"earlier" and _files(tmp_path) == {"a.json"} and (blocked / "inside").is_dir()


def test_one_path_twice_in_one_run_is_refused(tmp_path):
    with pytest.raises(BenchError, match="two outputs of this run are this one file"), RunOutputs():
        atomic_write(tmp_path / "x", lambda w: w(b"1"))
        atomic_write(tmp_path / "x", lambda w: w(b"2"))
    assert _files(tmp_path) == set()


def test_sigterm_is_an_interrupt_that_leaves_nothing(tmp_path):
    """A real process: SIGTERM while the run's files are staged ends as one line and exit 130, nothing placed.
    The signal goes when the system's first recall says it is running (a readiness line, not a guessed delay: the
    CLI's import alone can take seconds on a busy machine)."""
    import subprocess
    import sys

    script = tmp_path / "slow.py"
    script.write_text(
        "import sys, time\nfrom memini_bench.core.contract import Hit\n"
        "class Slow:\n    name = 'slow'\n    def ingest(self, items):\n        self.items = list(items)\n"
        "    def recall(self, group, query, k, *, now=None, context=None):\n"
        "        if not getattr(self, 'ready', False):\n"
        "            self.ready = True\n            sys.stderr.write('SLOW-READY\\n')\n            sys.stderr.flush()\n"
        "        time.sleep(0.5)\n"
        "        return [Hit((it.id,), 1.0, it.content) for it in self.items if it.group == group][:k]\n"
        "def make(ctx):\n    return Slow()\n")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "memini_bench", *HASH, "-systems", f"{script}:make", "-out",
                             str(out), "-per-question", str(tmp_path / "pq.jsonl")], stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # blocks until the run is in its timed loop (or the process ends)
        seen.append(line)
        if line.strip() == "SLOW-READY":
            break
    assert seen and seen[-1].strip() == "SLOW-READY", "".join(seen)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=600)  # a hang guard only
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "memini-bench: interrupted"
    assert not (tmp_path / "pq.jsonl").exists() and (not out.exists() or _files(out) == set())


def test_an_empty_out_is_refused_not_taken_as_this_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli([*HASH, "-out", ""], capsys)
    assert code == 2 and "-out ''" in err and _files(tmp_path) == set()


def test_claim_by_hand(tmp_path, capsys):
    """results.identity.claim against hand-made files: free, the same identity, another one (the hashed name, its
    digest computed here with hashlib and json), a FIFO (never opened), a name at the 255-byte limit, a companion."""
    from memini_bench.results.identity import NO_IDENTITY, Companion, claim, results_identity

    ident = {"mode": "compare", "run": {"ks": [5, 10], "data_sha256": "ab"}, "hybrid": {"fusion": 0.5}}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:8]
    path = tmp_path / "x.json"
    assert claim(path, ident) == path                                     # free
    path.write_text(json.dumps({"config": {"identity": ident}}))
    assert claim(path, ident) == path                                     # its own file
    path.write_text(json.dumps({"config": {"identity": {**ident, "run": {"ks": [5]}}}}))
    assert claim(path, ident) == tmp_path / f"x-{digest}.json"
    assert "x.json holds a run made with other settings (run); this run writes" in capsys.readouterr().err
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    assert claim(fifo, ident) == tmp_path / f"f-{digest}.json"           # would block if it were read
    long = tmp_path / ("n" * 250 + ".json")
    long.write_text("{}")
    hashed = claim(long, ident)
    assert len(hashed.name.encode()) == 255 and hashed.name.endswith(f"-{digest}.json")
    ckpt = tmp_path / "q.ckpt.jsonl"
    ckpt.write_text("other\n")
    other = Companion(".ckpt.jsonl", {"a": 1}, lambda p: {"a": 2})
    assert claim(tmp_path / "q.json", ident, companions=[other]) == tmp_path / f"q-{digest}.json"
    same = Companion(".ckpt.jsonl", {"a": 1}, lambda p: {"a": 1})
    assert claim(tmp_path / "q.json", ident, companions=[same]) == tmp_path / "q.json"
    (tmp_path / f"x-{digest}.json").write_text("not json")
    with pytest.raises(BenchError, match=r"x-[0-9a-f]{8}\.json: holds a run made with other settings \(no identity\)"):
        claim(path, ident)
    assert results_identity(tmp_path) is NO_IDENTITY and results_identity(fifo) is NO_IDENTITY  # never read


def test_claim_never_lets_two_identities_share_a_file(tmp_path_factory):
    """A property over any order of runs into one folder (hypothesis): every run claims a path, writes its identity
    there, and afterwards each identity run so far lives in exactly one file, the one its next run claims again;
    no file ever changes identity."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from memini_bench.results.identity import claim, results_identity

    pool = [{"mode": "compare", "run": {"ks": [k], "data_sha256": d}} for k in (5, 10) for d in ("a", "b")]

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.sampled_from(range(len(pool))), min_size=1, max_size=12))
    def runs(order):
        folder = tmp_path_factory.mktemp("claims")
        owner: dict[str, int] = {}
        for i in order:
            path = claim(folder / "x.json", pool[i])
            assert owner.get(path.name, i) == i                      # never another identity's file
            owner[path.name] = i
            path.write_text(json.dumps({"config": {"identity": pool[i]}}))
        files = {p.name: results_identity(p) for p in folder.glob("*.json")}
        assert sorted(map(str, files.values())) == sorted(str(pool[i]) for i in set(order))
        for i in set(order):
            assert files[claim(folder / "x.json", pool[i]).name] == pool[i]

    runs()
