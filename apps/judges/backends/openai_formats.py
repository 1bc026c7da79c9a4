"""The reply formats asked of an OpenAI-compatible endpoint, and which one each endpoint takes.

The format is asked for with ``response_format``, best first: ``json_schema`` (score limited to
the dimension's levels, confidence an integer 0-100), ``json_object`` carrying the same schema
(llama-cpp-python turns it into a grammar; other servers ignore the extra key), plain
``json_object``, and plain text last. An endpoint that refuses a format (HTTP 4xx/5xx whose error
names ``response_format``) is asked again at once with the next one, and the format that worked
is remembered per endpoint and model: in this process, and in Django's cache when one is
configured, so the refusal is paid once. The call loop that walks this ladder is
``OpenAIBackend._complete`` in ``openai.py``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from typing import Any

import openai

from apps.judges.engine.judgment import RubricDimension

logger = logging.getLogger(__name__)

# Longest reason the schema allows: a sentence or two. Under a grammar every token costs a pass
# over the whole vocabulary (262k for Gemma 3 with llama-cpp-python), so the bound is what
# keeps a constrained reply to ~35 tokens.
REASON_MAX_CHARS = 100
# Text mode only: a one-line JSON reply ends at "}\n"; stopping there saves the prose a chatty
# model adds after it. The stop string is not returned, and parse_reply closes the brace.
TEXT_MODE_STOP = ["}\n"]

RESPONSE_MODES = ("json_schema", "json_object", "text")
# The ladder tried from the top; each step names the mode recorded on the prediction.
STEPS: tuple[tuple[str, str], ...] = (
    ("json_schema", "json_schema"),
    ("json_object_schema", "json_object"),
    ("json_object", "json_object"),
    ("text", "text"),
)
STEP_NAMES = [name for name, _ in STEPS]
MODE_OF_STEP = dict(STEPS)
# Where the ladder starts for each configured response format ("auto" = the top).
FIRST_STEP = {
    "auto": "json_schema",
    "json_schema": "json_schema",
    "json_object": "json_object_schema",
    "text": "text",
}
# What a refusal of the response format says (llama-cpp-python: "('body', 'response_format',
# 'type') ... Input should be 'text' or 'json_object'").
FORMAT_WORDS = ("response_format", "response format", "json_schema", "json_object")
_MEMORY_SECONDS = 24 * 3600  # in Django's cache: a server may be upgraded

_endpoint_steps: dict[str, str] = {}
_endpoint_lock = threading.Lock()


def endpoint_key(base_url: str | None, model: str) -> str:
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
    if step not in STEP_NAMES:
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
    return any(word in text for word in FORMAT_WORDS)
