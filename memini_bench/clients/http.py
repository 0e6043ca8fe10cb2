"""A small JSON-over-HTTP client for OpenAI-compatible endpoints (embeddings, rerank, chat), stdlib only.

``post_json`` tries a request up to ``retries + 1`` times, within two limits:

- ``timeout``: seconds per try (the socket's connect and read timeout; a reply still arriving after it is cut);
- ``deadline``: seconds for the whole request, every try and wait included (default ``2 * timeout``, so a hung
  server fails after about two timeouts, not ``retries + 1`` of them). No try starts once the deadline is reached,
  and a try gets at most the time left.

HTTP 408/409/425/429/5xx, timeouts and refused or reset connections are retried. The wait before try n (n >= 1) is
``b = min(backoff * 2**(n-1), 8 s)``, or, when the reply sent a readable ``Retry-After`` (non-negative
delta-seconds or an HTTP date; ``-5`` is unreadable), ``max(b, min(Retry-After, max_retry_after))``: a server never
makes the client retry faster than the backoff. When that wait would pass the deadline the request fails at once.
A URL that is not ``http://`` or ``https://`` with a host (``file:///``, ``http://[::1``) is refused before any
try (``check_base_url`` names the variable that set it). Every failure
ends as a one-line BenchError naming the URL, the number of tries, the total time and the last fault.

``env_seconds`` reads a timeout variable such as ``MEMINI_EMBED_TIMEOUT``: a positive finite number of seconds.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memini_bench.errors import BenchError

if TYPE_CHECKING:  # urllib and http.client load only when a request is made (a run without one skips ~20 ms)
    import http.client
    import urllib.request

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 60.0
_READ_CHUNK = 1 << 16


def bearer(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")


def check_base_url(url: str, name: str) -> str:
    """``url`` if it is an ``http(s)://HOST...`` URL, else a one-line BenchError naming ``name`` (the variable or
    flag that set it) and the fix."""
    from urllib.parse import urlsplit

    shown = url.replace("\n", "\\n")
    try:
        parts = urlsplit(url)
        _ = parts.port  # an unreadable port raises here
    except ValueError as exc:
        raise BenchError(f"{name}={shown!r}: not a valid URL ({exc}); give http(s)://HOST[:PORT]/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BenchError(f"{name}={shown!r}: not an http(s) URL with a host; give http(s)://HOST[:PORT]/v1")
    return url


def check_seconds(value: float, what: str) -> float:
    """``value`` if it is a positive finite number of seconds, else a BenchError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise BenchError(f"{what} {value!r}: must be a positive number of seconds")
    return float(value)


def env_seconds(name: str, default: float) -> float:
    """The seconds in environment variable ``name`` (``default`` when unset or empty)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise BenchError(f"{name}={raw!r}: not a number of seconds; set it to e.g. 30 or unset it") from None
    return check_seconds(value, f"{name}=")


def retry_after_seconds(header: str | None, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for (delta-seconds or an HTTP date), None when absent or unreadable
    (a negative or non-finite delta is unreadable); a date in the past is 0."""
    if not header:
        return None
    text = header.strip()
    try:
        seconds = float(text)
    except ValueError:
        import email.utils

        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = max(0.0, when.timestamp() - (time.time() if now is None else now))
    # delta-seconds is a non-negative integer (RFC 9110 section 10.2.3): "-5" asks for nothing readable
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@dataclass
class _Fault:
    """Why one try failed, and the wait the server asked for before the next one (None = none asked)."""

    text: str
    retry: bool = True
    retry_after: float | None = None


def _read_by(response: http.client.HTTPResponse, stop_at: float) -> bytes:
    """The whole body, read in chunks; a TimeoutError once ``stop_at`` (monotonic) passes (a trickling reply)."""
    parts = []
    while chunk := response.read1(_READ_CHUNK):
        parts.append(chunk)
        if time.monotonic() > stop_at:
            raise TimeoutError
    return b"".join(parts)


def _try_once(request: urllib.request.Request, timeout: float,
              retry_status: frozenset[int] = RETRY_STATUS) -> bytes | _Fault:
    """The reply body of one try, or the fault that ended it."""
    import http.client
    import urllib.error
    import urllib.request

    stop_at = time.monotonic() + timeout
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return _read_by(response, stop_at)
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:200].decode("utf-8", "replace").strip()
        text = f"HTTP {exc.code}" + (f" ({detail})" if detail else "")
        return _Fault(text, exc.code in retry_status, retry_after_seconds(exc.headers.get("Retry-After")))
    except TimeoutError:
        return _Fault(f"no reply within {_secs(timeout)} s")
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError | socket.timeout):
            return _Fault(f"no reply within {_secs(timeout)} s")
        return _Fault(f"unreachable ({exc.reason})")
    except (OSError, http.client.HTTPException) as exc:  # reset, refused mid-way, or not an HTTP server
        return _Fault(f"connection failed ({type(exc).__name__}: {exc})")


def _secs(seconds: float) -> str:
    """Seconds for a message: at most two decimals, no trailing zeros (0.2, 1.5, 60)."""
    return f"{round(seconds, 2):g}"


def _tries(n: int) -> str:
    return f"{n} {'try' if n == 1 else 'tries'}"


def post_json(url: str, payload: object, *, headers: Mapping[str, str] | None = None, timeout: float = 60.0,
              retries: int = 6, backoff: float = 0.5, deadline: float | None = None,
              max_retry_after: float = MAX_RETRY_AFTER, what: str = "server", timeout_hint: str = "",
              retry_status: frozenset[int] = RETRY_STATUS) -> object:
    """POST ``payload`` as JSON and return the decoded JSON reply (limits and failures: the module docstring).
    ``timeout_hint`` (e.g. which variable sets the timeout) is added to the error when the last try timed out;
    ``retry_status`` are the HTTP statuses tried again (an API's own, e.g. Anthropic's 529, added to the default)."""
    timeout = check_seconds(timeout, "timeout")
    check_base_url(url, f"{what} URL")
    deadline = 2 * timeout if deadline is None else check_seconds(deadline, "deadline")
    body = json.dumps(payload).encode("utf-8")
    request_headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
    start = time.monotonic()
    fault = _Fault("no try made")
    tried = 0
    stop = ""
    for attempt in range(retries + 1):
        if attempt:
            wait = min(backoff * 2 ** (attempt - 1), MAX_BACKOFF)
            if fault.retry_after is not None:
                wait = max(wait, min(fault.retry_after, max_retry_after))
            left = deadline - (time.monotonic() - start)
            if wait >= left:
                kind = "the server's Retry-After" if fault.retry_after is not None else "the backoff"
                stop = f"; {kind} wait of {_secs(wait)} s before the next try would pass the {_secs(deadline)} s "
                stop += "deadline"
                break
            time.sleep(wait)
        left = deadline - (time.monotonic() - start)
        if left <= 0:
            break
        tried += 1
        import urllib.request

        outcome = _try_once(urllib.request.Request(url, data=body, headers=request_headers, method="POST"),
                            min(timeout, left), retry_status)
        if isinstance(outcome, bytes):
            try:
                return json.loads(outcome)
            except ValueError:
                snippet = outcome[:80].decode("utf-8", "replace")
                raise BenchError(f"{what} at {url} sent a reply that is not JSON: {snippet!r}") from None
        fault = outcome
        if not fault.retry:
            raise BenchError(f"{what} at {url} answered {fault.text}; check the URL, model name and API key")
    elapsed = time.monotonic() - start
    hint = f"; {timeout_hint}" if timeout_hint and fault.text.startswith("no reply") else ""
    raise BenchError(f"{what} at {url} failed after {_tries(tried)} in {_secs(elapsed)} s (timeout "
                     f"{_secs(timeout)} s per try, deadline {_secs(deadline)} s): {fault.text}{stop}; is the server "
                     f"up and the URL right?{hint}")
