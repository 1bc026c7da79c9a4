"""Writing the installation archive (see the package docstring)."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import yaml
from django.utils import timezone

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Idea, Patent
from apps.catalog.services.archive.common import (
    FORMAT,
    HISTORY_COLUMNS,
    RATING_COLUMNS,
    RATING_SOURCE_COLUMN,
    VERSION,
    check_admin,
    csv_bytes,
    iso,
    json_cell,
    score_cell,
)
from apps.catalog.services.archive.state import STATE_FILES, state_files
from apps.catalog.services.archive.state_panels import PANEL_FILES, panel_files
from apps.judges.models import JudgePrediction, JudgeRun
from apps.panels.models import PanelRun, Persona
from apps.screening.models import Assignment, Rating, RatingHistory, Rubric

# The history file's columns that are not fields of RatingHistory, and where they come from.
HISTORY_SOURCES = {
    "idea": "rating__idea__external_id",
    "reviewer": "rating__reviewer__username",
    "dimension": "rating__dimension__key",
    "changed_by": "changed_by__username",
}


def _rubric_file(rubric: Rubric) -> bytes:
    data: dict[str, Any] = {
        "key": rubric.key,
        "name": rubric.name,
        "description": rubric.description,
        "domains": sorted(d.key for d in rubric.domains.all()),
        "task": rubric.task,
        "item_noun": rubric.item_noun,
        "source_noun": rubric.source_noun,
        "dimensions": [],
    }
    for d in rubric.dimensions.order_by("position"):
        dim: dict[str, Any] = {
            "key": d.key,
            "name": d.name,
            "description": d.description,
            "scale": {"min": d.scale_min, "max": d.scale_max},
            "levels": {int(k): v for k, v in d.levels.items()},
            "optional": d.optional,
        }
        if d.pass_above is not None:
            dim["pass_above"] = d.pass_above
        for name in ("requires", "categories", "questions", "question_scores"):
            if getattr(d, name):
                dim[name] = getattr(d, name)
        data["dimensions"].append(dim)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode("utf-8")


def installation_export(*, actor: Any = None) -> bytes:
    """Everything an installation holds, as one zip archive in the import formats."""
    check_admin(actor)
    files: dict[str, bytes] = {}
    rubrics = list(Rubric.objects.prefetch_related("domains").order_by("key"))
    rubric_files = [f"rubrics/{r.key}.yaml" for r in rubrics]
    for rubric, name in zip(rubrics, rubric_files, strict=True):
        files[name] = _rubric_file(rubric)

    files["patents.csv"] = csv_bytes(
        ["external_id", "domain", "domain_name", "title", "abstract", "claims"],
        Patent.objects.select_related("domain")
        .order_by("external_id")
        .values_list("external_id", "domain__key", "domain__name", "title", "abstract", "claims"),
    )
    files["ideas.csv"] = csv_bytes(
        [
            "external_id",
            "patent",
            "title",
            "description",
            "implementation",
            "differentiation",
            "source",
        ],
        Idea.objects.order_by("external_id").values_list(
            "external_id",
            "patent__external_id",
            "title",
            "description",
            "implementation",
            "differentiation",
            "source",
        ),
    )
    profiles = ReviewerProfile.objects.select_related("user").prefetch_related("domains")
    files["reviewers.csv"] = csv_bytes(
        ["username", "email", "name", "background", "domains", "years_experience"],
        (
            (
                p.user.username,
                p.user.email,
                p.user.get_full_name(),
                p.background,
                ";".join(sorted(d.key for d in p.domains.all())),
                "" if p.years_experience is None else p.years_experience,
            )
            for p in profiles.order_by("user__username")
        ),
    )
    files["ratings.csv"] = csv_bytes(
        [*RATING_COLUMNS, RATING_SOURCE_COLUMN],
        (
            (
                *row[:3],
                score_cell(row[3]),
                row[4],
                json_cell(row[5]),
                row[6],
                iso(row[7]),
                iso(row[8]),
                row[9],
            )
            for row in (
                Rating.objects.order_by("idea__external_id", "reviewer__username", "dimension_id")
                .values_list(
                    "idea__external_id",
                    "reviewer__username",
                    "dimension__key",
                    "score",
                    "status",
                    "answers",
                    "rationale",
                    "created_at",
                    "updated_at",
                    "source",
                )
                .iterator(chunk_size=5000)
            )
        ),
    )
    files["rating_history.csv"] = csv_bytes(
        HISTORY_COLUMNS,
        (
            (
                *row[:3],
                iso(row[3]),
                row[4] or "",
                row[5],
                row[6],
                score_cell(row[7]),
                json_cell(row[8]),
                row[9],
                row[10],
                score_cell(row[11]),
                json_cell(row[12]),
                row[13],
            )
            for row in RatingHistory.objects.order_by("changed_at", "id")
            .values_list(*(HISTORY_SOURCES.get(c, c) for c in HISTORY_COLUMNS))
            .iterator(chunk_size=5000)
        ),
    )
    files.update(state_files())
    files.update(panel_files())
    default = Rubric.objects.filter(is_default=True).values_list("key", flat=True).first()
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "created_at": timezone.now().isoformat(),
        "default_rubric": default,
        "load_order": [*rubric_files, "patents.csv", "ideas.csv", "reviewers.csv", "ratings.csv"],
        # Cells a spreadsheet would evaluate start with a quote, undone by the import.
        "neutralised": True,
        "restored": [*STATE_FILES, "rating_history.csv", *PANEL_FILES],
        "recomputed": ["metric snapshots", "alignment snapshots", "item vectors"],
        "counts": {
            "rubrics": len(rubrics),
            "patents": Patent.objects.count(),
            "ideas": Idea.objects.count(),
            "reviewers": profiles.count(),
            "ratings": Rating.objects.count(),
            "rating_history": RatingHistory.objects.count(),
            "accounts": User.objects.count(),
            "assignments": Assignment.objects.count(),
            "judge_runs": JudgeRun.objects.count(),
            "judge_predictions": JudgePrediction.objects.count(),
            "panel_personas": Persona.objects.count(),
            "panel_runs": PanelRun.objects.count(),
        },
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest, indent=2))
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()
