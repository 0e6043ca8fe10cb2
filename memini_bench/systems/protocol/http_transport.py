"""One REST memory service, reached with the project's HTTP client (``clients.http.post_json``).

Every mapped call is a JSON POST to ``url + path``. A recall is tried again on the client's retryable faults (it is
idempotent); a write is tried once (a retried write could store an item twice). The service runs outside the
harness (the user starts it), so ``start`` only checks the URL, and ``close`` has no process to end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from memini_bench.clients.http import check_base_url, join_url, post_json


class HttpTransport:
    """A JSON-over-HTTP service at ``url`` (module docstring); ``label`` names it in every error line."""

    tools: dict[str, dict] | None = None  # a REST service publishes no tool schemas
    server_info: dict[str, str] = {}
    pid = None

    def __init__(self, label: str, url: str, timeout: float, headers: Mapping[str, str] | None = None) -> None:
        self.label, self.url, self.timeout, self.headers = label, url, timeout, dict(headers or {})

    def start(self) -> None:
        check_base_url(self.url, f"{self.label} url")

    def close(self) -> None:
        pass

    def call(self, path: str, body: object, *, write: bool = False) -> object:
        return post_json(join_url(self.url, path), body, headers=self.headers, timeout=self.timeout,
                         retries=0 if write else 2, what=self.label,
                         timeout_hint="raise the per-call timeout with ?timeout=SECONDS")

    def call_many(self, calls: Sequence[tuple[str, object]], concurrency: int, *, write: bool = True) -> list[object]:
        if concurrency <= 1 or len(calls) <= 1:
            return [self.call(path, body, write=write) for path, body in calls]
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            return list(pool.map(lambda c: self.call(c[0], c[1], write=write), calls))
