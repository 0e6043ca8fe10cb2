"""A real HTTP server on 127.0.0.1 for tests, answering from a script: ``handler(path, json_body)`` returns
``(status, reply)`` where reply is a JSON-able object or raw bytes; it may sleep to simulate a slow server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Handler = Callable[[str, object], tuple[int, object]]


class ScriptedServer:
    """``with ScriptedServer(handler) as srv: srv.url`` -> ``http://127.0.0.1:PORT`` (a free port unless ``port``
    is given); ``srv.requests`` logs (path, body, headers) of every request."""

    def __init__(self, handler: Handler, port: int = 0) -> None:
        self.handler = handler
        self.requests: list[tuple[str, object, dict[str, str]]] = []
        outer = self

        class _Request(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                outer.requests.append((self.path, body, dict(self.headers)))
                status, reply = outer.handler(self.path, body)
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), _Request)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def closed_port_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
