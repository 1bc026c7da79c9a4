"""How calls to an OpenAI-compatible endpoint fail, wait and are counted.

- Errors: the SDK's exceptions become the project's TransientBackendError (408, 409, 429, 5xx,
  timeouts, connection errors: the Celery task defers the run) or PermanentBackendError (other
  4xx: no retry helps).
- Retries are the SDK's own (``max_retries``, exponential backoff with jitter, honouring
  Retry-After); ``retries_taken`` reads how many it made, ``first_retry_delay`` waits as its first
  retry would when the backend retries a failed format probe itself.
- ``gate``: at most ``LLM_MAX_CONCURRENCY`` calls in flight to one endpoint from this process.
  Calls wait here, where waiting does not count against the timeout, instead of in the server's
  queue, where a single-slot server (llama.cpp) makes each wait behind the others until they
  time out and are sent again behind their own abandoned copies.
- ``timeout_counting_http_client``: every timed-out HTTP request is counted, retried or not
  (each is work the server may still be doing for nobody).
"""

from __future__ import annotations

import contextlib
import logging
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import openai

from apps.judges.engine.judgment import PermanentBackendError, TransientBackendError

logger = logging.getLogger(__name__)


class Usage:
    """What the calls of one judgment or chat cost, summed over retries and re-asks."""

    __slots__ = ("prompt", "completion", "cached", "latency", "retries", "mode")

    def __init__(self) -> None:
        self.prompt = self.completion = self.cached = self.retries = 0
        self.latency = 0.0
        self.mode = ""


RETRY_AFTER_CAP_SECONDS = 60.0  # what the SDK honours; longer waits fall back to its backoff

_gates: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_gates_lock = threading.Lock()


@contextlib.contextmanager
def gate(base_url: str | None, limit: int) -> Iterator[None]:
    """At most ``limit`` calls in flight to one endpoint from this process (0: no limit)."""
    if limit <= 0:
        yield
        return
    key = ((base_url or "").rstrip("/"), limit)
    with _gates_lock:
        semaphore = _gates.setdefault(key, threading.BoundedSemaphore(limit))
    with semaphore:
        yield


def map_openai_error(exc: Exception, *, retries: int = 0) -> Exception:
    """Translate an SDK exception into the project's transient/permanent errors."""
    after = f" (after {retries} retries)" if retries else ""
    if isinstance(exc, openai.APITimeoutError):
        return TransientBackendError(f"timed out{after}: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return TransientBackendError(f"connection failed{after}: {exc}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if 300 <= status < 400:
            target = exc.response.headers.get("location", "elsewhere")
            return PermanentBackendError(
                f"HTTP {status}: the endpoint redirects to {target}; redirects are not followed "
                "(they could lead outside the allowed endpoints): configure the final address"
            )
        if status == 429 or status in (408, 409) or status >= 500:
            return TransientBackendError(f"HTTP {status}{after}: {exc.message}")
        return PermanentBackendError(f"HTTP {status}: {exc.message}")
    if isinstance(exc, openai.OpenAIError):
        return PermanentBackendError(str(exc))
    return exc


def is_transient(exc: openai.APIStatusError) -> bool:
    return exc.status_code in (408, 409, 429) or exc.status_code >= 500


def first_retry_delay(exc: Exception) -> float:
    """The wait before retrying a failed probe, as the SDK's first retry would: Retry-After
    (retry-after-ms, seconds, or an HTTP date) up to 60 s, else 0.5 s less up to 25 % jitter."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    with contextlib.suppress(TypeError, ValueError):
        if headers.get("retry-after-ms"):
            return min(RETRY_AFTER_CAP_SECONDS, max(0.0, float(headers["retry-after-ms"]) / 1000))
    value = headers.get("retry-after")
    if value:
        with contextlib.suppress(TypeError, ValueError):
            return min(RETRY_AFTER_CAP_SECONDS, max(0.0, float(value)))
        with contextlib.suppress(TypeError, ValueError):
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
            return min(RETRY_AFTER_CAP_SECONDS, max(0.0, seconds))
    return 0.5 * (1 - 0.25 * random.random())


def retries_taken(raw: Any) -> int:
    """Retries the SDK made before this response: its own count, else the request header."""
    taken = getattr(raw, "retries_taken", None)
    if isinstance(taken, int):
        return taken
    with contextlib.suppress(Exception):
        return int(raw.http_request.headers.get("x-stainless-retry-count") or 0)
    return 0


# The SDK's client follows redirects; an allowed endpoint answering 307 would send the prompts
# (and the API key) to any address, e.g. an internal service (SSRF). Only the configured,
# allowlisted base URL is ever called: a redirect is an error (map_openai_error names it).
FOLLOW_REDIRECTS = False


def timeout_counting_http_client(on_timeout: Callable[[], None]) -> Any:
    """The SDK's default HTTP client with a transport that reports every timed-out request,
    including those the SDK retries by itself. The SDK has used httpx and then httpx2; the
    transport comes from whichever its client is built on; if it cannot be found, the SDK's
    client without the counting (only the timeouts that end a call are counted). Neither
    follows redirects."""
    try:
        module = None
        for cls in openai.DefaultHttpxClient.__mro__:
            root = cls.__module__.split(".")[0]
            if root.startswith("httpx"):
                module = sys.modules[root]
                break
        if module is None:
            return openai.DefaultHttpxClient(follow_redirects=FOLLOW_REDIRECTS)
        base_transport = module.HTTPTransport
        timeout_error = module.TimeoutException

        class TimeoutCountingTransport(base_transport):  # type: ignore[misc, valid-type]
            def handle_request(self, request: Any) -> Any:
                try:
                    return super().handle_request(request)
                except timeout_error:
                    on_timeout()
                    raise

        return openai.DefaultHttpxClient(
            transport=TimeoutCountingTransport(), follow_redirects=FOLLOW_REDIRECTS
        )
    except Exception:  # an SDK layout we do not know: count less, judge all the same
        logger.debug("timeout counting unavailable", exc_info=True)
        return openai.DefaultHttpxClient(follow_redirects=FOLLOW_REDIRECTS)
