"""Writing results and talking to servers never ends in a traceback: one BenchError line instead."""

from __future__ import annotations

import socket
import threading

import pytest

from memini_bench.clients.http import post_json
from memini_bench.errors import BenchError
from memini_bench.results.write import write_json


def test_writing_over_a_folder_is_a_clear_error_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "taken"
    target.mkdir()
    with pytest.raises(BenchError, match="is a folder"):
        write_json(target, {"a": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]


def test_previous_file_survives_a_failed_write(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("previous")

    class Boom:
        pass

    with pytest.raises(TypeError):
        write_json(path, {"x": Boom()})
    assert path.read_text() == "previous" and len(list(tmp_path.iterdir())) == 1


def test_a_server_that_does_not_speak_http_is_a_clear_error():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]

    def serve() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            conn.recv(65536)
            conn.sendall(b"HELLO THERE\r\n\r\n")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    url = f"http://127.0.0.1:{port}/rerank"
    with pytest.raises(BenchError, match=r"failed after 2 tries in [0-9.]+ s .*: connection failed") as exc:
        post_json(url, {"q": 1}, retries=1, backoff=0.01, what="rerank server")
    assert url in str(exc.value)
    listener.close()
