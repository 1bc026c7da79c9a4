"""Drafting personas: from uploaded documents, from reviewers' histories, invented (control).

Drafts are upserted by (domain, source, name), and reviewer personas by (domain, reviewer), so
building again refreshes a persona instead of adding a twin. Admins edit them afterwards in the
Django admin; a rebuild overwrites only what the model drafted (name, description, dimensions,
evidence), never the ``active`` switch."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.core.errors import ApplicationError, FieldError
from apps.judges.engine.judgment import PermanentBackendError, TransientBackendError
from apps.judges.selectors import dimensions_for_domain
from apps.panels import selectors
from apps.panels.engine import personas as engine
from apps.panels.models import DOCUMENT_MAX_CHARS, Persona, PersonaDocument
from apps.panels.services import dispatch
from apps.panels.services.llm import EXTRACTION_MAX_TOKENS, panel_backend

logger = logging.getLogger(__name__)
MAX_INVENTED = 8
MAX_REVIEWER_PERSONAS = 12


def _rubric(domain: Domain) -> list[engine.RubricLine]:
    dims = dimensions_for_domain(domain)
    if not dims:
        raise ApplicationError(f"Domain {domain.key!r} has no rubric with dimensions.")
    return selectors.rubric_lines(dims)


def persona_document_add(
    *, domain: Domain, title: str, text: str, by: User | None
) -> PersonaDocument:
    """Store a document and queue the extraction of its stakeholders."""
    errors = []
    if not title.strip():
        errors.append(FieldError("title", "give the document a title"))
    if len(title) > 200:
        errors.append(FieldError("title", "at most 200 characters"))
    if len(text.strip()) < 40:
        errors.append(
            FieldError("text", "the document is empty or too short to read (40+ characters)")
        )
    if len(text) > DOCUMENT_MAX_CHARS:
        errors.append(
            FieldError("text", f"at most {DOCUMENT_MAX_CHARS} characters", value=str(len(text)))
        )
    if errors:
        raise ApplicationError("The document cannot be used.", errors=errors)
    panel_backend()  # fail now, not in the worker, when there is no endpoint
    with transaction.atomic():
        document = PersonaDocument.objects.create(
            domain=domain, title=title.strip(), text=text, uploaded_by=by
        )
        transaction.on_commit(lambda: dispatch.send_document(document.id))
    return document


def _upsert(
    domain: Domain, source: str, draft: engine.PersonaDraft, model: str, **extra: Any
) -> Persona:
    evidence = [
        {"dimension": e.dimension, "quote": e.quote, "document": e.document} for e in draft.evidence
    ]
    lookup: dict[str, Any] = (
        {"domain": domain, "reviewer": extra["reviewer"]}
        if extra.get("reviewer")
        else {
            "domain": domain,
            "source": source,
            "name": draft.name,
        }
    )
    persona, _ = Persona.objects.update_or_create(
        **lookup,
        defaults={
            "source": source,
            "name": draft.name,
            "description": draft.description,
            "dimensions": draft.dimensions,
            "evidence": evidence,
            "model": model,
            **extra,
        },
    )
    return persona


def persona_document_extract(*, document_id: int) -> PersonaDocument:
    """Extract the document's stakeholders (with quotes as evidence) and merge them into the
    domain's document personas: a stakeholder similar to an existing one adds its evidence to
    it. Transient endpoint errors propagate (the task retries); anything else marks the
    document failed with the reason."""
    document = PersonaDocument.objects.select_related("domain").get(id=document_id)
    if document.status == PersonaDocument.Status.DONE:
        return document
    try:
        rubric = _rubric(document.domain)
        backend = panel_backend()
    except ApplicationError as exc:
        document.status, document.error = PersonaDocument.Status.FAILED, exc.message
        document.save(update_fields=["status", "error", "updated_at"])
        return document
    keys = [r.key for r in rubric]
    try:
        reply = backend.chat(
            engine.extraction_messages(title=document.title, text=document.text, rubric=rubric),
            max_tokens=EXTRACTION_MAX_TOKENS,
        )
    except TransientBackendError:
        raise
    except PermanentBackendError as exc:
        document.status, document.error = PersonaDocument.Status.FAILED, str(exc)
        document.save(update_fields=["status", "error", "updated_at"])
        return document
    drafts = engine.parse_stakeholders(
        reply.text, document_text=document.text, document=document.title, dimension_keys=keys
    )
    with transaction.atomic():
        existing = [
            engine.PersonaDraft(
                name=p.name,
                description=p.description,
                dimensions=list(p.dimensions),
                evidence=[engine.Evidence(**e) for e in p.evidence],
            )
            for p in Persona.objects.filter(domain=document.domain, source=Persona.Source.DOCUMENTS)
        ]
        merged = engine.merge_similar(existing + drafts, keys)
        for draft in merged:
            _upsert(document.domain, Persona.Source.DOCUMENTS, draft, reply.model)
        document.stakeholders_found = len(drafts)
        document.status = PersonaDocument.Status.DONE if drafts else PersonaDocument.Status.FAILED
        document.error = (
            ""
            if drafts
            else "The model named no stakeholder with a quote found in the document; "
            "nothing was added."
        )
        document.save(update_fields=["status", "error", "stakeholders_found", "updated_at"])
    return document


def personas_from_reviewers(*, domain: Domain, limit: int = 5) -> list[Persona]:
    """A persona per reviewer with history in the domain (most ratings first, up to ``limit``)."""
    limit = max(1, min(int(limit), MAX_REVIEWER_PERSONAS))
    rubric = _rubric(domain)
    backend = panel_backend()
    reviewers = selectors.reviewers_with_history(domain=domain)[:limit]
    if not reviewers:
        raise ApplicationError(f"No reviewer has scored ideas in {domain.key!r} yet.")
    out = []
    for reviewer in reviewers:
        facts = selectors.reviewer_facts(reviewer=reviewer, domain=domain)
        reply = backend.chat(engine.reviewer_persona_messages(facts, rubric))
        draft = engine.PersonaDraft(
            name=facts.label[:120],
            description=engine.parse_reviewer_persona(reply.text, facts),
            dimensions=[r.key for r in rubric],
        )
        out.append(_upsert(domain, Persona.Source.REVIEWERS, draft, reply.model, reviewer=reviewer))
    return out


def personas_invent(*, domain: Domain, count: int = 3) -> list[Persona]:
    """The control: personas the model invents from the rubric alone."""
    count = max(1, min(int(count), MAX_INVENTED))
    rubric = _rubric(domain)
    backend = panel_backend()
    reply = backend.chat(
        engine.invented_messages(rubric=rubric, count=count), max_tokens=EXTRACTION_MAX_TOKENS
    )
    drafts = engine.parse_invented(reply.text, dimension_keys=[r.key for r in rubric], count=count)
    # A model too small to invent anything usable still gets a control panel: numbered generic
    # reviewers, named as such.
    for i in range(len(drafts), count):
        drafts.append(
            engine.PersonaDraft(
                name=f"Generic reviewer {i + 1}",
                description="A reviewer who judges ideas on the rubric alone.",
                dimensions=[r.key for r in rubric],
            )
        )
    return [_upsert(domain, Persona.Source.INVENTED, d, reply.model) for d in drafts]
