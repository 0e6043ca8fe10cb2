"""memini-bench data: the catalog, and fetch / verify against a real HTTP server on 127.0.0.1 that honours (or
refuses) Range requests, cuts transfers, stalls, answers 404 and sends wrong bytes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from loopback import closed_port_url
from unprivileged import as_unprivileged

from memini_bench.data import cli as data_cli
from memini_bench.data import registry
from memini_bench.data.download import fetch_file, file_digest, mirrored
from memini_bench.data.registry import DataFile, parse_catalog
from memini_bench.errors import BenchError

PAYLOAD = bytes(range(256)) * 1200  # 307,200 bytes
SHA = hashlib.sha256(PAYLOAD).hexdigest()


class Server:
    """GET server: ``behaviour(path, n)`` (n = how many requests that path had before) names what to do:
    ``ok`` (Range honoured), ``norange`` (Range ignored: 200 whole), ``cut`` (Content-Length whole, connection closed
    after a third), ``stall`` (a third, then silence), ``404``, ``wrong`` (other bytes, same length), ``long`` (the
    bytes and more), ``forever`` (no Content-Length, bytes until the client hangs up), ``drip`` (one byte every
    ``drip_s`` seconds, until the client hangs up), ``huge`` (announces 10**12 bytes). ``ranges`` logs each request's
    Range header."""

    def __init__(self, behaviour, payload: bytes = PAYLOAD, drip_s: float = 0.05) -> None:
        self.behaviour = behaviour
        self.payload = payload
        self.drip_s = drip_s
        self.ranges: list[tuple[str, str | None]] = []
        self.release = threading.Event()
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                n = sum(1 for p, _ in outer.ranges if p == self.path)
                outer.ranges.append((self.path, self.headers.get("Range")))
                what = outer.behaviour(self.path, n)
                if what == "404":
                    self.send_error(404, "Not Found")
                    return
                if what in ("forever", "drip", "huge"):
                    self._endless(what)
                    return
                good = outer.payload
                body = {"wrong": bytes(reversed(good)), "long": good + b"extra"}.get(what, good)
                start = 0
                rng = self.headers.get("Range")
                if rng and what in ("ok", "cut", "stall"):
                    start = int(rng.removeprefix("bytes=").split("-")[0])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                rest = body[start:]
                self.send_header("Content-Length", str(len(rest)))
                self.end_headers()
                if what in ("cut", "stall"):
                    self.wfile.write(rest[: len(rest) // 3])
                    self.wfile.flush()
                    if what == "stall":
                        outer.release.wait(10)
                    self.close_connection = True
                    return
                self.wfile.write(rest)

            def _endless(self, what: str) -> None:
                self.send_response(200)
                if what == "huge":
                    self.send_header("Content-Length", str(10**12))
                self.end_headers()
                try:
                    while not outer.release.is_set():
                        self.wfile.write(b"x" if what == "drip" else b"y" * 65536)
                        self.wfile.flush()
                        if what == "drip":
                            outer.release.wait(outer.drip_s)
                except OSError:  # the client hung up
                    pass
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    servers = []

    def make(behaviour, payload=PAYLOAD):
        servers.append(Server(behaviour, payload))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def quiet(*_args, **_kw) -> None:
    pass


def entry(url: str, **kw) -> DataFile:
    return DataFile(path="x.bin", urls=(url,), size=kw.get("size", len(PAYLOAD)), sha256=kw.get("sha256", SHA),
                    git_sha1=kw.get("git_sha1", ""))


def test_plain_download_is_verified_and_placed(server, tmp_path):
    srv = server(lambda p, n: "ok")
    dest = tmp_path / "set" / "x.bin"
    fetch_file(entry(srv.url + "/f"), dest, report=quiet)
    assert dest.read_bytes() == PAYLOAD
    assert not dest.with_name("x.bin.part").exists()
    assert srv.ranges == [("/f", None)]


def test_cut_transfer_resumes_with_a_range_request(server, tmp_path):
    srv = server(lambda p, n: "cut" if n == 0 else "ok")
    dest = tmp_path / "x.bin"
    fetch_file(entry(srv.url + "/f"), dest, report=quiet)
    assert dest.read_bytes() == PAYLOAD
    (_, first), (_, second) = srv.ranges
    assert first is None and second == f"bytes={len(PAYLOAD) // 3}-"


def test_stalled_server_times_out_keeps_the_part_and_the_next_command_resumes(server, tmp_path):
    srv = server(lambda p, n: "stall")
    dest = tmp_path / "x.bin"
    with pytest.raises(BenchError) as err:
        # 3 s per read: the first third (sent at once) always arrives first, even on a busy machine
        fetch_file(entry(srv.url + "/f"), dest, timeout=3, attempts=1, report=quiet)
    part = dest.with_name("x.bin.part")
    kept = part.stat().st_size
    assert "the same command resumes" in str(err.value) and kept == len(PAYLOAD) // 3  # every byte sent is kept
    assert part.read_bytes() == PAYLOAD[:kept] and not dest.exists()
    srv.behaviour = lambda p, n: "ok"
    fetch_file(entry(srv.url + "/f"), dest, report=quiet)
    assert dest.read_bytes() == PAYLOAD and not part.exists()
    assert srv.ranges[-1] == ("/f", f"bytes={kept}-")


def test_server_that_ignores_range_starts_over(server, tmp_path):
    srv = server(lambda p, n: "cut" if n == 0 else "norange")
    dest = tmp_path / "x.bin"
    fetch_file(entry(srv.url + "/f"), dest, report=quiet)
    assert dest.read_bytes() == PAYLOAD


def test_404_moves_to_the_next_mirror(server, tmp_path):
    srv = server(lambda p, n: "404" if p == "/gone" else "ok")
    f = DataFile(path="x.bin", urls=(srv.url + "/gone", srv.url + "/f"), size=len(PAYLOAD), sha256=SHA)
    fetch_file(f, tmp_path / "x.bin", report=quiet)
    assert (tmp_path / "x.bin").read_bytes() == PAYLOAD


def test_404_everywhere_is_one_error_and_nothing_written(server, tmp_path):
    srv = server(lambda p, n: "404")
    with pytest.raises(BenchError, match="HTTP 404") as err:
        fetch_file(entry(srv.url + "/f"), tmp_path / "x.bin", report=quiet)
    assert "\n" not in str(err.value)
    assert len(srv.ranges) == 1  # a refusal is not retried
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("what", ["wrong", "long"])
def test_wrong_bytes_are_refused_and_leave_nothing(server, tmp_path, what):
    srv = server(lambda p, n: what)
    with pytest.raises(BenchError, match="refused, nothing kept"):
        fetch_file(entry(srv.url + "/f"), tmp_path / "x.bin", report=quiet)
    assert list(tmp_path.iterdir()) == []


def test_wrong_checksum_with_unknown_size_is_refused(server, tmp_path):
    srv = server(lambda p, n: "ok")
    with pytest.raises(BenchError, match="sha256 .* not the registered"):
        fetch_file(entry(srv.url + "/f", size=None, sha256="0" * 64), tmp_path / "x.bin", report=quiet)
    assert list(tmp_path.iterdir()) == []


def test_git_blob_checksum(server, tmp_path):
    srv = server(lambda p, n: "ok")
    blob = hashlib.sha1(b"blob %d\0" % len(PAYLOAD) + PAYLOAD).hexdigest()
    dest = tmp_path / "x.bin"
    fetch_file(entry(srv.url + "/f", size=None, sha256="", git_sha1=blob), dest, report=quiet)
    assert file_digest(dest, git=True) == blob


def test_progress_goes_to_stderr(server, tmp_path, capsys):
    srv = server(lambda p, n: "ok")
    fetch_file(entry(srv.url + "/f"), tmp_path / "x.bin", label="toy")
    err = capsys.readouterr().err
    assert "toy: 0.3 of 0.3 MB (100%)" in err


# ---- the CLI and -data NAME, on a catalog of toy sets served by the loopback server --------------------------------


def _toy_catalog(url: str, good: bytes) -> dict:
    return {"sets": [{"name": "toy", "suite": "file", "description": "a toy set", "license": "CC0", "citation": "-",
                      "homepage": url, "entry": "toy.json", "checksum_source": "made by the test",
                      "files": [{"path": "toy.json", "urls": [url + "/toy.json"], "size": len(good),
                                 "sha256": hashlib.sha256(good).hexdigest()}]}]}


TOY = json.dumps({"name": "toy", "items": [{"id": "a", "content": "the deploy runs on fridays"},
                                           {"id": "b", "content": "lunch is at noon"}],
                  "questions": [{"id": "q", "query": "when is the deploy", "gold": ["a"]}]}).encode()


@pytest.fixture
def toy(server, tmp_path, monkeypatch):
    served: dict[str, str] = {}
    srv = server(lambda p, n: served.get("what", "ok"), payload=TOY)
    cat = parse_catalog(_toy_catalog(srv.url, TOY))
    monkeypatch.setattr(registry, "catalog", lambda: cat)
    monkeypatch.setenv("MEMINI_BENCH_DATA", str(tmp_path / "data"))
    return srv, served


def run_cli(argv, capsys):
    from memini_bench.cli import main

    code = 0
    try:
        main(argv)
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_fetch_verify_and_data_name(toy, tmp_path, capsys):
    code, _, err = run_cli(["-suite", "file", "-data", "toy", "-embedder", "hash", "-no-write"], capsys)
    assert code == 2 and "run memini-bench data fetch toy first" in err
    code, _, err = run_cli(["data", "fetch", "toy"], capsys)
    assert code == 0, err
    placed = tmp_path / "data" / "toy" / "toy.json"
    assert placed.read_bytes() == TOY
    code, out, _ = run_cli(["data", "verify", "toy"], capsys)
    assert code == 0 and "toy: 1 files verified" in out
    code, out, err = run_cli(["-suite", "file", "-data", "toy", "-embedder", "hash", "-no-write"], capsys)
    assert code == 0, err
    assert "1 questions" in out
    code, _, err = run_cli(["-suite", "locomo", "-data", "toy", "-embedder", "hash", "-no-write"], capsys)
    assert code == 2 and "read by -suite file" in err
    placed.write_bytes(TOY.replace(b"fridays", b"mondays"))  # same length, other bytes
    code, out, err = run_cli(["data", "verify"], capsys)
    assert code == 2 and "sha256" in out and "run memini-bench data fetch toy" in out
    code, _, err = run_cli(["-suite", "file", "-data", "toy", "-embedder", "hash", "-no-write"], capsys)
    assert code == 2 and "not the registered" in err and "\n" not in err.strip()
    code, _, err = run_cli(["data", "fetch", "toy"], capsys)  # a changed copy is fetched again
    assert code == 0 and placed.read_bytes() == TOY


def test_cli_fetch_of_wrong_bytes_exits_2_and_leaves_nothing(toy, tmp_path, capsys):
    srv, served = toy
    served["what"] = "wrong"
    code, _, err = run_cli(["data", "fetch", "toy"], capsys)
    assert code == 2 and "refused, nothing kept" in err
    folder = tmp_path / "data" / "toy"
    assert not folder.exists() or list(folder.iterdir()) == []


def test_unknown_name_and_missing_registered_file(toy, capsys):
    code, _, err = run_cli(["data", "fetch", "nope"], capsys)
    assert code == 2 and "not registered" in err and "toy" in err
    code, _, err = run_cli(["-suite", "file", "-data", "/nowhere/toy.json", "-embedder", "hash", "-no-write"],
                           capsys)
    assert code == 2 and "memini-bench data fetch toy" in err


# ---- the shipped catalog ----------------------------------------------------------------------------------------


def test_shipped_catalog_lists_every_set_with_its_checksums(capsys):
    sets = registry.catalog()
    assert {"longmemeval-s", "longmemeval-m", "longmemeval-oracle", "locomo", "beam-100k", "beam-500k", "beam-1m",
            "beam-10m"} <= set(sets)
    s, m, o = sets["longmemeval-s"].files[0], sets["longmemeval-m"].files[0], sets["longmemeval-oracle"].files[0]
    assert (s.size, s.sha256) == (277_383_467, "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442")
    assert (m.size, m.sha256) == (2_737_100_077, "9d79e5524794a2e6900a3aa9cb7d9152c5a3e8319c9a87c25494ba1eacee495f")
    assert o.sha256 == "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c"
    for ds in sets.values():
        assert ds.checksum_source and ds.license and ds.citation
        for f in ds.files:
            assert all(u.startswith("https://") for u in f.urls)
            assert len(f.sha256) == 64 or len(f.git_sha1) == 40
    code, out, _ = run_cli(["data", "list", "-v"], capsys)
    assert code == 0
    for ds in sets.values():
        assert ds.name in out
        for f in ds.files:
            assert (f.sha256 or f.git_sha1) in out
    assert " 1 files" not in out


def test_data_list_is_one_line_per_set_with_the_right_plural(capsys):
    sets = registry.catalog()
    code, out, err = run_cli(["data", "list"], capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 + len(sets) and "data list -v" in err
    for ds, line in zip(sets.values(), lines[2:], strict=True):
        n = len(ds.files)
        assert line.split()[:3] == [ds.name, ds.suite, str(n)]
        assert f" {n} {'file' if n == 1 else 'files'} " in line


def test_registered_locomo_checksum_is_the_shared_file():
    from conftest import shared

    path = shared("locomo/locomo10.json")
    f = registry.catalog()["locomo"].files[0]
    data = Path(path).read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (f.size, f.sha256)
    assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == f.git_sha1


# ---- bounds: size, time, links, names, file-system faults ---------------------------------------------------------


def test_a_server_streaming_forever_stops_at_the_cap_and_leaves_nothing(server, tmp_path):
    srv = server(lambda p, n: "forever")
    dest = tmp_path / "set" / "x.bin"
    with pytest.raises(BenchError, match="size cap of 200,000 bytes") as err:
        fetch_file(entry(srv.url + "/f", size=None), dest, max_bytes=200_000, report=quiet)
    assert "nothing kept" in str(err.value) and "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []  # no .part, no folder
    with pytest.raises(BenchError, match="more than the registered"):  # a registered size is the bound
        fetch_file(entry(srv.url + "/f"), dest, report=quiet)
    assert list(tmp_path.iterdir()) == []


def test_a_reply_announcing_more_than_the_bound_is_refused_before_reading(server, tmp_path):
    srv = server(lambda p, n: "huge")
    with pytest.raises(BenchError, match="announces 1,000,000,000,000 bytes"):
        fetch_file(entry(srv.url + "/f"), tmp_path / "set" / "x.bin", report=quiet)
    assert list(tmp_path.iterdir()) == []


def test_a_slow_drip_is_cut_by_the_deadline_and_resumes(server, tmp_path):
    srv = server(lambda p, n: "drip")
    dest = tmp_path / "x.bin"
    with pytest.raises(BenchError, match="deadline of 3 s") as err:   # 3 s: a busy machine still gets bytes first
        fetch_file(entry(srv.url + "/f"), dest, deadline=3, timeout=30, report=quiet)
    part = dest.with_name("x.bin.part")
    kept = part.stat().st_size
    assert kept > 0 and f"{kept:,} bytes kept" in str(err.value) and "the same command resumes" in str(err.value)
    assert part.read_bytes() == b"x" * kept
    srv.behaviour = lambda p, n: "ok"
    srv.payload = b"x" * kept + PAYLOAD[kept:]
    fetch_file(entry(srv.url + "/f", sha256=hashlib.sha256(srv.payload).hexdigest()), dest, report=quiet)
    assert dest.read_bytes() == srv.payload and srv.ranges[-1] == ("/f", f"bytes={kept}-")


def test_a_symlinked_part_is_never_written_through(server, tmp_path):
    srv = server(lambda p, n: "ok")
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    dest = tmp_path / "x.bin"
    dest.with_name("x.bin.part").symlink_to(victim)
    with pytest.raises(BenchError, match="symbolic link"):
        fetch_file(entry(srv.url + "/f"), dest, report=quiet)
    assert victim.read_bytes() == b"precious" and srv.ranges == [] and not dest.exists()
    from memini_bench.data import download  # the open itself refuses a link made after the check

    with pytest.raises(BenchError, match="symbolic link"):
        download._open_part(dest.with_name("x.bin.part"), append=True)
    assert victim.read_bytes() == b"precious"


@pytest.mark.parametrize("what", ["folder", "link", "fifo"])
def test_a_destination_that_is_not_a_regular_file_is_refused_before_any_request(server, tmp_path, what):
    srv = server(lambda p, n: "ok")
    dest = tmp_path / "x.bin"
    {"folder": dest.mkdir, "link": lambda: dest.symlink_to(tmp_path / "elsewhere"),
     "fifo": lambda: os.mkfifo(dest)}[what]()
    with pytest.raises(BenchError) as err:
        fetch_file(entry(srv.url + "/f"), dest, report=quiet)
    assert "\n" not in str(err.value) and str(dest) in str(err.value) and srv.ranges == []


def test_a_refused_connection_leaves_no_empty_folder(tmp_path):
    with pytest.raises(BenchError, match="cannot connect"):
        fetch_file(entry(closed_port_url() + "/f"), tmp_path / "a" / "b" / "x.bin", attempts=1, report=quiet)
    assert list(tmp_path.iterdir()) == []


def test_a_mirror_serves_the_catalogs_paths_under_its_base_still_checked(server, tmp_path):
    srv = server(lambda p, n: "ok")
    f = DataFile(path="x.bin", urls=("https://data.example/sets/x.bin?download=1",), size=len(PAYLOAD), sha256=SHA)
    assert mirrored(f.urls[0], srv.url + "/m/") == srv.url + "/m/data.example/sets/x.bin?download=1"
    fetch_file(f, tmp_path / "x.bin", mirror=srv.url + "/m", report=quiet)
    assert (tmp_path / "x.bin").read_bytes() == PAYLOAD and srv.ranges == [("/m/data.example/sets/x.bin?download=1",
                                                                              None)]
    srv.behaviour = lambda p, n: "wrong"
    with pytest.raises(BenchError, match="refused, nothing kept"):
        fetch_file(f, tmp_path / "y.bin", mirror=srv.url + "/m", report=quiet)
    assert not (tmp_path / "y.bin").exists()


def test_cli_mirror_flag_and_environment(toy, tmp_path, capsys, monkeypatch):
    srv, _ = toy
    cat = parse_catalog(_toy_catalog("https://data.example", TOY))
    monkeypatch.setattr(registry, "catalog", lambda: cat)
    code, _, err = run_cli(["data", "fetch", "toy", "-mirror", srv.url + "/copy"], capsys)
    assert code == 0, err
    assert srv.ranges[-1][0] == "/copy/data.example/toy.json"
    (tmp_path / "data" / "toy" / "toy.json").unlink()
    monkeypatch.setenv("MEMINI_BENCH_DATA_MIRROR", srv.url + "/env")
    code, _, err = run_cli(["data", "fetch", "toy"], capsys)
    assert code == 0 and srv.ranges[-1][0] == "/env/data.example/toy.json", err
    for bad in (["-mirror", "ftp://x"], ["-mirror", "nohost"]):
        code, _, err = run_cli(["data", "fetch", "toy", *bad], capsys)
        assert code == 2 and "-mirror" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["../evil", "..", "a/b", "/abs", ""])
def test_a_modified_catalog_cannot_name_a_set_outside_the_data_folder(tmp_path, monkeypatch, capsys, name):
    doc = _toy_catalog("https://data.example", TOY)
    doc["sets"][0]["name"] = name
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(registry, "CATALOG", path)
    registry.catalog.cache_clear()
    try:
        code, _, err = run_cli(["data", "fetch", name or "x"], capsys)
    finally:
        registry.catalog.cache_clear()
    assert code == 2 and "set name" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path.parent / "evil").exists()


def _one_line(code, err):
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "error:" in lines[0] and "Traceback" not in err, err
    return lines[0]


def test_data_folder_that_is_a_file_is_one_line(toy, tmp_path, capsys, monkeypatch):
    srv, _ = toy
    hostname = tmp_path / "hostname"
    hostname.write_text("box\n")
    monkeypatch.setenv("MEMINI_BENCH_DATA", str(hostname))
    line = _one_line(*run_cli(["data", "fetch", "toy"], capsys)[::2])
    assert "is a file, not a folder" in line and srv.ranges == []
    code, _, err = run_cli(["data", "verify", "toy"], capsys)
    assert code == 2 and "Traceback" not in err


def test_a_folder_at_the_destination_is_one_line(toy, tmp_path, capsys):
    (tmp_path / "data" / "toy" / "toy.json").mkdir(parents=True)
    line = _one_line(*run_cli(["data", "fetch", "toy"], capsys)[::2])
    assert "a folder is where the destination goes" in line


def test_a_read_only_data_folder_is_one_line_and_leaves_nothing(server, open_tmp):
    srv = server(lambda p, n: "ok")
    ro = open_tmp / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    kind, message = as_unprivileged(lambda: fetch_file(entry(srv.url + "/f"), ro / "set" / "x.bin", report=quiet))
    assert kind == "BenchError" and "Permission denied" in message and "\n" not in message, message
    assert list(ro.iterdir()) == []


def test_an_unreadable_file_on_verify_is_reported_not_raised(open_tmp):
    path = open_tmp / "x.bin"
    path.write_bytes(PAYLOAD)
    path.chmod(0)
    kind, message = as_unprivileged(lambda: data_cli._problem(entry("http://unused/f"), path))
    assert (kind, message) == ("ok", "cannot read it (Permission denied)")


CHILD = """
import resource, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
from memini_bench.data.download import fetch_file
from memini_bench.data.registry import DataFile
from memini_bench.errors import BenchError
try:
    fetch_file(DataFile("x.bin", ({url!r},), {size}, {sha!r}), Path({dest!r}), report=lambda *a, **k: None)
except BenchError as exc:
    print(exc)
    sys.exit(2)
"""


def test_a_file_size_limit_is_one_line_and_leaves_nothing(server, tmp_path):
    srv = server(lambda p, n: "ok")
    dest = tmp_path / "set" / "x.bin"
    code = CHILD.format(tests=str(Path(__file__).parents[1]), url=srv.url + "/f", size=len(PAYLOAD), sha=SHA,
                        dest=str(dest))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert done.returncode == 2, done.stderr
    assert "File too large" in done.stdout and "nothing kept" in done.stdout and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []
