"""Rubrics: one YAML or JSON file per rubric, upserted by key with its dimensions (by key).

Parsing and validation live in apps.screening.rubric_files, shared with the migration that loads
PBIG; this module only counts what changes and turns parse failures into row/field errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apps.catalog.models import Domain
from apps.core.errors import ApplicationError, FieldError
from apps.dataio.importers import ImportResult
from apps.dataio.importers.domains import check_new_domains
from apps.dataio.importers.streams import ImportContent, read_all
from apps.screening.models import Dimension, Rubric
from apps.screening.rubric_files import (
    DIMENSION_FIELDS,
    load_rubric_text,
    parse_rubric,
    save_rubric,
)

EXTENSIONS = (".yaml", ".yml", ".json")


def import_rubric(
    *,
    content: ImportContent,
    filename: str,
    actor: Any = None,
    make_default: bool = False,
    domains: Sequence[str] = (),
    create_domains: bool = False,
) -> ImportResult:
    """Upsert the rubric and attach it to the domains its file lists plus `domains` (the
    command's --domain); domains not stored yet are created, so a rubric can come first (once
    ratings exist, only with `create_domains`: apps.dataio.importers.domains)."""
    if not filename.lower().endswith(EXTENSIONS):
        raise ApplicationError(
            "Unsupported file type.",
            errors=[
                FieldError(
                    field="file", message="use a .yaml, .yml or .json rubric file", value=filename
                )
            ],
        )
    try:
        data = load_rubric_text(read_all(content), filename=filename.lower())
    except ApplicationError as exc:
        if exc.errors:
            raise
        raise ApplicationError(
            "The rubric file cannot be read.",
            errors=[FieldError(field="file", message=exc.message)],
        ) from exc
    spec = parse_rubric(data)
    extra = [d.strip() for d in domains if d.strip()]
    bad = [d for d in extra if not d.replace("-", "").replace("_", "").isalnum()]
    if bad:
        raise ApplicationError(
            "The domain keys are not valid; nothing was imported.",
            errors=[
                FieldError(field="domain", message="must be letters, digits, - and _", value=d)
                for d in bad
            ],
        )
    spec.domains = list(dict.fromkeys([*spec.domains, *extra]))

    result = ImportResult(kind="rubric", rows=len(spec.dimensions))
    rubric = Rubric.objects.filter(key=spec.key).first()
    before: dict[str, dict[str, Any]] = {}
    if rubric is not None:
        before = {
            d["key"]: d
            for d in Dimension.objects.filter(rubric=rubric).values("key", *DIMENSION_FIELDS)
        }
        if (rubric.name, rubric.description) != (spec.name, spec.description):
            result.notes.append(f"Rubric {spec.key} renamed or redescribed.")
    else:
        result.notes.append(f"New rubric {spec.key} ({spec.name}).")
    rubric = save_rubric(
        spec, rubric_model=Rubric, dimension_model=Dimension, make_default=make_default
    )
    after = {
        d["key"]: d
        for d in Dimension.objects.filter(rubric=rubric).values("key", *DIMENSION_FIELDS)
    }
    for d in spec.dimensions:
        if d.key not in before:
            result.created += 1
        elif before[d.key] != after[d.key]:
            result.updated += 1
        else:
            result.unchanged += 1
    stale = sorted(set(before) - {d.key for d in spec.dimensions})
    if stale:
        # Dimensions carry ratings; dropping them silently would delete scores.
        result.notes.append(
            "Kept dimensions not in the file (they may hold ratings): " + ", ".join(stale) + "."
        )
    if make_default:
        result.notes.append(f"{spec.name} is now the default rubric.")
    _attach_domains(rubric, spec.domains, result, create_domains=create_domains)
    return result


def _attach_domains(
    rubric: Rubric, keys: list[str], result: ImportResult, *, create_domains: bool
) -> None:
    if not keys:
        return
    existing = {d.key: d for d in Domain.objects.filter(key__in=keys)}
    check_new_domains(
        [k for k in keys if k not in existing], allowed=create_domains, field="domains"
    )
    created = [Domain(key=k, name=k, rubric=rubric) for k in keys if k not in existing]
    Domain.objects.bulk_create(created)
    moved = []
    for key, domain in existing.items():
        if domain.rubric_id != rubric.pk:
            if domain.rubric_id is not None:
                moved.append(key)
            domain.rubric = rubric
            domain.save(update_fields=["rubric"])
    result.notes.append(f"Rubric {rubric.key} rates the domains: " + ", ".join(keys) + ".")
    if created:
        result.notes.append("New domains: " + ", ".join(d.key for d in created) + ".")
    if moved:
        result.notes.append(
            "Moved from another rubric (their existing ratings keep their dimensions): "
            + ", ".join(sorted(moved))
            + "."
        )
