"""What every judge backend shares: the request/reply types, the error types and the runner.

Plain Python (no Django) so the judges core can be tested and benchmarked alone. The backends
(``apps.judges.backends``) implement ``JudgeBackend``; ``get_backend`` there builds one by name.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from apps.judges.engine.panel import PanelScore

LOCAL_BASELINE_LABEL = "Local baseline (not an LLM)"
SIGNALS = ("panel", "text", "level")


@dataclass(frozen=True)
class PromptWording:
    """A rubric's own words for the prompts; the defaults are PBIG's (product ideas on patents).

    `task` is the opening task statement; empty means one built from the nouns (PBIG's own text
    when the nouns are PBIG's too)."""

    task: str = ""
    item_noun: str = "idea"
    source_noun: str = "patent"


PBIG_WORDING = PromptWording()


@dataclass(frozen=True)
class RubricDimension:
    """What the prompt needs to know about one rubric dimension."""

    key: str
    name: str
    description: str
    scale_min: int
    scale_max: int
    levels: dict[int, str] = field(default_factory=dict)  # level -> meaning
    # Levels that are categories rather than degrees (PBIG: 0 = "not a B2B product").
    categories: tuple[int, ...] = ()
    # How the rubric names what is rated and what it is based on.
    wording: PromptWording = PBIG_WORDING

    def __hash__(self) -> int:  # levels is a dict; hash what identifies the dimension
        return hash((self.key, self.scale_min, self.scale_max, self.categories))


@dataclass(frozen=True)
class Example:
    item_id: int  # the Rating id the example comes from (audit)
    patent_text: str
    idea_text: str
    score: int
    # The example's idea: lets a backend look up stored item vectors instead of re-reading text.
    idea_id: int | None = None


@dataclass(frozen=True)
class JudgeRequest:
    dimension: RubricDimension
    examples: tuple[Example, ...]
    patent_text: str  # the target
    idea_text: str
    seed: int = 0
    model: str = ""
    temperature: float = 0.0
    idea_id: int | None = None  # the target idea (see Example.idea_id)
    # Other reviewers' scores on the target idea (never the target reviewer's own), for the
    # backends that use the panel signal (apps.judges.engine.panel); empty = text only.
    panel: tuple[PanelScore, ...] = ()


@dataclass
class JudgeReply:
    score: int | None
    reason: str
    confidence: int | None
    raw: str  # last raw reply text (or "")
    attempts: int  # model replies obtained: 1 + re-asks (transient retries are in `retries`)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    latency_ms: int = 0  # summed over every HTTP call made for this judgment
    error: str = ""  # "" when a valid prediction was obtained
    prompt_fingerprint: str = ""  # sha256 of the rendered prompt (messages), hex
    model: str = ""
    retries: int = 0  # transient failures (429, 5xx, timeouts) retried along the way
    response_mode: str = ""  # json_schema | json_object | text for LLMs; "" for the local judge
    # Where the prediction came from: "panel" (other reviewers' scores on the idea), "text"
    # (similar examples), "level" (only the examples' level, or the scale's middle); "" = LLM.
    signal: str = ""
    panel_size: int = 0  # other reviewers behind a panel prediction

    @property
    def ok(self) -> bool:
        return not self.error and self.score is not None


class TransientBackendError(Exception):
    """429, 5xx, timeouts, connection errors. Retried inside the backend with backoff; raised
    to the caller only once the backend's own retries are exhausted (the task may retry later)."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentBackendError(Exception):
    """4xx other than 429 (bad key, unknown model, bad request): retrying cannot help."""


@runtime_checkable
class JudgeBackend(Protocol):
    name: str  # "openai" | "local"
    is_llm: bool  # False for the local statistical baseline (label it everywhere)
    label: str  # human label, e.g. "Local baseline (not an LLM)"

    def judge(self, request: JudgeRequest) -> JudgeReply:
        """Never raises for a bad reply (returns ``error`` set); may raise
        PermanentBackendError, or TransientBackendError once retries are exhausted."""
        ...


def judge_many(
    backend: JudgeBackend,
    requests: list[JudgeRequest],
    *,
    concurrency: int,
    on_reply: Callable[[int, JudgeReply], None] | None = None,
) -> list[JudgeReply]:
    """Judge every request with at most ``concurrency`` calls in flight; order is preserved.

    ``on_reply(index, reply)`` (optional) is called from the worker thread as each reply
    arrives, so callers can persist progress. If a request raises (permanent error, or
    transient after retries), requests not yet started are cancelled and the error is raised.
    """
    if not requests:
        return []
    workers = max(1, min(int(concurrency), len(requests)))

    def run(index: int, request: JudgeRequest) -> JudgeReply:
        reply = backend.judge(request)
        if on_reply is not None:
            on_reply(index, reply)
        return reply

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge") as pool:
        futures: list[Future[JudgeReply]] = [pool.submit(run, i, r) for i, r in enumerate(requests)]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f for f in futures if f.done() and f.exception() is not None), None)
        if failed is not None:
            for f in futures:
                f.cancel()
            raise failed.exception()  # type: ignore[misc]
        return [f.result() for f in futures]
