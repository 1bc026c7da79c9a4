"""Judge prompts, after paper 001's template (Figure 5), in our own words.

Layout (messages):
  1. system  - the task statement and the output format (identical for every judge);
  2. user    - the SHARED BLOCK: the dimension's instruction, its levels (categories noted),
               the examples (patent, idea, score), then the TARGET BLOCK: the patent and idea to
               score, and a one-line reminder of the output.
Everything before the target block depends only on (dimension, example set), so it is
byte-identical across all targets judged with the same examples: providers that cache prompt
prefixes (OpenAI, vLLM prefix caching, llama.cpp slots) reuse it. The target comes last.
One user message (not two) because several local chat templates refuse consecutive user turns.
"""

from __future__ import annotations

import hashlib
import json

from apps.judges.backends.base import Example, JudgeRequest, RubricDimension

# Bounds on what one text contributes, so nine examples plus a target stay within small
# context windows (claims can run to pages). Cut on a word boundary, marked with an ellipsis.
MAX_PATENT_CHARS = 2500
MAX_IDEA_CHARS = 2000

TARGET_HEADING = "## The patent and idea to score"

SYSTEM_PROMPT = (
    "You assess product ideas built on patents. Each case pairs a patent with a product idea "
    "derived from it. You will get an instruction describing one rubric dimension and its "
    "score levels; when available, several earlier cases (patent, idea and the score a reviewer "
    "gave) that show how scores are assigned; and finally a new patent and idea. Score the new "
    "idea on that dimension only, the way the earlier scores suggest.\n\n"
    "Output format: answer with exactly one line of valid JSON and nothing else:\n"
    '{"score": <integer level>, "reason": "<one or two sentences>", '
    '"confidence": <integer from 0 to 100>}\n'
    "The confidence says how sure you are that a reviewer would give this exact score."
)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def patent_text(title: str, abstract: str, claims: str = "") -> str:
    """Render a patent the same way everywhere (prompts, examples, local similarity)."""
    parts = [f"Title: {title.strip()}"]
    if abstract and abstract.strip():
        parts.append(f"Abstract: {abstract.strip()}")
    if claims and claims.strip():
        parts.append(f"Claims: {claims.strip()}")
    return _clip("\n".join(parts), MAX_PATENT_CHARS)


def idea_text(
    title: str, description: str, implementation: str = "", differentiation: str = ""
) -> str:
    """Render an idea the same way everywhere."""
    parts = [f"Title: {title.strip()}"]
    for label, value in (
        ("Description", description),
        ("Implementation", implementation),
        ("Differentiation", differentiation),
    ):
        if value and value.strip():
            parts.append(f"{label}: {value.strip()}")
    return _clip("\n".join(parts), MAX_IDEA_CHARS)


def scale_levels(dimension: RubricDimension) -> list[int]:
    return list(range(dimension.scale_min, dimension.scale_max + 1))


def instruction_block(dimension: RubricDimension) -> str:
    lines = [
        "## Instruction",
        f"Dimension: {dimension.name}",
    ]
    if dimension.description.strip():
        lines.append(dimension.description.strip())
    lines.append(
        f"Give an integer score from {dimension.scale_min} to {dimension.scale_max}. Levels:"
    )
    for level in scale_levels(dimension):
        meaning = dimension.levels.get(level, "").strip() or "(no description)"
        tag = " [category]" if level in dimension.categories else ""
        lines.append(f"- {level}{tag}: {meaning}")
    if dimension.categories:
        cats = ", ".join(str(c) for c in dimension.categories)
        lines.append(
            f"Level(s) {cats} mark a category rather than a degree: choose one only when its "
            "description applies, whatever the idea's other merits."
        )
    return "\n".join(lines)


def examples_block(examples: tuple[Example, ...]) -> str:
    if not examples:
        return ""
    lines = ["## Examples", "Earlier cases with the score they received:"]
    for n, ex in enumerate(examples, start=1):
        lines += [
            "",
            f"### Example {n}",
            "Patent:",
            ex.patent_text.strip(),
            "Idea:",
            ex.idea_text.strip(),
            f"Score: {ex.score}",
        ]
    return "\n".join(lines)


def shared_block(request: JudgeRequest) -> str:
    """The part of the user message shared by all targets of one (dimension, example set)."""
    parts = [instruction_block(request.dimension)]
    examples = examples_block(request.examples)
    if examples:
        parts.append(examples)
    return "\n\n".join(parts) + "\n\n"


def target_block(request: JudgeRequest) -> str:
    d = request.dimension
    return "\n".join(
        [
            TARGET_HEADING,
            "Patent:",
            request.patent_text.strip(),
            "Idea:",
            request.idea_text.strip(),
            "",
            f"Reply with one line of JSON: a score from {d.scale_min} to {d.scale_max}, a brief "
            "reason and your confidence (0-100).",
        ]
    )


def build_messages(request: JudgeRequest) -> list[dict[str, str]]:
    """OpenAI chat messages for one judgment; the cacheable prefix comes first."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": shared_block(request) + target_block(request)},
    ]


def correction_message(error: str, dimension: RubricDimension) -> dict[str, str]:
    """Appended after a reply we could not use (the bad reply is appended before it)."""
    return {
        "role": "user",
        "content": (
            f"That reply could not be used ({error}). Answer again with exactly one line of "
            f'JSON: {{"score": <integer from {dimension.scale_min} to {dimension.scale_max}>, '
            '"reason": "<brief reason>", "confidence": <integer from 0 to 100>}'
        ),
    }


def prompt_fingerprint(messages: list[dict[str, str]]) -> str:
    """sha256 (hex) of the messages, canonically serialised: equal prompts, equal fingerprints."""
    canonical = json.dumps(
        [{"role": m["role"], "content": m["content"]} for m in messages],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def shared_prefix_chars(messages: list[dict[str, str]]) -> int:
    """Characters before the target block (system message + shared part of the user message)."""
    total = 0
    for m in messages:
        content = m["content"]
        if m["role"] == "user" and TARGET_HEADING in content:
            return total + content.index(TARGET_HEADING)
        total += len(content)
    return total


def shared_prefix_share(messages: list[dict[str, str]]) -> float:
    """Share (0-1) of the prompt's characters that sit in the cacheable prefix."""
    total = sum(len(m["content"]) for m in messages)
    return shared_prefix_chars(messages) / total if total else 0.0
