"""Writing the installation archive (see the package docstring).

Every file is written as a stream into the zip (apps.dataio.services.archive.members), long
ones split into parts, so neither the export's memory nor a restore's per-file limit grows with
the installation. Rows are read as dicts and written by column name.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import yaml
from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import IDEA_FIELDS, Domain, Idea, Patent
from apps.dataio.services.archive.common import (
    FORMAT,
    HISTORY_COLUMNS,
    RATING_COLUMNS,
    RATING_SOURCE_COLUMN,
    VERSION,
    check_admin,
    iso,
    json_cell,
    score_cell,
)
from apps.dataio.services.archive.derived import findings_thresholds
from apps.dataio.services.archive.members import ArchiveWriter
from apps.dataio.services.archive.state import STATE_FILES, state_write
from apps.dataio.services.archive.state_panels import PANEL_FILES, panels_write
from apps.judges.models import JudgePrediction, JudgeRun
from apps.panels.models import PanelRun, Persona
from apps.screening.models import Assignment, Rating, RatingHistory, Rubric

logger = logging.getLogger(__name__)

DOMAIN_COLUMNS = ["key", "name", "rubric"]
PATENT_COLUMNS = ["external_id", "domain", "domain_name", "title", "abstract", "claims"]
IDEA_COLUMNS = list(IDEA_FIELDS)
REVIEWER_COLUMNS = ["username", "email", "name", "background", "domains", "years_experience"]
# Columns of the archive's files that are not fields of the model, and where they come from.
PATENT_SOURCES = {"domain": "domain__key", "domain_name": "domain__name"}
IDEA_SOURCES = {"patent": "patent__external_id"}
RATING_SOURCES = {
    "idea": "idea__external_id",
    "reviewer": "reviewer__username",
    "dimension": "dimension__key",
}
HISTORY_SOURCES = {
    "idea": "rating__idea__external_id",
    "reviewer": "rating__reviewer__username",
    "dimension": "rating__dimension__key",
    "changed_by": "changed_by__username",
}
TIME_COLUMNS = {"created_at", "updated_at", "changed_at"}
SCORE_COLUMNS = {"score", "old_score", "new_score"}
JSON_COLUMNS = {"answers", "old_answers", "new_answers"}


@dataclass
class ExportReport:
    """What an export wrote: its counts, and what a restore under these settings could not
    read back (empty when the archive restores)."""

    counts: dict[str, int] = field(default_factory=dict)
    parts: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


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


def _cell(column: str, value: Any) -> Any:
    """One value as its archive cell, by the column's kind."""
    if column in TIME_COLUMNS:
        return iso(value)
    if column in SCORE_COLUMNS:
        return score_cell(value)
    if column in JSON_COLUMNS:
        return json_cell(value)
    return "" if value is None else value


def _named_rows(
    queryset: QuerySet[Any], columns: Sequence[str], sources: dict[str, str]
) -> Iterator[list[Any]]:
    """The queryset's rows as archive rows, each column read by name (`sources` maps a column
    to the lookup it comes from; the rest are fields of the same name)."""
    lookups = [sources.get(c, c) for c in columns]
    for row in queryset.values(*lookups).iterator(chunk_size=5000):
        yield [_cell(c, row[lookup]) for c, lookup in zip(columns, lookups, strict=True)]


def installation_export(*, actor: Any = None) -> bytes:
    """Everything an installation holds, as one zip archive in the import formats (in memory;
    `installation_export_to` writes to a file and reports warnings)."""
    out = io.BytesIO()
    installation_export_to(out, actor=actor)
    return out.getvalue()


def installation_export_to(out: IO[bytes], *, actor: Any = None) -> ExportReport:
    """Write the archive into `out`; the report's warnings name what a restore under the running
    settings could not read back (they are also logged and kept in the manifest)."""
    check_admin(actor)
    writer = ArchiveWriter(out)
    rubrics = list(Rubric.objects.prefetch_related("domains").order_by("key"))
    rubric_files = [f"rubrics/{r.key}.yaml" for r in rubrics]
    for rubric, name in zip(rubrics, rubric_files, strict=True):
        writer.write(name, _rubric_file(rubric))
    writer.write_csv(
        "domains.csv",
        DOMAIN_COLUMNS,
        _named_rows(Domain.objects.order_by("key"), DOMAIN_COLUMNS, {"rubric": "rubric__key"}),
    )
    writer.write_csv(
        "patents.csv",
        PATENT_COLUMNS,
        _named_rows(Patent.objects.order_by("external_id"), PATENT_COLUMNS, PATENT_SOURCES),
    )
    writer.write_csv(
        "ideas.csv",
        IDEA_COLUMNS,
        _named_rows(Idea.objects.order_by("external_id"), IDEA_COLUMNS, IDEA_SOURCES),
    )
    profiles = ReviewerProfile.objects.select_related("user").prefetch_related("domains")
    writer.write_csv(
        "reviewers.csv",
        REVIEWER_COLUMNS,
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
    writer.write_csv(
        "ratings.csv",
        [*RATING_COLUMNS, RATING_SOURCE_COLUMN],
        _named_rows(
            Rating.objects.order_by("idea__external_id", "reviewer__username", "dimension_id"),
            [*RATING_COLUMNS, RATING_SOURCE_COLUMN],
            RATING_SOURCES,
        ),
    )
    writer.write_csv(
        "rating_history.csv",
        HISTORY_COLUMNS,
        _named_rows(
            RatingHistory.objects.order_by("changed_at", "id"), HISTORY_COLUMNS, HISTORY_SOURCES
        ),
    )
    state_write(writer)
    panels_write(writer)
    default = Rubric.objects.filter(is_default=True).values_list("key", flat=True).first()
    counts = {
        "rubrics": len(rubrics),
        "domains": Domain.objects.count(),
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
    }
    writer.close(
        {
            "format": FORMAT,
            "version": VERSION,
            "created_at": timezone.now().isoformat(),
            "default_rubric": default,
            "load_order": [
                *rubric_files,
                "patents.csv",
                "ideas.csv",
                "reviewers.csv",
                "ratings.csv",
            ],
            # Cells a spreadsheet would evaluate start with a quote, undone by the import.
            "neutralised": True,
            "restored": ["domains.csv", *STATE_FILES, "rating_history.csv", *PANEL_FILES],
            "recomputed": ["metric snapshots", "alignment snapshots", "item vectors"],
            # Findings are derived, but at the thresholds the installation computed them at.
            "findings_thresholds": findings_thresholds(),
            "counts": counts,
        }
    )
    for warning in writer.warnings:
        logger.warning("installation archive: %s", warning)
    return ExportReport(counts=counts, parts=writer.parts, warnings=writer.warnings)
