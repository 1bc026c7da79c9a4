"""The whole installation as one archive in the documented import formats, and back.

The archive is a zip of plain files an admin can read and re-import one by one (docs/formats.md,
"Installation archive"):

    manifest.json            format version, creation time, default rubric, files in load order
    rubrics/<key>.yaml       every rubric with its domains and prompt wording
    patents.csv ideas.csv reviewers.csv ratings.csv
                             the import formats; ratings carry their state (`status`), yes/no
                             answers, rationales and both timestamps
    rating_history.csv       every change of every rating (restored as it is by archive import)
    judge_configs.jsonl      judge configurations
    judge_predictions.csv    every stored judge prediction (for audit; not re-imported)

`installation_import` loads such an archive into an empty installation through the same
importers as single files, all or nothing, then restores the rating history row for row, so
metrics and rating states come back identical.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
import yaml
from django.db import connection, transaction
from django.utils import timezone

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.importers import ImportResult
from apps.catalog.models import Idea, Patent
from apps.catalog.services.imports import import_file
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.screening.models import Rating, RatingHistory, Rubric

FORMAT = "pluralist-archive"
VERSION = 1
RATING_COLUMNS = [
    "idea",
    "reviewer",
    "dimension",
    "score",
    "status",
    "answers",
    "rationale",
    "created_at",
    "updated_at",
]
HISTORY_COLUMNS = [
    "idea",
    "reviewer",
    "dimension",
    "changed_at",
    "changed_by",
    "source",
    "old_status",
    "old_score",
    "old_answers",
    "old_rationale",
    "new_status",
    "new_score",
    "new_answers",
    "new_rationale",
]
CONFIG_FIELDS = [
    "name",
    "kind",
    "backend",
    "model",
    "shots",
    "seeds",
    "temperature",
    "confidence_threshold",
    "min_history",
    "concurrency",
    "is_active",
    "auto",
]
PREDICTION_COLUMNS = [
    "config",
    "kind",
    "k",
    "seed",
    "reviewer",
    "idea",
    "dimension",
    "score",
    "confidence",
    "reason",
    "model",
    "backend",
    "response_mode",
    "prompt_fingerprint",
    "created_at",
]


def _check_admin(actor: Any) -> None:
    if actor is not None and not getattr(actor, "is_admin", False):
        raise PermissionDenied("Only admins export or import the installation.")


def _iso(value: Any) -> str:
    return "" if value is None else value.astimezone(dt.UTC).isoformat()


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    """A CSV in the import format. Cells are written as they are (the archive is read back by
    the importers, which must see the exact text); spreadsheet formula neutralisation would
    alter values, so the archive is for re-import, not for opening in a spreadsheet."""
    buf = io.StringIO()
    frame = pd.DataFrame(list(rows), columns=list(header), dtype=object)
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


def _json_cell(value: Any) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True)


def _score(value: int | None) -> str:
    return "" if value is None else str(value)


# ---- export ----------------------------------------------------------------------------------
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
    _check_admin(actor)
    files: dict[str, bytes] = {}
    rubrics = list(Rubric.objects.prefetch_related("domains").order_by("key"))
    rubric_files = [f"rubrics/{r.key}.yaml" for r in rubrics]
    for rubric, name in zip(rubrics, rubric_files, strict=True):
        files[name] = _rubric_file(rubric)

    files["patents.csv"] = _csv(
        ["external_id", "domain", "domain_name", "title", "abstract", "claims"],
        Patent.objects.select_related("domain")
        .order_by("external_id")
        .values_list("external_id", "domain__key", "domain__name", "title", "abstract", "claims"),
    )
    files["ideas.csv"] = _csv(
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
    files["reviewers.csv"] = _csv(
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
    files["ratings.csv"] = _csv(
        RATING_COLUMNS,
        (
            (
                idea,
                reviewer,
                dim,
                _score(score),
                status,
                _json_cell(answers),
                rationale,
                _iso(created),
                _iso(updated),
            )
            for idea, reviewer, dim, score, status, answers, rationale, created, updated in (
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
                )
                .iterator(chunk_size=5000)
            )
        ),
    )
    files["rating_history.csv"] = _csv(
        HISTORY_COLUMNS,
        (
            (
                *row[:3],
                _iso(row[3]),
                row[4] or "",
                row[5],
                row[6],
                _score(row[7]),
                _json_cell(row[8]),
                row[9],
                row[10],
                _score(row[11]),
                _json_cell(row[12]),
                row[13],
            )
            for row in RatingHistory.objects.order_by("changed_at", "id")
            .values_list(
                "rating__idea__external_id",
                "rating__reviewer__username",
                "rating__dimension__key",
                "changed_at",
                "changed_by__username",
                "source",
                "old_status",
                "old_score",
                "old_answers",
                "old_rationale",
                "new_status",
                "new_score",
                "new_answers",
                "new_rationale",
            )
            .iterator(chunk_size=5000)
        ),
    )
    files.update(_judge_files())
    default = Rubric.objects.filter(is_default=True).values_list("key", flat=True).first()
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "created_at": timezone.now().isoformat(),
        "default_rubric": default,
        "load_order": [*rubric_files, "patents.csv", "ideas.csv", "reviewers.csv", "ratings.csv"],
        "restored": ["rating_history.csv"],
        "audit_only": ["judge_configs.jsonl", "judge_predictions.csv"],
        "counts": {
            "rubrics": len(rubrics),
            "patents": Patent.objects.count(),
            "ideas": Idea.objects.count(),
            "reviewers": profiles.count(),
            "ratings": Rating.objects.count(),
            "rating_history": RatingHistory.objects.count(),
        },
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest, indent=2))
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


def _judge_files() -> dict[str, bytes]:
    from apps.judges.models import JudgeConfig, JudgePrediction

    configs = "".join(
        json.dumps(row, sort_keys=True) + "\n"
        for row in JudgeConfig.objects.order_by("name").values(*CONFIG_FIELDS)
    )
    predictions = _csv(
        PREDICTION_COLUMNS,
        (
            (*row[:-1], _iso(row[-1]))
            for row in JudgePrediction.objects.order_by("id")
            .values_list(
                "config__name",
                "kind",
                "k",
                "seed",
                "reviewer__username",
                "idea__external_id",
                "dimension__key",
                "score",
                "confidence",
                "reason",
                "model",
                "backend",
                "response_mode",
                "prompt_fingerprint",
                "created_at",
            )
            .iterator(chunk_size=5000)
        ),
    )
    return {"judge_configs.jsonl": configs.encode("utf-8"), "judge_predictions.csv": predictions}


# ---- import ----------------------------------------------------------------------------------
def _refuse(message: str, field: str, detail: str, value: Any = None) -> ApplicationError:
    return ApplicationError(message, errors=[FieldError(field=field, message=detail, value=value)])


def _read_archive(content: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
        files = {name: archive.read(name) for name in archive.namelist()}
    except (zipfile.BadZipFile, OSError) as exc:
        raise _refuse(
            "The archive cannot be read.", "file", "is not a zip archive", value=str(exc)
        ) from exc
    try:
        manifest = json.loads(files["manifest.json"])
    except (KeyError, ValueError) as exc:
        raise _refuse(
            "The archive cannot be read.", "manifest.json", "is missing or not JSON"
        ) from exc
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise _refuse(
            "The archive cannot be read.",
            "manifest.json",
            f"must say format {FORMAT!r}, version {VERSION}",
            value=f"{manifest.get('format')} {manifest.get('version')}",
        )
    missing = [n for n in [*manifest["load_order"], *manifest["restored"]] if n not in files]
    if missing:
        raise ApplicationError(
            "The archive is incomplete; nothing was imported.",
            errors=[
                FieldError(field=n, message="is listed in the manifest but missing")
                for n in missing
            ],
        )
    return manifest, files


def installation_is_empty() -> bool:
    """No catalog, reviewers or ratings yet (rubrics may exist: PBIG is installed by default)."""
    return not (
        Patent.objects.exists()
        or Idea.objects.exists()
        or Rating.objects.exists()
        or User.objects.filter(role=User.Role.REVIEWER).exists()
    )


@transaction.atomic
def installation_import(*, content: bytes, actor: Any = None) -> list[ImportResult]:
    """Load an archive made by `installation_export` into an empty installation, all or nothing.

    Each file goes through the same importer as a single upload; an error in any file names the
    file (field `<file>: <column>`) and rolls everything back.
    """
    _check_admin(actor)
    manifest, files = _read_archive(content)
    if not installation_is_empty():
        raise _refuse(
            "The installation is not empty; nothing was imported.",
            "installation",
            "already holds patents, ideas, reviewers or ratings: import an archive only into "
            "a new installation (or import its files one by one)",
        )
    results: list[ImportResult] = []
    for name in manifest["load_order"]:
        kind = "rubric" if name.startswith("rubrics/") else name.split(".")[0]
        make_default = name == f"rubrics/{manifest.get('default_rubric')}.yaml"
        try:
            results.append(
                import_file(
                    kind=kind,
                    content=files[name],
                    filename=name.rsplit("/", 1)[-1],
                    actor=actor,
                    make_default=make_default,
                )
            )
        except ApplicationError as exc:
            raise ApplicationError(
                f"{name}: {exc.message}",
                errors=[
                    FieldError(
                        field=f"{name}: {e.field}", message=e.message, row=e.row, value=e.value
                    )
                    for e in exc.errors
                ],
            ) from exc
    results.append(_restore_history(files["rating_history.csv"], actor=actor))
    return results


def _restore_history(content: bytes, *, actor: Any) -> ImportResult:
    """Replace the history the ratings import just wrote with the archived history."""
    frame = pd.read_csv(io.BytesIO(content), dtype=str, keep_default_na=False, na_filter=False)
    result = ImportResult(kind="rating history", rows=len(frame))
    ids = {
        key: rid
        for *key, rid in Rating.objects.values_list(
            "idea__external_id", "reviewer__username", "dimension__key", "id"
        ).iterator(chunk_size=5000)
        for key in [tuple(key)]
    }
    users = dict(User.objects.values_list("username", "id"))
    errors: list[FieldError] = []
    rows: list[tuple[Any, ...]] = []
    stamp = RatingHistory._meta.get_field("changed_at")
    answers = RatingHistory._meta.get_field("old_answers")

    def _answers(text: str) -> Any:
        return answers.get_db_prep_value(json.loads(text), connection) if text else None

    for row, rec in enumerate(frame.to_dict("records"), start=2):
        rating_id = ids.get((rec["idea"], rec["reviewer"], rec["dimension"]))
        if rating_id is None:
            errors.append(
                FieldError(
                    field="rating_history.csv: idea",
                    message="names a rating that is not in ratings.csv",
                    row=row,
                    value=f"{rec['idea']} / {rec['reviewer']} / {rec['dimension']}",
                )
            )
            continue
        rows.append(
            (
                rating_id,
                # Changes by accounts the archive does not carry (admins, managers) keep no
                # author rather than a wrong one.
                users.get(rec["changed_by"]),
                stamp.get_db_prep_value(
                    pd.Timestamp(rec["changed_at"]).to_pydatetime(), connection
                ),
                rec["source"],
                rec["old_status"],
                int(rec["old_score"]) if rec["old_score"] else None,
                _answers(rec["old_answers"]),
                rec["old_rationale"],
                rec["new_status"],
                int(rec["new_score"]) if rec["new_score"] else None,
                _answers(rec["new_answers"]),
                rec["new_rationale"],
            )
        )
    if errors:
        raise ApplicationError(
            "rating_history.csv has errors; nothing was imported.", errors=errors
        )
    # The importer wrote one creation row per rating; the archive's history replaces them.
    RatingHistory.objects.all().delete()
    # Raw inserts: changed_at is auto_now_add, which the ORM would overwrite with "now".
    columns = (
        "rating_id, changed_by_id, changed_at, source, old_status, old_score, old_answers, "
        "old_rationale, new_status, new_score, new_answers, new_rationale"
    )
    with connection.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {RatingHistory._meta.db_table} ({columns}) VALUES "
            f"({', '.join(['%s'] * 12)})",
            rows,
        )
    result.created = len(rows)
    return result
