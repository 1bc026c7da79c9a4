"""Single-object writes to the catalog (domains, patents, ideas), used by the API.

Bulk loading lives in the importers; these are the one-at-a-time edits an admin makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import models, transaction

from apps.accounts.models import User
from apps.catalog.models import IDEA_FIELDS, Domain, Idea, Patent
from apps.core.errors import ApplicationError, FieldError, PermissionDenied

M = TypeVar("M", bound=models.Model)

DOMAIN_FIELDS = ("key", "name", "rubric")
PATENT_FIELDS = ("external_id", "domain", "title", "abstract", "claims")


def _check_actor(actor: User | None) -> None:
    if actor is not None and not actor.is_admin:
        raise PermissionDenied("Only admins edit the catalog.")


def _validated_save(obj: M, *, what: str) -> M:
    """full_clean (uniqueness, lengths) and save, reporting every problem by field."""
    try:
        obj.full_clean()
    except ValidationError as exc:
        errors = [
            FieldError(
                field=name if name != "__all__" else "non_field_errors",
                message=message,
                value=None if name == "__all__" else _shown(getattr(obj, name, None)),
            )
            for name, messages in exc.message_dict.items()
            for message in messages
        ]
        raise ApplicationError(f"The {what} was not saved.", errors=errors) from exc
    obj.save()
    return obj


def _shown(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _apply(obj: M, data: Mapping[str, Any], allowed: tuple[str, ...]) -> M:
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ApplicationError(
            "Unknown fields.",
            errors=[FieldError(field=k, message="cannot be set here") for k in unknown],
        )
    for name, value in data.items():
        setattr(obj, name, value)
    return obj


@transaction.atomic
def domain_create(*, data: Mapping[str, Any], actor: User | None) -> Domain:
    _check_actor(actor)
    return _validated_save(_apply(Domain(), data, DOMAIN_FIELDS), what="domain")


@transaction.atomic
def domain_update(*, domain: Domain, data: Mapping[str, Any], actor: User | None) -> Domain:
    _check_actor(actor)
    return _validated_save(_apply(domain, data, DOMAIN_FIELDS), what="domain")


@transaction.atomic
def patent_create(*, data: Mapping[str, Any], actor: User | None) -> Patent:
    _check_actor(actor)
    return _validated_save(_apply(Patent(), data, PATENT_FIELDS), what="patent")


@transaction.atomic
def patent_update(*, patent: Patent, data: Mapping[str, Any], actor: User | None) -> Patent:
    _check_actor(actor)
    if (
        "domain" in data
        and data["domain"] != patent.domain
        and patent.ideas.filter(ratings__isnull=False).exists()
    ):
        # Ratings were given on the old domain's rubric; moving them silently would mix scales.
        raise ApplicationError(
            "The patent was not saved.",
            errors=[
                FieldError(field="domain", message="cannot change once its ideas have ratings")
            ],
        )
    return _validated_save(_apply(patent, data, PATENT_FIELDS), what="patent")


@transaction.atomic
def idea_create(*, data: Mapping[str, Any], actor: User | None) -> Idea:
    _check_actor(actor)
    return _validated_save(_apply(Idea(), data, IDEA_FIELDS), what="idea")


@transaction.atomic
def idea_update(*, idea: Idea, data: Mapping[str, Any], actor: User | None) -> Idea:
    _check_actor(actor)
    if "patent" in data and data["patent"] != idea.patent and idea.ratings.exists():
        raise ApplicationError(
            "The idea was not saved.",
            errors=[FieldError(field="patent", message="cannot change once the idea has ratings")],
        )
    return _validated_save(_apply(idea, data, IDEA_FIELDS), what="idea")
