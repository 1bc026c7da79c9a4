"""Rubrics: one YAML or JSON file per rubric, upserted by key with its dimensions (by key).

Parsing and validation live in apps.screening.rubric_files, shared with the migration that loads
PBIG; this module only counts what changes and turns parse failures into row/field errors.
"""

from __future__ import annotations

from typing import Any

from apps.catalog.importers import ImportResult
from apps.core.errors import ApplicationError, FieldError
from apps.screening.models import Dimension, Rubric
from apps.screening.rubric_files import load_rubric_text, parse_rubric, save_rubric

EXTENSIONS = (".yaml", ".yml", ".json")
COMPARED = [
    "name",
    "description",
    "position",
    "scale_min",
    "scale_max",
    "levels",
    "pass_above",
    "requires",
    "categories",
    "questions",
    "question_scores",
]


def import_rubric(
    *, content: bytes, filename: str, actor: Any = None, make_default: bool = False
) -> ImportResult:
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
        data = load_rubric_text(content, filename=filename.lower())
    except ApplicationError as exc:
        if exc.errors:
            raise
        raise ApplicationError(
            "The rubric file cannot be read.",
            errors=[FieldError(field="file", message=exc.message)],
        ) from exc
    spec = parse_rubric(data)

    result = ImportResult(kind="rubric", rows=len(spec.dimensions))
    rubric = Rubric.objects.filter(key=spec.key).first()
    before: dict[str, dict[str, Any]] = {}
    if rubric is not None:
        before = {
            d["key"]: d for d in Dimension.objects.filter(rubric=rubric).values("key", *COMPARED)
        }
        if (rubric.name, rubric.description) != (spec.name, spec.description):
            result.notes.append(f"Rubric {spec.key} renamed or redescribed.")
    else:
        result.notes.append(f"New rubric {spec.key} ({spec.name}).")
    rubric = save_rubric(
        spec, rubric_model=Rubric, dimension_model=Dimension, make_default=make_default
    )
    after = {d["key"]: d for d in Dimension.objects.filter(rubric=rubric).values("key", *COMPARED)}
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
    return result
