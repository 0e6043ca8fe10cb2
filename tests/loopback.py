"""A real HTTP server on 127.0.0.1 for tests, answering from a script: ``handler(path, json_body)`` returns
``(status, reply)`` or ``(status, reply, headers)``, where reply is a JSON-able object or raw bytes and headers a
dict of extra response headers (e.g. ``Retry-After``); it may sleep to simulate a slow server."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Handler = Callable[[str, object], tuple]


class ScriptedServer:
    """``with ScriptedServer(handler) as srv: srv.url`` -> ``http://127.0.0.1:PORT`` (a free port unless ``port``
    is given); ``srv.requests`` logs (path, body, headers) of every request, ``srv.arrivals`` its
    ``time.monotonic()`` arrival times (both logged before the handler runs) and ``srv.max_in_flight`` the most
    requests the handler was running at once."""

    def __init__(self, handler: Handler, port: int = 0) -> None:
        self.handler = handler
        self.requests: list[tuple[str, object, dict[str, str]]] = []
        self.arrivals: list[float] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        outer = self

        class _Request(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                with outer._lock:
                    outer.requests.append((self.path, body, dict(self.headers)))
                    outer.arrivals.append(arrived)
                    outer._in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer._in_flight)
                try:
                    status, reply, *extra = outer.handler(self.path, body)
                finally:
                    with outer._lock:
                        outer._in_flight -= 1
                headers = extra[0] if extra else {}
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), _Request)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)  # a short poll: shutdown() returns within 50 ms

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def gaps(self) -> list[float]:
        """Seconds between consecutive request arrivals."""
        return [b - a for a, b in itertools.pairwise(sorted(self.arrivals))]

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

