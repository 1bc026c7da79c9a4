"""The panels' one way to the LLM: the OpenAI-compatible backend at LLM_BASE_URL.

Panels call only the configured endpoint (LLM_BASE_URL, always on the SSRF allowlist); there is
no per-panel URL an admin could point at an internal service."""

from __future__ import annotations

from django.conf import settings

from apps.core.errors import ApplicationError
from apps.judges.backends import get_backend
from apps.judges.backends.openai import OpenAIBackend

NO_ENDPOINT = (
    "No LLM endpoint is configured (LLM_BASE_URL is empty). Panels need one: start the demo "
    "with `bin/demo --llm` for the local model, or set LLM_BASE_URL and LLM_MODEL."
)
# Panel replies are one short JSON object; a persona extraction is longer.
TURN_MAX_TOKENS = 160
EXTRACTION_MAX_TOKENS = 700


def panel_backend() -> OpenAIBackend:
    if not settings.LLM_BASE_URL:
        raise ApplicationError(NO_ENDPOINT)
    backend = get_backend("openai")
    assert isinstance(backend, OpenAIBackend)
    return backend
