"""A small JSON-over-HTTP client for OpenAI-compatible endpoints (embeddings, rerank, chat), stdlib only.

``post_json`` retries on HTTP 429 and 5xx, timeouts and refused connections with exponential backoff
(``backoff * 2**attempt`` seconds, capped at 8 s), and ends every failure as a BenchError that names the URL and
what to check: the CLI prints it as one line with exit code 2.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Mapping

from memini_bench.errors import BenchError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def bearer(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")


def post_json(url: str, payload: object, *, headers: Mapping[str, str] | None = None, timeout: float = 60.0,
              retries: int = 6, backoff: float = 0.5, what: str = "server") -> object:
    """POST ``payload`` as JSON and return the decoded JSON reply (see the module docstring for failures)."""
    body = json.dumps(payload).encode("utf-8")
    request_headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
    last = ""
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(backoff * 2 ** (attempt - 1), 8.0))
        request = urllib.request.Request(url, data=body, headers=request_headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace").strip()
            last = f"HTTP {exc.code}" + (f" ({detail})" if detail else "")
            if exc.code in RETRY_STATUS:
                continue
            raise BenchError(f"{what} at {url} answered {last}; check the URL, model name and API key") from None
        except TimeoutError:
            last = f"no reply within {timeout:g} s"
            continue
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError | socket.timeout):
                last = f"no reply within {timeout:g} s"
                continue
            last = f"unreachable ({reason})"
            continue
        except (OSError, http.client.HTTPException) as exc:  # reset, refused mid-way, or not an HTTP server
            last = f"connection failed ({type(exc).__name__}: {exc})"
            continue
        try:
            return json.loads(raw)
        except ValueError:
            snippet = raw[:80].decode("utf-8", "replace")
            raise BenchError(f"{what} at {url} sent a reply that is not JSON: {snippet!r}") from None
    raise BenchError(f"{what} at {url} failed after {retries + 1} attempts: {last}; "
                     "is the server up and the URL right?")
