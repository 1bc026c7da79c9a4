"""The LLM judge backend: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp...).

The only module that imports ``openai``. The SDK's own retries are switched off
(``max_retries=0``) so this module decides what is retried and how:

- transient failures (429, 408/409, 5xx, timeouts, connection errors) are retried up to
  ``max_retries`` times with exponential backoff and full jitter, honouring Retry-After /
  retry-after-ms on 429 and 503; once exhausted, TransientBackendError is raised (the Celery
  task may retry the whole item later);
- permanent failures (401, 403, 404, 400, 422 ...) raise PermanentBackendError at once;
- a reply that cannot be parsed, or whose score is off the scale, is asked again up to
  ``max_reasks`` (default 4) times: the bad reply and a short correction are appended to the
  conversation (the prompt prefix stays the same, so it stays cacheable). If no valid reply
  comes, a JudgeReply with ``error`` set and ``score`` None is returned (no exception).
Tokens (prompt, completion, cached prompt) and latency are summed over every call.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

import openai
from openai import OpenAI

from apps.judges.backends.base import (
    JudgeReply,
    JudgeRequest,
    PermanentBackendError,
    TransientBackendError,
)
from apps.judges.parsing import ReplyError, parse_reply
from apps.judges.prompting import build_messages, correction_message, prompt_fingerprint

logger = logging.getLogger(__name__)

# Local servers accept any key, but the SDK refuses an empty one.
PLACEHOLDER_API_KEY = "not-needed"
RETRY_AFTER_CAP_SECONDS = 120.0


def _retry_after_seconds(headers: Any) -> float | None:
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def map_openai_error(exc: Exception) -> Exception:
    """Translate an SDK exception into the project's transient/permanent errors."""
    if isinstance(exc, openai.APITimeoutError):
        return TransientBackendError(f"timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return TransientBackendError(f"connection failed: {exc}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = _retry_after_seconds(getattr(exc.response, "headers", None))
        if status == 429 or status in (408, 409) or status >= 500:
            return TransientBackendError(f"HTTP {status}: {exc.message}", retry_after=retry_after)
        return PermanentBackendError(f"HTTP {status}: {exc.message}")
    if isinstance(exc, openai.OpenAIError):
        return PermanentBackendError(str(exc))
    return exc


class _Usage:
    __slots__ = ("prompt", "completion", "cached", "latency", "retries")

    def __init__(self) -> None:
        self.prompt = self.completion = self.cached = self.retries = 0
        self.latency = 0.0


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
        timeout: float = 60.0,
        max_retries: int = 5,
        max_reasks: int = 4,
        json_mode: bool = False,
        send_seed: bool = True,
        max_tokens: int | None = None,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        **_ignored: object,
    ) -> None:
        self.base_url = base_url or None
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.max_reasks = max(0, int(max_reasks))
        self.json_mode = bool(json_mode)  # response_format json_object: many local servers lack it
        self.send_seed = bool(send_seed)
        self.max_tokens = max_tokens
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self._sleep = sleep
        self._random = random.Random()
        self._random_lock = threading.Lock()
        # One client (one connection pool) per backend; httpx clients are thread-safe.
        self.client = OpenAI(
            base_url=self.base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=self.timeout,
            max_retries=0,
        )

    # -- retries --------------------------------------------------------------------------
    def backoff_delay(self, retry_index: int, retry_after: float | None) -> float:
        """Exponential backoff with full jitter; Retry-After, when given, is a floor."""
        ceiling = min(self.backoff_max, self.backoff_base * (2**retry_index))
        with self._random_lock:
            delay = self._random.uniform(0, ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, RETRY_AFTER_CAP_SECONDS))
        return delay

    def _with_retries(self, call: Callable[[], Any], usage: _Usage, what: str) -> Any:
        retry_index = 0
        while True:
            started = time.perf_counter()
            try:
                result = call()
            except Exception as exc:  # noqa: BLE001 - mapped just below
                # Time the failed call, not the backoff sleep that follows.
                usage.latency += time.perf_counter() - started
                mapped = map_openai_error(exc)
                if not isinstance(mapped, TransientBackendError):
                    if mapped is exc:
                        raise
                    raise mapped from exc
                if retry_index >= self.max_retries:
                    raise TransientBackendError(
                        f"{what}: gave up after {retry_index + 1} calls; last error {mapped}",
                        retry_after=mapped.retry_after,
                    ) from exc
                delay = self.backoff_delay(retry_index, mapped.retry_after)
                logger.info("%s: transient error (%s); retry in %.2fs", what, mapped, delay)
                usage.retries += 1
                retry_index += 1
                self._sleep(delay)
            else:
                usage.latency += time.perf_counter() - started
                return result

    # -- judging --------------------------------------------------------------------------
    def _complete(self, messages: list[dict[str, str]], request: JudgeRequest, usage: _Usage):
        params: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": messages,
            "temperature": request.temperature,
        }
        if self.send_seed:
            params["seed"] = request.seed
        if self.json_mode:
            params["response_format"] = {"type": "json_object"}
        if self.max_tokens:
            params["max_tokens"] = self.max_tokens
        response = self._with_retries(
            lambda: self.client.chat.completions.create(**params), usage, "chat completion"
        )
        if response.usage is not None:
            usage.prompt += response.usage.prompt_tokens or 0
            usage.completion += response.usage.completion_tokens or 0
            details = getattr(response.usage, "prompt_tokens_details", None)
            usage.cached += (getattr(details, "cached_tokens", None) or 0) if details else 0
        if not response.choices:
            return ""
        return response.choices[0].message.content or ""

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
            raw = self._complete(messages, request, usage)
            attempts += 1
            try:
                parsed = parse_reply(raw, scale_min=d.scale_min, scale_max=d.scale_max)
            except ReplyError as exc:
                error = exc.message
                messages = [
                    *messages,
                    {"role": "assistant", "content": raw},
                    correction_message(error, d),
                ]
                continue
            return JudgeReply(
                score=parsed.score, reason=parsed.reason, confidence=parsed.confidence,
                raw=raw, attempts=attempts, prompt_tokens=usage.prompt,
                completion_tokens=usage.completion, cached_prompt_tokens=usage.cached,
                latency_ms=round(usage.latency * 1000), prompt_fingerprint=fingerprint,
                model=model, retries=usage.retries,
            )
        return JudgeReply(
            score=None, reason="", confidence=None, raw=raw, attempts=attempts,
            prompt_tokens=usage.prompt, completion_tokens=usage.completion,
            cached_prompt_tokens=usage.cached, latency_ms=round(usage.latency * 1000),
            error=f"no usable reply after {attempts} attempts: {error}",
            prompt_fingerprint=fingerprint, model=model, retries=usage.retries,
        )

    # -- embeddings -----------------------------------------------------------------------
    def embed(
        self, texts: list[str], *, model: str = "", batch_size: int = 64
    ) -> list[list[float]]:
        usage = _Usage()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + batch_size]]
            response = self._with_retries(
                lambda b=batch: self.client.embeddings.create(
                    model=model or self.model, input=b, encoding_format="float"
                ),
                usage,
                "embeddings",
            )
            rows = sorted(response.data, key=lambda item: item.index)
            vectors.extend(list(item.embedding) for item in rows)
        return vectors


def embed_texts_remote(
    texts: list[str], *, base_url: str, api_key: str, model: str, timeout: float = 60.0
) -> list[list[float]]:
    """Embeddings through an OpenAI-compatible endpoint, with the same retry policy."""
    if not texts:
        return []
    backend = OpenAIBackend(base_url=base_url, api_key=api_key, model=model, timeout=timeout)
    return backend.embed(texts, model=model)
