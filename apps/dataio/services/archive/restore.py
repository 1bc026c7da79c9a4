"""Loading the installation archive into an empty installation (see the package docstring)."""

from __future__ import annotations

import io
import json
from typing import IO, Any

import pandas as pd
from django.db import connection, transaction

from apps.accounts.models import User
from apps.catalog.models import Idea, Patent
from apps.core.errors import ApplicationError, FieldError
from apps.dataio.importers import ImportResult
from apps.dataio.services.archive import bounded_zip
from apps.dataio.services.archive.accounts import (
    accounts_restore,
    assignments_restore,
    domains_restore,
    rating_sources_restore,
)
from apps.dataio.services.archive.common import (
    FORMAT,
    RATING_SOURCE_COLUMN,
    READABLE_VERSIONS,
    VERSION,
    check_admin,
    plain_csv,
)
from apps.dataio.services.archive.derived import snapshots_recompute
from apps.dataio.services.archive.judge_restore import judges_restore
from apps.dataio.services.archive.members import ArchiveFiles
from apps.dataio.services.archive.state_panels import panel_rows_exist, panels_restore
from apps.dataio.services.imports import import_file
from apps.judges.models import JudgeRun
from apps.screening.models import Rating, RatingHistory


def _refuse(message: str, field: str, detail: str, value: Any = None) -> ApplicationError:
    return ApplicationError(message, errors=[FieldError(field=field, message=detail, value=value)])


def _read_archive(content: bytes | IO[bytes]) -> ArchiveFiles:
    """The manifest and the files it lists (read on demand, each member within bounds:
    bounded_zip), after checking that every member of every listed file is there."""
    archive = bounded_zip.open_archive(content)
    manifest = bounded_zip.read_manifest(archive)
    if manifest.get("format") != FORMAT or manifest.get("version") not in READABLE_VERSIONS:
        raise _refuse(
            "The archive cannot be read.",
            "manifest.json",
            f"must say format {FORMAT!r}, version {VERSION} (or an earlier one: "
            f"{', '.join(map(str, READABLE_VERSIONS))})",
            value=f"{manifest.get('format')} {manifest.get('version')}",
        )
    files = ArchiveFiles(archive, manifest)
    names = set(archive.namelist())
    listed = dict.fromkeys([*manifest["load_order"], *manifest["restored"]])
    missing = [m for n in listed for m in files.members(n) if m not in names]
    if missing:
        raise ApplicationError(
            "The archive is incomplete; nothing was imported.",
            errors=[
                FieldError(field=n, message="is listed in the manifest but missing")
                for n in missing
            ],
        )
    return files


def installation_is_empty() -> bool:
    """No catalog, reviewers, ratings, judge runs, panels or routing switches yet (rubrics may
    exist: PBIG is installed by default; so may admins and managers, who are kept as they are)."""
    return not (
        Patent.objects.exists()
        or Idea.objects.exists()
        or Rating.objects.exists()
        or User.objects.filter(role=User.Role.REVIEWER).exists()
        or JudgeRun.objects.exists()
        or panel_rows_exist()
    )


@transaction.atomic
def installation_import(*, content: bytes | IO[bytes], actor: Any = None) -> list[ImportResult]:
    """Load an archive made by `installation_export` into an empty installation, all or nothing.

    Each file goes through the same importer as a single upload; an error in any file names the
    file (field `<file>: <column>`) and rolls everything back. From version 2 on, the accounts
    come first (password hashes and roles), then the import files, the ratings' sources, the
    assignments, the history and the judges (apps.dataio.services.archive.state); from version
    3 on, the persona panels and the routing switch (state_panels); from version 4 on, every
    domain first (domains.csv: those without patents too), the routing suggestions, and the
    findings at every threshold they were computed at; snapshots are queued for recompute after
    commit. What the product stored before a rule was enforced everywhere (an idea without a
    title or a description) comes back as it was, with a note (`restore=True` importers).
    `content` is the archive's bytes or a seekable binary file.
    """
    check_admin(actor)
    files = _read_archive(content)
    manifest = files.manifest
    if not installation_is_empty():
        raise _refuse(
            "The installation is not empty; nothing was imported.",
            "installation",
            "already holds patents, ideas, reviewers, ratings or panels: import an archive "
            "only into a new installation (or import its files one by one)",
        )
    full = manifest["version"] >= 2
    neutralised = bool(manifest.get("neutralised"))
    results: list[ImportResult] = []
    if full:
        results.append(accounts_restore(files["accounts.csv"]))
    if "domains.csv" in manifest["restored"]:
        results.append(domains_restore(files["domains.csv"]))
    sources: list[str] = []
    plain_ratings = b""
    for name in manifest["load_order"]:
        kind = "rubric" if name.startswith("rubrics/") else name.split(".")[0]
        make_default = name == f"rubrics/{manifest.get('default_rubric')}.yaml"
        content = files[name]
        if name.endswith(".csv"):
            drop = _ARCHIVE_ONLY.get(kind, []) if full else []
            content, apart = plain_csv(content, neutralised=neutralised, drop=drop)
            if kind == "ratings":
                sources, plain_ratings = apart.get(RATING_SOURCE_COLUMN, []), content
        try:
            results.append(
                import_file(
                    kind=kind,
                    content=content,
                    filename=name.rsplit("/", 1)[-1],
                    actor=actor,
                    make_default=make_default,
                    create_domains=True,  # the archive's own domains
                    restore=True,
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
    if full:
        rating_sources_restore(sources, plain_ratings)
        results.append(assignments_restore(files["assignments.csv"]))
    history, _ = plain_csv(files["rating_history.csv"], neutralised=neutralised)
    results.append(_restore_history(history, actor=actor))
    if full:
        results += judges_restore(files)
    if manifest["version"] >= 3:
        results += panels_restore(files)
    snapshots_recompute(findings_thresholds=_thresholds(manifest))
    return results


# Columns of an import file that only the archive writes (from version 2 on), taken off before
# the importer reads it: a rating's source is written back afterwards; a reviewer's name and
# email come exactly from accounts.csv (the reviewers importer would split "Mary Ann Smith"
# into "Mary" and "Ann Smith").
_ARCHIVE_ONLY = {"ratings": [RATING_SOURCE_COLUMN], "reviewers": ["name", "email"]}


def _thresholds(manifest: dict[str, Any]) -> list[float]:
    values = manifest.get("findings_thresholds") or []
    return [float(v) for v in values if isinstance(v, int | float) and 0 < v <= 1]


def _restore_history(content: bytes, *, actor: Any) -> ImportResult:
    """Replace the history the ratings import just wrote with the archived history."""
    frame = pd.read_csv(io.BytesIO(content), dtype=str, keep_default_na=False, na_filter=False)
    result = ImportResult(kind="rating history", rows=len(frame))
    ids = {
        (idea, reviewer, dimension): rating_id
        for idea, reviewer, dimension, rating_id in Rating.objects.values_list(
            "idea__external_id", "reviewer__username", "dimension__key", "id"
        ).iterator(chunk_size=5000)
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
