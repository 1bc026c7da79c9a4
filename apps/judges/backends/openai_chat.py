"""Free-form chat through the LLM backend (persona extraction, panel debate turns): the same
client, retries, error mapping and concurrency gate as a judgment, outside the judge protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import openai

from apps.judges.backends.openai_formats import is_format_refusal, response_format_for
from apps.judges.backends.openai_transport import Usage, map_openai_error
from apps.judges.engine.judgment import RubricDimension
from apps.judges.engine.prompting import prompt_fingerprint

if TYPE_CHECKING:
    from apps.judges.backends.openai import OpenAIBackend


@dataclass(frozen=True)
class ChatReply:
    """A free-form chat reply with what it cost (``OpenAIBackend.chat``)."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    prompt_fingerprint: str
    model: str


def chat_completion(
    backend: OpenAIBackend,
    messages: list[dict[str, str]],
    *,
    max_tokens: int | None = None,
    json_object: bool = True,
    temperature: float = 0.0,
    seed: int = 0,
    score_on: RubricDimension | None = None,
) -> ChatReply:
    """One chat completion outside the judge protocol (persona extraction, debate turns).

    Same client, retries, error mapping and concurrency gate as ``judge``; the caller
    parses the text. ``json_object`` asks for a JSON reply, constrained to a judgment on
    ``score_on`` when given (the schema llama-cpp-python turns into a grammar; others ignore
    it); an endpoint that refuses the format is asked once more without it."""
    usage = Usage()
    params: dict[str, Any] = {
        "model": backend.model,
        "messages": messages,
        "temperature": temperature,
    }
    if backend.send_seed:
        params["seed"] = seed
    limit = backend.max_tokens if max_tokens is None else max_tokens
    if limit:
        params["max_tokens"] = limit
    if json_object:
        params["response_format"] = response_format_for(
            "json_object_schema" if score_on is not None else "json_object",
            score_on or RubricDimension(key="", name="", description="", scale_min=0, scale_max=1),
        )
    try:
        try:
            response = backend.create(params, usage, max_retries=backend.max_retries)
        except openai.APIStatusError as exc:
            if not (json_object and is_format_refusal(exc, "json_object")):
                raise
            params.pop("response_format")
            response = backend.create(params, usage, max_retries=backend.max_retries)
    except openai.OpenAIError as exc:
        raise map_openai_error(exc, retries=usage.retries) from exc
    if response.usage is not None:
        usage.prompt += response.usage.prompt_tokens or 0
        usage.completion += response.usage.completion_tokens or 0
    choice = response.choices[0] if response.choices else None
    return ChatReply(
        text=(choice.message.content or "") if choice else "",
        finish_reason=(choice.finish_reason or "") if choice else "",
        prompt_tokens=usage.prompt,
        completion_tokens=usage.completion,
        latency_ms=round(usage.latency * 1000),
        prompt_fingerprint=prompt_fingerprint(messages),
        model=backend.model,
    )
