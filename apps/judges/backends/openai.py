"""The LLM judge backend: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp...).

The only module that imports ``openai``. What it does to survive real servers:

- **Bounded output.** Every call sends ``max_tokens`` (``LLM_MAX_TOKENS``, default 200): a reply
  is one short JSON object, and a small local model left unbounded generates until its context
  is full (95-150 s a call on 2 cores, see docs/notes/llm.md).
- **Constrained replies.** The reply format is asked for with ``response_format``, best first:
  ``json_schema`` (score limited to the dimension's levels, confidence an integer 0-100),
  ``json_object`` carrying the same schema (llama-cpp-python turns it into a grammar; other
  servers ignore the extra key), plain ``json_object``, and plain text last. An endpoint that
  refuses a format (HTTP 4xx/5xx whose error names ``response_format``) is asked again at once
  with the next one, and the format that worked is remembered per endpoint and model: in this
  process, and in Django's cache when one is configured, so the refusal is paid once.
  ``JudgeReply.response_mode`` says which of json_schema / json_object / text produced it.
- **Retries** are the SDK's own (``max_retries``): 408, 409, 429, 5xx, timeouts and connection
  errors, with exponential backoff and jitter, honouring Retry-After. The number taken is read
  from the raw response (``retries_taken``, also sent as the ``x-stainless-retry-count``
  header). Once they are exhausted, TransientBackendError is raised (the Celery task defers the
  run); other 4xx raise PermanentBackendError at once.
- **Re-asks.** A reply that does not parse, or whose score is off the scale, is asked again up
  to ``max_reasks`` (default 4) times: the bad reply and a short correction are appended (the
  prompt prefix stays the same, so it stays cacheable). If no valid reply comes, a JudgeReply
  with ``error`` set and ``score`` None is returned (no exception).
- **Timeouts without self-inflicted queues.** ``LLM_MAX_CONCURRENCY`` (default 0: no limit)
  caps the calls in flight to one endpoint from this process. Calls wait for a place here,
  where waiting does not count against the timeout, instead of in the server's queue, where a
  single-slot server (llama.cpp) makes each wait behind the others until they time out and are
  sent again behind their own abandoned copies.
Tokens (prompt, completion, cached prompt) and latency are summed over every call.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import openai
from openai import OpenAI

from apps.judges.backends.config import setting_or_default
from apps.judges.engine.judgment import (
    JudgeReply,
    JudgeRequest,
    PermanentBackendError,
    RubricDimension,
    TransientBackendError,
)
from apps.judges.engine.parsing import ReplyError, parse_reply
from apps.judges.engine.prompting import build_messages, correction_message, prompt_fingerprint

logger = logging.getLogger(__name__)

# Local servers accept any key, but the SDK refuses an empty one.
PLACEHOLDER_API_KEY = "not-needed"
DEFAULT_MAX_TOKENS = 200
DEFAULT_TIMEOUT_SECONDS = 120.0
DEFAULT_MAX_RETRIES = 5
RETRY_AFTER_CAP_SECONDS = 60.0  # what the SDK honours; longer waits fall back to its backoff
# Longest reason the schema allows: a sentence or two. Under a grammar every token costs a pass
# over the whole vocabulary (262k for Gemma 3 with llama-cpp-python), so the bound is what
# keeps a constrained reply to ~35 tokens.
REASON_MAX_CHARS = 100
# Text mode only: a one-line JSON reply ends at "}\n"; stopping there saves the prose a chatty
# model adds after it. The stop string is not returned, and parse_reply closes the brace.
TEXT_MODE_STOP = ["}\n"]

RESPONSE_MODES = ("json_schema", "json_object", "text")
# The ladder tried from the top; each step names the mode recorded on the prediction.
_STEPS: tuple[tuple[str, str], ...] = (
    ("json_schema", "json_schema"),
    ("json_object_schema", "json_object"),
    ("json_object", "json_object"),
    ("text", "text"),
)
_STEP_NAMES = [name for name, _ in _STEPS]
_MODE_OF_STEP = dict(_STEPS)
# Where the ladder starts for each configured response format ("auto" = the top).
_FIRST_STEP = {
    "auto": "json_schema",
    "json_schema": "json_schema",
    "json_object": "json_object_schema",
    "text": "text",
}
# What a refusal of the response format says (llama-cpp-python: "('body', 'response_format',
# 'type') ... Input should be 'text' or 'json_object'").
_FORMAT_WORDS = ("response_format", "response format", "json_schema", "json_object")
_MEMORY_SECONDS = 24 * 3600  # in Django's cache: a server may be upgraded

_endpoint_steps: dict[str, str] = {}
_endpoint_lock = threading.Lock()
_gates: dict[tuple[str, int], threading.BoundedSemaphore] = {}


def _endpoint_key(base_url: str | None, model: str) -> str:
    return f"{(base_url or 'https://api.openai.com/v1').rstrip('/')}|{model}"


def _cache() -> Any | None:
    """Django's default cache when Django is configured; None in plain-Python use."""
    try:
        from django.conf import settings

        if not settings.configured:
            return None
        from django.core.cache import cache

        return cache
    except Exception:  # Django missing or misconfigured: remember in this process only
        return None


def _cache_key(endpoint: str) -> str:
    return "judges:llm-response-step:" + hashlib.sha256(endpoint.encode()).hexdigest()[:32]


def remembered_step(endpoint: str) -> tuple[str, bool] | None:
    """(step, confirmed) remembered for this endpoint and model: the step that worked, or the
    one to try after a refusal (not yet confirmed, so a refusal of it is still recognised)."""
    with _endpoint_lock:
        value = _endpoint_steps.get(endpoint)
    if value is None:
        cache = _cache()
        if cache is not None:
            try:
                value = cache.get(_cache_key(endpoint))
            except Exception:  # a cache outage must not stop judging
                value = None
            if isinstance(value, str):
                with _endpoint_lock:
                    _endpoint_steps[endpoint] = value
    if not isinstance(value, str):
        return None
    step, unconfirmed, _ = value.partition("?")
    if step not in _STEP_NAMES:
        return None
    return step, not unconfirmed


def remember_step(endpoint: str, step: str, *, confirmed: bool) -> None:
    value = step if confirmed else f"{step}?"
    with _endpoint_lock:
        _endpoint_steps[endpoint] = value
    cache = _cache()
    if cache is not None:
        try:
            cache.set(_cache_key(endpoint), value, _MEMORY_SECONDS)
        except Exception:
            logger.warning("could not store the response format of %s in the cache", endpoint)


def forget_endpoints() -> None:
    """Forget every remembered response format (tests; after a server upgrade)."""
    with _endpoint_lock:
        endpoints = list(_endpoint_steps)
        _endpoint_steps.clear()
    cache = _cache()
    if cache is not None:
        for endpoint in endpoints:
            with contextlib.suppress(Exception):
                cache.delete(_cache_key(endpoint))


@contextlib.contextmanager
def _gate(base_url: str | None, limit: int) -> Iterator[None]:
    """At most ``limit`` calls in flight to one endpoint from this process (0: no limit)."""
    if limit <= 0:
        yield
        return
    key = ((base_url or "").rstrip("/"), limit)
    with _endpoint_lock:
        semaphore = _gates.setdefault(key, threading.BoundedSemaphore(limit))
    with semaphore:
        yield


def reply_schema(dimension: RubricDimension) -> dict[str, Any]:
    """JSON schema of one judgment on ``dimension``: the score is one of its levels.

    The reason comes last and is bounded: a grammar-constrained small model tends to write one
    reason sentence after another, and a reply cut by max_tokens inside the reason still
    carries its score and confidence (parse_reply closes the string)."""
    levels = list(range(dimension.scale_min, dimension.scale_max + 1))
    return {
        "type": "object",
        "properties": {
            "score": {
                "type": "integer",
                "enum": levels,
                "minimum": dimension.scale_min,
                "maximum": dimension.scale_max,
            },
            "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
            "reason": {"type": "string", "maxLength": REASON_MAX_CHARS},
        },
        "required": ["score", "confidence", "reason"],
        "additionalProperties": False,
    }


def response_format_for(step: str, dimension: RubricDimension) -> dict[str, Any] | None:
    if step == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "judgment", "schema": reply_schema(dimension)},
        }
    if step == "json_object_schema":
        return {"type": "json_object", "schema": reply_schema(dimension)}
    if step == "json_object":
        return {"type": "json_object"}
    return None


def _error_text(exc: openai.APIStatusError) -> str:
    parts = [str(exc.message or "")]
    body = getattr(exc, "body", None)
    if body is not None:
        parts.append(str(body))
    with contextlib.suppress(Exception):
        parts.append(exc.response.text)
    return " ".join(parts).lower()


def is_format_refusal(exc: Exception, step: str) -> bool:
    """An HTTP 4xx/5xx whose error names the response format we sent (not a passing outage)."""
    if step == "text" or not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code < 400 or exc.status_code == 429:
        return False
    text = _error_text(exc)
    return any(
        word in text
        for word in ("response_format", "response format", "json_schema", "json_object")
    )


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


class _Usage:
    __slots__ = ("prompt", "completion", "cached", "latency", "retries", "mode")

    def __init__(self) -> None:
        self.prompt = self.completion = self.cached = self.retries = 0
        self.latency = 0.0
        self.mode = ""


class OpenAIBackend:
    name = "openai"
    is_llm = True
    label = "LLM (OpenAI-compatible endpoint)"

    def __init__(
        self,
        *,
        base_url: str = "",
        api_key: str = "",
        model: str = "",
        timeout: float | None = None,
        max_retries: int | None = None,
        max_reasks: int = 4,
        response_format: str | None = None,
        json_mode: bool | None = None,
        send_seed: bool = True,
        max_tokens: int | None = None,
        max_concurrency: int | None = None,
        **_ignored: object,
    ) -> None:
        self.base_url = base_url or None
        self.model = model
        self.timeout = float(
            timeout
            if timeout is not None
            else setting_or_default("LLM_TIMEOUT_SECONDS", DEFAULT_TIMEOUT_SECONDS)
        )
        self.max_retries = max(
            0,
            int(
                max_retries
                if max_retries is not None
                else setting_or_default("LLM_MAX_RETRIES", DEFAULT_MAX_RETRIES)
            ),
        )
        self.max_reasks = max(0, int(max_reasks))
        if response_format is None:
            # json_mode (older option): True asks for json_object, False for plain text.
            if json_mode is not None:
                response_format = "json_object" if json_mode else "text"
            else:
                response_format = setting_or_default("LLM_RESPONSE_FORMAT", "auto")
        if response_format not in _FIRST_STEP:
            raise ValueError(
                f"response_format must be one of {', '.join(_FIRST_STEP)}, got {response_format!r}"
            )
        self.response_format = response_format
        self.send_seed = bool(send_seed)
        if max_tokens is None:
            max_tokens = setting_or_default("LLM_MAX_TOKENS", DEFAULT_MAX_TOKENS)
        self.max_tokens = int(max_tokens or 0)  # 0: send none (the server's own limit)
        if max_concurrency is None:
            max_concurrency = setting_or_default("LLM_MAX_CONCURRENCY", 0)
        self.max_concurrency = max(0, int(max_concurrency or 0))
        # HTTP requests that ran out of time, retried or not: each one is a request the server
        # may still be working on for nobody (benchmarks report it; 0 is the target).
        self.timeouts = 0
        self._stats_lock = threading.Lock()
        # One client (one connection pool) per backend; httpx clients are thread-safe.
        self.client = OpenAI(
            base_url=self.base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=self.timeout,
            max_retries=self.max_retries,
            http_client=_timeout_counting_http_client(self._count_timeout),
        )

    def _count_timeout(self) -> None:
        with self._stats_lock:
            self.timeouts += 1

    # -- response formats ------------------------------------------------------------------
    def _first_step(self, model: str) -> tuple[str, bool]:
        """(step to use, whether it is known to work) for this endpoint and model."""
        first = _FIRST_STEP[self.response_format]
        remembered = remembered_step(_endpoint_key(self.base_url, model))
        if remembered is not None:
            step, confirmed = remembered
            if _STEP_NAMES.index(step) >= _STEP_NAMES.index(first):
                return step, confirmed
        return first, False

    # -- one call -------------------------------------------------------------------------
    def _create(self, params: dict[str, Any], usage: _Usage, *, max_retries: int) -> Any:
        client = (
            self.client
            if max_retries == self.max_retries
            else self.client.with_options(max_retries=max_retries)
        )
        started = time.perf_counter()
        try:
            with _gate(self.base_url, self.max_concurrency):
                started = time.perf_counter()  # waiting for a place is not latency
                raw = client.chat.completions.with_raw_response.create(**params)
        finally:
            usage.latency += time.perf_counter() - started
        usage.retries += _retries_taken(raw)
        return raw.parse()

    def _complete(
        self, messages: list[dict[str, str]], request: JudgeRequest, usage: _Usage
    ) -> tuple[str, str]:
        """One reply (text, finish reason), walking down the response-format ladder if the
        endpoint refuses a format."""
        model = request.model or self.model
        endpoint = _endpoint_key(self.base_url, model)
        step, known = self._first_step(model)
        outage = False  # a transient failure seen while the format was still unconfirmed
        while True:
            params: dict[str, Any] = {
                "model": model,
                "messages": messages,
                "temperature": request.temperature,
            }
            if self.send_seed:
                params["seed"] = request.seed
            if self.max_tokens:
                params["max_tokens"] = self.max_tokens
            response_format = response_format_for(step, request.dimension)
            if response_format is not None:
                params["response_format"] = response_format
            else:
                params["stop"] = TEXT_MODE_STOP
            # An unconfirmed format is tried once without retries: a refusal is often a 500
            # (llama-cpp-python), which the SDK would otherwise retry max_retries times.
            call_retries = self.max_retries - int(outage) if (known or outage) else 0
            try:
                response = self._create(params, usage, max_retries=call_retries)
            except openai.APIStatusError as exc:
                if not known and is_format_refusal(exc, step):
                    following = _STEP_NAMES[_STEP_NAMES.index(step) + 1]
                    logger.info(
                        "%s refused response_format %s (HTTP %s); using %s",
                        endpoint,
                        step,
                        exc.status_code,
                        following,
                    )
                    remember_step(endpoint, following, confirmed=False)
                    step = following
                    continue
                if not (known or outage) and self.max_retries and _transient(exc):
                    outage = True  # an outage, not a refusal: retry as the SDK would
                    usage.retries += 1
                    time.sleep(_first_retry_delay(exc))
                    continue
                taken = call_retries if _transient(exc) else 0
                raise map_openai_error(exc, retries=usage.retries + taken) from exc
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                if not (known or outage) and self.max_retries:
                    outage = True
                    usage.retries += 1
                    time.sleep(_first_retry_delay(exc))
                    continue
                raise map_openai_error(exc, retries=usage.retries + call_retries) from exc
            except openai.OpenAIError as exc:
                raise map_openai_error(exc) from exc
            if not known:
                remember_step(endpoint, step, confirmed=True)
            usage.mode = _MODE_OF_STEP[step]
            if response.usage is not None:
                usage.prompt += response.usage.prompt_tokens or 0
                usage.completion += response.usage.completion_tokens or 0
                details = getattr(response.usage, "prompt_tokens_details", None)
                usage.cached += (getattr(details, "cached_tokens", None) or 0) if details else 0
            if not response.choices:
                return "", ""
            choice = response.choices[0]
            return choice.message.content or "", choice.finish_reason or ""

    # -- judging --------------------------------------------------------------------------
    def judge(self, request: JudgeRequest) -> JudgeReply:
        messages = build_messages(request)
        fingerprint = prompt_fingerprint(messages)
        model = request.model or self.model
        d = request.dimension
        usage = _Usage()
        raw = ""
        error = ""
        attempts = 0
        for _ in range(1 + self.max_reasks):
            raw, finish_reason = self._complete(messages, request, usage)
            attempts += 1
            try:
                parsed = parse_reply(raw, scale_min=d.scale_min, scale_max=d.scale_max)
            except ReplyError as exc:
                error = exc.message
                if finish_reason == "length":
                    error += f" (the reply was cut at max_tokens={self.max_tokens})"
                messages = [
                    *messages,
                    {"role": "assistant", "content": raw},
                    correction_message(error, d),
                ]
                continue
            return JudgeReply(
                score=parsed.score,
                reason=parsed.reason,
                confidence=parsed.confidence,
                raw=raw,
                attempts=attempts,
                prompt_tokens=usage.prompt,
                completion_tokens=usage.completion,
                cached_prompt_tokens=usage.cached,
                latency_ms=round(usage.latency * 1000),
                prompt_fingerprint=fingerprint,
                model=model,
                retries=usage.retries,
                response_mode=usage.mode,
            )
        return JudgeReply(
            score=None,
            reason="",
            confidence=None,
            raw=raw,
            attempts=attempts,
            prompt_tokens=usage.prompt,
            completion_tokens=usage.completion,
            cached_prompt_tokens=usage.cached,
            latency_ms=round(usage.latency * 1000),
            error=f"no usable reply after {attempts} attempts: {error}",
            prompt_fingerprint=fingerprint,
            model=model,
            retries=usage.retries,
            response_mode=usage.mode,
        )

    # -- embeddings -----------------------------------------------------------------------
    def embed(
        self, texts: list[str], *, model: str = "", batch_size: int = 64
    ) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + batch_size]]
            try:
                response = self.client.embeddings.create(
                    model=model or self.model, input=batch, encoding_format="float"
                )
            except openai.OpenAIError as exc:
                raise map_openai_error(exc) from exc
            rows = sorted(response.data, key=lambda item: item.index)
            vectors.extend(list(item.embedding) for item in rows)
        return vectors


def _first_retry_delay(exc: Exception) -> float:
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


# The SDK's client follows redirects; an allowed endpoint answering 307 would send the prompts
# (and the API key) to any address, e.g. an internal service (SSRF). Only the configured,
# allowlisted base URL is ever called: a redirect is an error (map_openai_error names it).
FOLLOW_REDIRECTS = False


def _timeout_counting_http_client(on_timeout: Callable[[], None]) -> Any:
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
            return None
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


def _transient(exc: openai.APIStatusError) -> bool:
    return exc.status_code in (408, 409, 429) or exc.status_code >= 500


def _retries_taken(raw: Any) -> int:
    """Retries the SDK made before this response: its own count, else the request header."""
    taken = getattr(raw, "retries_taken", None)
    if isinstance(taken, int):
        return taken
    with contextlib.suppress(Exception):
        return int(raw.http_request.headers.get("x-stainless-retry-count") or 0)
    return 0


def embed_texts_remote(
    texts: list[str], *, base_url: str, api_key: str, model: str, timeout: float = 60.0
) -> list[list[float]]:
    """Embeddings through an OpenAI-compatible endpoint, with the same retry policy."""
    if not texts:
        return []
    backend = OpenAIBackend(base_url=base_url, api_key=api_key, model=model, timeout=timeout)
    return backend.embed(texts, model=model)
