"""The LLM judge backend: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp...).

With its three helpers, the only modules that import ``openai``: ``openai_formats`` (the reply
formats and which one each endpoint takes), ``openai_transport`` (errors, retries, the
concurrency gate and timeout counting) and ``openai_chat`` (free-form chat for the panels).
What it does to survive real servers:

- **Bounded output.** Every call sends ``max_tokens`` (``LLM_MAX_TOKENS``, default 200): a reply
  is one short JSON object, and a small local model left unbounded generates until its context
  is full (95-150 s a call on 2 cores, see docs/decisions/0007-local-llm-server.md).
- **Constrained replies.** The reply format is asked for with ``response_format``, best first,
  walking down a ladder when an endpoint refuses one (``openai_formats``).
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
  caps the calls in flight to one endpoint from this process (``openai_transport.gate``).
Tokens (prompt, completion, cached prompt) and latency are summed over every call.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import openai
from openai import OpenAI

from apps.judges.backends.config import setting_or_default
from apps.judges.backends.openai_chat import ChatReply, chat_completion
from apps.judges.backends.openai_formats import (
    FIRST_STEP,
    MODE_OF_STEP,
    RESPONSE_MODES,
    STEP_NAMES,
    TEXT_MODE_STOP,
    endpoint_key,
    forget_endpoints,
    is_format_refusal,
    remember_step,
    remembered_step,
    reply_schema,
    response_format_for,
)
from apps.judges.backends.openai_formats import _endpoint_steps as _endpoint_steps
from apps.judges.backends.openai_transport import (
    Usage,
    first_retry_delay,
    gate,
    is_transient,
    map_openai_error,
    retries_taken,
    timeout_counting_http_client,
)
from apps.judges.engine.judgment import JudgeReply, JudgeRequest
from apps.judges.engine.parsing import ReplyError, parse_reply
from apps.judges.engine.prompting import build_messages, correction_message, prompt_fingerprint

__all__ = [
    "ChatReply",
    "DEFAULT_MAX_TOKENS",
    "RESPONSE_MODES",
    "OpenAIBackend",
    "embed_texts_remote",
    "forget_endpoints",
    "is_format_refusal",
    "map_openai_error",
    "remember_step",
    "remembered_step",
    "reply_schema",
    "response_format_for",
]

logger = logging.getLogger(__name__)

# Local servers accept any key, but the SDK refuses an empty one.
PLACEHOLDER_API_KEY = "not-needed"
DEFAULT_MAX_TOKENS = 200
DEFAULT_TIMEOUT_SECONDS = 120.0
DEFAULT_MAX_RETRIES = 5

# The old private name (tests and callers that seed the memory use it).
_endpoint_key = endpoint_key


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
        if response_format not in FIRST_STEP:
            raise ValueError(
                f"response_format must be one of {', '.join(FIRST_STEP)}, got {response_format!r}"
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
            http_client=timeout_counting_http_client(self._count_timeout),
        )

    def _count_timeout(self) -> None:
        with self._stats_lock:
            self.timeouts += 1

    # -- response formats ------------------------------------------------------------------
    def _first_step(self, model: str) -> tuple[str, bool]:
        """(step to use, whether it is known to work) for this endpoint and model."""
        first = FIRST_STEP[self.response_format]
        remembered = remembered_step(endpoint_key(self.base_url, model))
        if remembered is not None:
            step, confirmed = remembered
            if STEP_NAMES.index(step) >= STEP_NAMES.index(first):
                return step, confirmed
        return first, False

    # -- one call -------------------------------------------------------------------------
    def create(self, params: dict[str, Any], usage: Usage, *, max_retries: int) -> Any:
        client = (
            self.client
            if max_retries == self.max_retries
            else self.client.with_options(max_retries=max_retries)
        )
        started = time.perf_counter()
        try:
            with gate(self.base_url, self.max_concurrency):
                started = time.perf_counter()  # waiting for a place is not latency
                raw = client.chat.completions.with_raw_response.create(**params)
        finally:
            usage.latency += time.perf_counter() - started
        usage.retries += retries_taken(raw)
        return raw.parse()

    def _complete(
        self, messages: list[dict[str, str]], request: JudgeRequest, usage: Usage
    ) -> tuple[str, str]:
        """One reply (text, finish reason), walking down the response-format ladder if the
        endpoint refuses a format."""
        model = request.model or self.model
        endpoint = endpoint_key(self.base_url, model)
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
                response = self.create(params, usage, max_retries=call_retries)
            except openai.APIStatusError as exc:
                if not known and is_format_refusal(exc, step):
                    following = STEP_NAMES[STEP_NAMES.index(step) + 1]
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
                if not (known or outage) and self.max_retries and is_transient(exc):
                    outage = True  # an outage, not a refusal: retry as the SDK would
                    usage.retries += 1
                    time.sleep(first_retry_delay(exc))
                    continue
                taken = call_retries if is_transient(exc) else 0
                raise map_openai_error(exc, retries=usage.retries + taken) from exc
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                if not (known or outage) and self.max_retries:
                    outage = True
                    usage.retries += 1
                    time.sleep(first_retry_delay(exc))
                    continue
                raise map_openai_error(exc, retries=usage.retries + call_retries) from exc
            except openai.OpenAIError as exc:
                raise map_openai_error(exc) from exc
            if not known:
                remember_step(endpoint, step, confirmed=True)
            usage.mode = MODE_OF_STEP[step]
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
        usage = Usage()
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
            return _judge_reply(
                usage,
                raw=raw,
                attempts=attempts,
                fingerprint=fingerprint,
                model=model,
                score=parsed.score,
                reason=parsed.reason,
                confidence=parsed.confidence,
            )
        return _judge_reply(
            usage,
            raw=raw,
            attempts=attempts,
            fingerprint=fingerprint,
            model=model,
            score=None,
            reason="",
            confidence=None,
            error=f"no usable reply after {attempts} attempts: {error}",
        )

    # -- free-form chat (panels): openai_chat.py -----------------------------------------
    def chat(self, messages: list[dict[str, str]], **options: Any) -> ChatReply:
        """One chat completion outside the judge protocol (persona extraction, debate turns);
        the options are ``openai_chat.chat_completion``'s."""
        return chat_completion(self, messages, **options)

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


def _judge_reply(
    usage: Usage, *, raw: str, attempts: int, fingerprint: str, model: str, **outcome: Any
) -> JudgeReply:
    """A judgment with what its calls cost; ``outcome``: score, reason, confidence, error."""
    return JudgeReply(
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
        **outcome,
    )


def embed_texts_remote(
    texts: list[str], *, base_url: str, api_key: str, model: str, timeout: float = 60.0
) -> list[list[float]]:
    """Embeddings through an OpenAI-compatible endpoint, with the same retry policy."""
    if not texts:
        return []
    backend = OpenAIBackend(base_url=base_url, api_key=api_key, model=model, timeout=timeout)
    return backend.embed(texts, model=model)
