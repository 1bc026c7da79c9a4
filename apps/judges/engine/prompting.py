"""Judge prompts, after paper 001's template (Figure 5), in our own words.

Layout (messages):
  1. system  - the task statement and the output format (identical for every judge);
  2. user    - the SHARED BLOCK: the dimension's instruction, its levels (categories noted),
               the examples (patent, idea, score), then the TARGET BLOCK: the patent and idea to
               score, and a one-line reminder of the output.
When the request carries a panel (other reviewers' scores on the target; only for LLM
configurations with ``panel_evidence`` on), the target block also shows those scores mapped
onto the examples' scale (``panel_block``), after the target and before the reminder; without a
panel the prompt is the paper's, byte for byte.
Everything before the target block depends only on (dimension, example set), so it is
byte-identical across all targets judged with the same examples: providers that cache prompt
prefixes (OpenAI, vLLM prefix caching, llama.cpp slots) reuse it. The target comes last.
One user message (not two) because several local chat templates refuse consecutive user turns.
"""

from __future__ import annotations

import hashlib
import json
import re

from apps.judges.engine import panel as panel_method
from apps.judges.engine.judgment import (
    PBIG_WORDING,
    Example,
    JudgeRequest,
    PromptWording,
    RubricDimension,
)

# Bounds on what one text contributes, so nine examples plus a target stay within small
# context windows (claims can run to pages). Cut on a word boundary, marked with an ellipsis.
MAX_PATENT_CHARS = 2500
MAX_IDEA_CHARS = 2000

PBIG_TASK = (
    "You assess product ideas built on patents. Each case pairs a patent with a product idea "
    "derived from it."
)
_OUTPUT_FORMAT = (
    "Output format: answer with exactly one line of valid JSON and nothing else:\n"
    '{"score": <integer level>, "reason": "<one or two sentences>", '
    '"confidence": <integer from 0 to 100>}\n'
    "The confidence says how sure you are that a reviewer would give this exact score."
)
# Finds the target block whatever the rubric calls its items (see target_heading).
_TARGET_HEADING_RE = re.compile(r"^## The [^\n]* to score$", re.MULTILINE)


def task_statement(wording: PromptWording = PBIG_WORDING) -> str:
    """The rubric's task statement; without one, PBIG's when the nouns are PBIG's, else one
    built from the nouns."""
    if wording.task.strip():
        return wording.task.strip()
    if (wording.item_noun, wording.source_noun) == (
        PBIG_WORDING.item_noun,
        PBIG_WORDING.source_noun,
    ):
        return PBIG_TASK
    return (
        f"You score cases for a panel of reviewers. Each case pairs "
        f"{_article(wording.source_noun)} {wording.source_noun} "
        f"with {_article(wording.item_noun)} {wording.item_noun} based on it."
    )


def system_prompt(wording: PromptWording = PBIG_WORDING) -> str:
    """The system message: task statement and output format, in the rubric's words."""
    item, source = wording.item_noun, wording.source_noun
    return (
        f"{task_statement(wording)} You will get an instruction describing one rubric dimension "
        "and its score levels; when available, several earlier cases "
        f"({source}, {item} and the score a reviewer gave) that show how scores are assigned; "
        f"and finally a new {source} and {item}. Score the new {item} on that dimension only, "
        "the way the earlier scores suggest.\n\n" + _OUTPUT_FORMAT
    )


def target_heading(wording: PromptWording = PBIG_WORDING) -> str:
    return f"## The {wording.source_noun} and {wording.item_noun} to score"


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _label(noun: str) -> str:
    return noun[:1].upper() + noun[1:] + ":"


# PBIG's wording, byte for byte what every judge got before rubrics had their own words.
SYSTEM_PROMPT = system_prompt()
TARGET_HEADING = target_heading()


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
    """Render an idea the same way everywhere (an idea without a title starts with its text)."""
    parts = [f"Title: {title.strip()}"] if title.strip() else []
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


def examples_block(examples: tuple[Example, ...], wording: PromptWording = PBIG_WORDING) -> str:
    if not examples:
        return ""
    lines = ["## Examples", "Earlier cases with the score they received:"]
    for n, ex in enumerate(examples, start=1):
        lines += [
            "",
            f"### Example {n}",
            _label(wording.source_noun),
            ex.patent_text.strip(),
            _label(wording.item_noun),
            ex.idea_text.strip(),
            f"Score: {ex.score}",
        ]
    return "\n".join(lines)


def shared_block(request: JudgeRequest) -> str:
    """The part of the user message shared by all targets of one (dimension, example set)."""
    parts = [instruction_block(request.dimension)]
    examples = examples_block(request.examples, request.dimension.wording)
    if examples:
        parts.append(examples)
    return "\n\n".join(parts) + "\n\n"


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def panel_block(request: JudgeRequest) -> str:
    """The other reviewers' scores on the target, each mapped onto the examples' scale
    (engine.panel.evidence); "" without a panel. The target reviewer's own scores are never
    in ``request.panel``, so they cannot appear here."""
    d = request.dimension
    found = panel_method.evidence(
        request.panel,
        [e.score for e in request.examples],
        scale_min=d.scale_min,
        scale_max=d.scale_max,
        categories=d.categories,
    )
    if found is None:
        return ""
    item = d.wording.item_noun
    n = len(found.mapped) + sum(c for _, c in found.categories)
    lines = [
        f"## What other reviewers gave this {item}",
        f"{n} other reviewer{'s' if n != 1 else ''} scored this {item} on this dimension.",
    ]
    if found.mapped:
        if found.k:
            how = (
                "Each of their scores was compared with that reviewer's own usual scores and "
                "then restated on the scale of the examples above (their average "
                f"{_number(round(found.level, 1))}, typical spread "
                f"{_number(round(found.spread, 1))})."
            )
        else:
            how = (
                "Each of their scores was compared with that reviewer's own usual scores and "
                "then restated on the panel's typical scale (average "
                f"{_number(round(found.level, 1))}, typical spread "
                f"{_number(round(found.spread, 1))}), since no examples show this scale."
            )
        values = ", ".join(_number(round(v, 1)) for v in found.mapped)
        mean = sum(found.mapped) / len(found.mapped)
        lines += [how, f"Restated scores: {values} (mean {_number(round(mean, 1))})."]
    for level, count in found.categories:
        lines.append(
            f"{count} of them chose level {level}, which marks a category rather than a degree."
        )
    lines.append(
        f"Treat this as evidence about how the {item} is seen, not as the answer: weigh it "
        f"together with the examples and the {item} itself."
    )
    return "\n".join(lines)


def target_block(request: JudgeRequest) -> str:
    d = request.dimension
    evidence = panel_block(request)
    return "\n".join(
        [
            target_heading(d.wording),
            _label(d.wording.source_noun),
            request.patent_text.strip(),
            _label(d.wording.item_noun),
            request.idea_text.strip(),
            *(["", evidence] if evidence else []),
            "",
            f"Reply with one line of JSON: a score from {d.scale_min} to {d.scale_max}, a brief "
            "reason and your confidence (0-100).",
        ]
    )


def build_messages(request: JudgeRequest) -> list[dict[str, str]]:
    """OpenAI chat messages for one judgment; the cacheable prefix comes first."""
    return [
        {"role": "system", "content": system_prompt(request.dimension.wording)},
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
        found = _TARGET_HEADING_RE.search(content) if m["role"] == "user" else None
        if found:
            return total + found.start()
        total += len(content)
    return total


def shared_prefix_share(messages: list[dict[str, str]]) -> float:
    """Share (0-1) of the prompt's characters that sit in the cacheable prefix."""
    total = sum(len(m["content"]) for m in messages)
    return shared_prefix_chars(messages) / total if total else 0.0


def rubric_wording(rubric: object) -> PromptWording:
    """The prompt wording stored on a rubric (apps.screening.models.Rubric); blanks are PBIG's."""
    return PromptWording(
        task=str(getattr(rubric, "task", "") or "").strip(),
        item_noun=str(getattr(rubric, "item_noun", "") or "").strip() or PBIG_WORDING.item_noun,
        source_noun=str(getattr(rubric, "source_noun", "") or "").strip()
        or PBIG_WORDING.source_noun,
    )
