"""Personas: who sits on a panel, and how each kind is drafted.

Three sources (paper 004 built only the first; the control answers the critique that it never
compared document-built personas with plain LLM-made ones):
- ``documents``: stakeholders an LLM extracts from uploaded documents, each with the rubric
  dimensions it cares about and a verbatim quote as evidence for each. A quote that does not
  occur in the document is dropped (the model invented it), and a stakeholder left with no
  evidence is dropped too. Stakeholders with similar names merge (``merge_similar``).
- ``reviewers``: a written persona of one reviewer's standards, from facts computed from their
  history (``ReviewerFacts``); the facts are kept verbatim in the persona, so it says how the
  reviewer scores even when the model's prose is weak.
- ``invented``: personas the LLM makes up from the rubric alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from apps.panels.engine.text import clip, find_json_object, squash

# Bounds on what goes into a prompt and what is kept from a reply.
DOCUMENT_PROMPT_CHARS = 6000
MAX_STAKEHOLDERS = 8
NAME_CHARS = 80
DESCRIPTION_CHARS = 600
QUOTE_CHARS = 300
MIN_QUOTE_CHARS = 12
# Two stakeholder names whose word sets overlap this much (Jaccard) are one stakeholder.
MERGE_JACCARD = 0.5
_STOP_WORDS = {"the", "a", "an", "of", "and", "for", "in", "team", "teams", "group", "s"}
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class RubricLine:
    key: str
    name: str
    description: str
    scale_min: int
    scale_max: int


@dataclass(frozen=True)
class Evidence:
    dimension: str
    quote: str
    document: str = ""


@dataclass
class PersonaDraft:
    name: str
    description: str
    dimensions: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # documents it came from


def rubric_lines_text(rubric: list[RubricLine]) -> str:
    return "\n".join(
        f"- {d.key}: {d.name} ({d.scale_min}-{d.scale_max}). {clip(d.description, 200)}"
        for d in rubric
    )


# ------------------------------------------------------------------ from documents
def extraction_messages(*, title: str, text: str, rubric: list[RubricLine]) -> list[dict[str, str]]:
    system = (
        "You read business documents and name the stakeholders whose judgement of new product "
        "ideas matters. Answer with one JSON object only."
    )
    user = (
        f"Document: {clip(title, 200)}\n---\n{text[:DOCUMENT_PROMPT_CHARS]}\n---\n"
        f"Rubric dimensions:\n{rubric_lines_text(rubric)}\n\n"
        "List the stakeholders this document speaks for. For each: a short name, one or two "
        "sentences on what they want, and for every rubric dimension they care about an exact "
        "quote copied from the document that shows it. Reply as JSON: "
        '{"stakeholders": [{"name": "...", "description": "...", '
        '"evidence": [{"dimension": "<dimension key>", "quote": "<exact words>"}]}]}'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_stakeholders(
    reply: str, *, document_text: str, document: str, dimension_keys: list[str]
) -> list[PersonaDraft]:
    """Stakeholders from an extraction reply, keeping only evidence found in the document.

    A quote counts when it occurs in the document after case and whitespace are normalised and
    names one of ``dimension_keys``; a stakeholder with no such quote is dropped."""
    obj = find_json_object(reply)
    if obj is None:
        return []
    items = obj.get("stakeholders")
    if not isinstance(items, list):
        return []
    haystack = squash(document_text)
    keys = set(dimension_keys)
    drafts: list[PersonaDraft] = []
    for item in items[:MAX_STAKEHOLDERS]:
        if not isinstance(item, dict):
            continue
        name = clip(str(item.get("name") or ""), NAME_CHARS)
        if not name:
            continue
        evidence: list[Evidence] = []
        for ev in item.get("evidence") or []:
            if not isinstance(ev, dict):
                continue
            dim = str(ev.get("dimension") or "").strip()
            quote = " ".join(str(ev.get("quote") or "").split())[:QUOTE_CHARS]
            if dim in keys and len(quote) >= MIN_QUOTE_CHARS and squash(quote) in haystack:
                evidence.append(Evidence(dimension=dim, quote=quote, document=document))
        if not evidence:
            continue
        dims = sorted({e.dimension for e in evidence}, key=dimension_keys.index)
        drafts.append(
            PersonaDraft(
                name=name,
                description=clip(str(item.get("description") or ""), DESCRIPTION_CHARS),
                dimensions=dims,
                evidence=evidence,
                sources=[document],
            )
        )
    return drafts


def _name_words(name: str) -> set[str]:
    # A crude singular ("buyers" ~ "buyer") so plural and singular names merge.
    words = {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(name.lower())}
    return words - _STOP_WORDS


def similar(a: str, b: str) -> bool:
    wa, wb = _name_words(a), _name_words(b)
    if not wa or not wb:
        return a.strip().lower() == b.strip().lower()
    return len(wa & wb) / len(wa | wb) >= MERGE_JACCARD


def merge_similar(drafts: list[PersonaDraft], dimension_order: list[str]) -> list[PersonaDraft]:
    """Merge stakeholders with similar names (word-set Jaccard >= MERGE_JACCARD).

    The first name seen is kept; descriptions are joined when they differ, dimensions and
    evidence are united (a quote kept once). Order of first appearance is preserved, so the
    merge is deterministic."""
    merged: list[PersonaDraft] = []
    for draft in drafts:
        target = next((m for m in merged if similar(m.name, draft.name)), None)
        if target is None:
            merged.append(
                PersonaDraft(
                    name=draft.name,
                    description=draft.description,
                    dimensions=list(draft.dimensions),
                    evidence=list(draft.evidence),
                    sources=list(draft.sources),
                )
            )
            continue
        if draft.description and draft.description not in target.description:
            target.description = clip(
                f"{target.description} {draft.description}".strip(), DESCRIPTION_CHARS
            )
        seen = {(e.dimension, squash(e.quote)) for e in target.evidence}
        for ev in draft.evidence:
            if (ev.dimension, squash(ev.quote)) not in seen:
                target.evidence.append(ev)
                seen.add((ev.dimension, squash(ev.quote)))
        dims = set(target.dimensions) | set(draft.dimensions)
        target.dimensions = [k for k in dimension_order if k in dims]
        target.sources += [s for s in draft.sources if s not in target.sources]
    return merged


# ------------------------------------------------------------------ from a reviewer's history
@dataclass(frozen=True)
class ReviewerFacts:
    """What a reviewer's history says about their standards (computed by a selector)."""

    label: str  # how the persona is named, e.g. "Reviewer r07 (technical)"
    background: str
    years_experience: int | None
    ratings: int
    # dimension key -> (their mean score, everyone's mean score on the same ideas)
    severity: dict[str, tuple[float, float]]
    rationales: list[str]  # a few of their own rationales, shortest first

    def summary(self) -> str:
        lines = [f"Background: {self.background or 'not given'}."]
        if self.years_experience is not None:
            lines.append(f"Experience: {self.years_experience} years.")
        lines.append(f"Ratings given: {self.ratings}.")
        for key, (own, others) in self.severity.items():
            diff = own - others
            word = (
                "stricter than"
                if diff < -0.2
                else "more lenient than"
                if diff > 0.2
                else "in line with"
            )
            lines.append(
                f"On {key}: mean {own:.2f} against {others:.2f} for the others on the same ideas "
                f"({word} the panel)."
            )
        return "\n".join(lines)


def reviewer_persona_messages(
    facts: ReviewerFacts, rubric: list[RubricLine]
) -> list[dict[str, str]]:
    rationale_text = "\n".join(f"- {clip(r, 240)}" for r in facts.rationales) or "- (none)"
    user = (
        f"Rubric dimensions:\n{rubric_lines_text(rubric)}\n\nFacts about one reviewer:\n"
        f"{facts.summary()}\nSome of their rationales:\n{rationale_text}\n\n"
        "Write, in the second person, how this reviewer judges ideas: what they look for, what "
        'makes them score low or high, how strict they are. Reply as JSON: {"persona": "..."}'
    )
    return [
        {"role": "system", "content": "You describe a reviewer's standards. Reply with JSON only."},
        {"role": "user", "content": user},
    ]


def parse_reviewer_persona(reply: str, facts: ReviewerFacts) -> str:
    """The persona text: the model's description (if any) followed by the facts verbatim."""
    obj = find_json_object(reply) or {}
    prose = clip(str(obj.get("persona") or ""), DESCRIPTION_CHARS) if isinstance(obj, dict) else ""
    return (prose + "\n\n" if prose else "") + facts.summary()


# ------------------------------------------------------------------ invented (the control)
def invented_messages(*, rubric: list[RubricLine], count: int) -> list[dict[str, str]]:
    user = (
        f"Rubric dimensions:\n{rubric_lines_text(rubric)}\n\n"
        f"Invent {count} different stakeholders who would judge ideas on this rubric. For each: "
        "a short name, one or two sentences on what they want, and the dimension keys they "
        'care most about. Reply as JSON: {"stakeholders": [{"name": "...", '
        '"description": "...", "dimensions": ["<key>", ...]}]}'
    )
    return [
        {"role": "system", "content": "You design evaluation panels. Reply with JSON only."},
        {"role": "user", "content": user},
    ]


def parse_invented(reply: str, *, dimension_keys: list[str], count: int) -> list[PersonaDraft]:
    obj = find_json_object(reply)
    items: Any = obj.get("stakeholders") if obj else None
    drafts: list[PersonaDraft] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not str(item.get("name") or "").strip():
            continue
        raw_dims = item.get("dimensions")
        dims = [k for k in dimension_keys if isinstance(raw_dims, list) and k in raw_dims]
        drafts.append(
            PersonaDraft(
                name=clip(str(item["name"]), NAME_CHARS),
                description=clip(str(item.get("description") or ""), DESCRIPTION_CHARS),
                dimensions=dims or list(dimension_keys),
            )
        )
    return merge_similar(drafts, dimension_keys)[:count]
