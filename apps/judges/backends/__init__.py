"""Judge backends: "openai" (any OpenAI-compatible endpoint) and "local" (the offline judge).

Both implement ``apps.judges.engine.judgment.JudgeBackend``; ``get_backend`` builds one by name
and fills the endpoint from the LLM_* settings when Django is configured. ``embed_texts`` sends
texts to the configured embeddings endpoint, or embeds them locally when there is none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from apps.judges.backends.config import setting_or_default
from apps.judges.backends.local import LocalBackend
from apps.judges.backends.openai import OpenAIBackend, embed_texts_remote
from apps.judges.engine.embeddings import embed_texts_local, normalise_rows
from apps.judges.engine.judgment import (
    LOCAL_BASELINE_LABEL,
    Example,
    JudgeBackend,
    JudgeReply,
    JudgeRequest,
    PermanentBackendError,
    RubricDimension,
    TransientBackendError,
    judge_many,
)

__all__ = [
    "LOCAL_BASELINE_LABEL",
    "Example",
    "JudgeBackend",
    "JudgeReply",
    "JudgeRequest",
    "PermanentBackendError",
    "RubricDimension",
    "TransientBackendError",
    "embed_texts",
    "get_backend",
    "judge_many",
]


def get_backend(name: str, **options: Any) -> JudgeBackend:
    """Build a backend by name.

    "openai": options base_url, api_key, model, timeout, max_retries, max_reasks (default 4),
    response_format (auto | json_schema | json_object | text), max_tokens, max_concurrency,
    send_seed (default True). Missing ones come from settings LLM_* (docs/judges.md).
    "local": optional vectors ({idea_id: sparse 1 x width row or dense 1-D unit vector}, from
    apps.judges.vectors.item_vectors; a request whose target or any example has none is judged
    on hashed text). Its ``judge_batch(requests)`` judges many requests at once (same replies
    as ``judge``).
    """
    if name == "local":
        return LocalBackend(**options)
    if name == "openai":
        options.setdefault("base_url", setting_or_default("LLM_BASE_URL", ""))
        options.setdefault("api_key", setting_or_default("LLM_API_KEY", ""))
        options.setdefault("model", setting_or_default("LLM_MODEL", ""))
        options.setdefault("timeout", setting_or_default("LLM_TIMEOUT_SECONDS", 60.0))
        return OpenAIBackend(**options)
    raise ValueError(f"Unknown judge backend {name!r}: expected 'openai' or 'local'.")


def embed_texts(texts: Sequence[str], **options: Any) -> np.ndarray:
    """Embed texts, rows L2-normalised. ``options`` (base_url, api_key, model, timeout)
    override the EMBEDDINGS_* settings; no base URL means the local method."""
    base_url = options.get("base_url", setting_or_default("EMBEDDINGS_BASE_URL", ""))
    if not base_url or not texts:
        return embed_texts_local(texts)
    vectors = embed_texts_remote(
        list(texts),
        base_url=str(base_url),
        api_key=str(options.get("api_key", setting_or_default("EMBEDDINGS_API_KEY", ""))),
        model=str(options.get("model", setting_or_default("EMBEDDINGS_MODEL", ""))),
        timeout=float(options.get("timeout", setting_or_default("LLM_TIMEOUT_SECONDS", 60.0))),
    )
    return normalise_rows(vectors)
