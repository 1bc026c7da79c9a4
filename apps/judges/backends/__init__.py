"""Judge backends: "openai" (any OpenAI-compatible endpoint) and "local" (statistical baseline).

Import from here; ``apps.judges.backends.openai`` is imported lazily by ``get_backend`` so the
``openai`` package is only needed when that backend is used.
"""

from apps.judges.backends.base import (
    LOCAL_BASELINE_LABEL,
    Example,
    JudgeBackend,
    JudgeReply,
    JudgeRequest,
    PermanentBackendError,
    RubricDimension,
    TransientBackendError,
    get_backend,
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
    "get_backend",
    "judge_many",
]
