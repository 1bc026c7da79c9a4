"""Accounts (password hashes, roles, flags), assignments and the source of each rating in the
archive (version 2), and every domain with its name (version 4)."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.dataio.importers import ImportResult
from apps.dataio.services.archive.common import csv_records, iso, parse_time
from apps.dataio.services.archive.members import ArchiveWriter
from apps.dataio.services.archive.rows import Keys, insert_rows
from apps.screening.models import Assignment, Rating

ACCOUNT_COLUMNS = [
    "username",
    "email",
    "first_name",
    "last_name",
    "role",
    "is_active",
    "is_staff",
    "is_superuser",
    "password",
    "date_joined",
    "last_login",
]
ASSIGNMENT_COLUMNS = [
    "reviewer",
    "idea",
    "status",
    "assigned_by",
    "decline_reason",
    "created_at",
    "updated_at",
]
# The assignment file's columns that are not fields of the same name, and their lookups.
ASSIGNMENT_SOURCES = {
    "reviewer": "reviewer__username",
    "idea": "idea__external_id",
    "assigned_by": "assigned_by_id",
}
ASSIGNMENT_TIMES = {"created_at", "updated_at"}
ACCOUNT_FLAGS = {"is_active", "is_staff", "is_superuser"}
ACCOUNT_TIMES = {"date_joined", "last_login"}


def _flag(value: Any) -> str:
    return "true" if value else "false"


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def accounts_write(writer: ArchiveWriter) -> None:
    """accounts.csv and assignments.csv."""
    users = dict(User.objects.values_list("id", "username"))
    writer.write_csv(
        "accounts.csv",
        ACCOUNT_COLUMNS,
        (
            [
                _flag(r[c])
                if c in ACCOUNT_FLAGS
                else iso(r[c])
                if c in ACCOUNT_TIMES
                else _cell(r[c])
                for c in ACCOUNT_COLUMNS
            ]
            for r in User.objects.order_by("username").values(*ACCOUNT_COLUMNS)
        ),
    )
    sources = {c: ASSIGNMENT_SOURCES.get(c, c) for c in ASSIGNMENT_COLUMNS}
    writer.write_csv(
        "assignments.csv",
        ASSIGNMENT_COLUMNS,
        (
            [
                users.get(r[sources[c]], "")
                if c == "assigned_by"
                else iso(r[sources[c]])
                if c in ASSIGNMENT_TIMES
                else r[sources[c]]
                for c in ASSIGNMENT_COLUMNS
            ]
            for r in Assignment.objects.order_by("reviewer__username", "idea__external_id")
            .values(*sources.values())
            .iterator(chunk_size=5000)
        ),
    )


def accounts_restore(content: bytes) -> ImportResult:
    """Every account with its password hash, role and flags; an account that already exists
    here (the admin who restores, say) is kept as it is."""
    records = csv_records(content)
    result = ImportResult(kind="accounts", rows=len(records))
    existing = set(User.objects.values_list("username", flat=True))
    new = [r for r in records if r["username"] not in existing]
    result.created = insert_rows(
        User,
        [*ACCOUNT_COLUMNS],
        (
            [
                r[c] == "true"
                if c in ACCOUNT_FLAGS
                else parse_time(r[c])
                if c in ACCOUNT_TIMES
                else r[c]
                for c in ACCOUNT_COLUMNS
            ]
            for r in new
        ),
    )
    if len(new) < len(records):
        result.notes.append(
            f"{len(records) - len(new)} accounts already here were kept as they are."
        )
    return result


def domains_restore(content: bytes) -> ImportResult:
    """Every domain with its name (version 4), before the rubrics and patents: a domain without
    patents came back with none before; one already here is kept as it is. Rubrics attach
    themselves to their domains when their files are imported."""
    records = csv_records(content)
    result = ImportResult(kind="domains", rows=len(records))
    existing = set(Domain.objects.values_list("key", flat=True))
    new = [(r["key"], r["name"]) for r in records if r["key"] not in existing]
    result.created = insert_rows(Domain, ["key", "name"], new)
    return result


def rating_sources_restore(sources: list[str], plain_ratings: bytes) -> None:
    """Give each restored rating the source its archive row names (the import wrote "import")."""
    records = csv_records(plain_ratings, neutralised=False)
    ids = {
        (idea, reviewer, dim): rid
        for idea, reviewer, dim, rid in Rating.objects.values_list(
            "idea__external_id", "reviewer__username", "dimension__key", "id"
        ).iterator(chunk_size=5000)
    }
    by_source: dict[str, list[int]] = {}
    for rec, source in zip(records, sources, strict=True):
        rid = ids.get((rec["idea"], rec["reviewer"], rec["dimension"]))
        if rid is not None and source and source != Rating.Source.IMPORT:
            by_source.setdefault(source, []).append(rid)
    for source, rating_ids in by_source.items():
        for start in range(0, len(rating_ids), 10000):
            Rating.objects.filter(id__in=rating_ids[start : start + 10000]).update(source=source)


def assignments_restore(content: bytes) -> ImportResult:
    """The archived assignments replace those the ratings import settled."""
    records = csv_records(content)
    result = ImportResult(kind="assignments", rows=len(records))
    keys = Keys()
    name = "assignments.csv"
    rows = []
    for n, r in enumerate(records, start=2):
        reviewer = keys.user(name, "reviewer", n, r["reviewer"])
        idea = keys.idea(name, n, r["idea"])
        by = keys.user(name, "assigned_by", n, r["assigned_by"], required=False)
        if reviewer is None or idea is None:
            continue
        values = {
            **r,
            "reviewer": reviewer,
            "idea": idea.id,
            "assigned_by": by,
            "created_at": parse_time(r["created_at"]),
            "updated_at": parse_time(r["updated_at"]),
        }
        rows.append([values[c] for c in ASSIGNMENT_COLUMNS])
    keys.raise_if_any()
    Assignment.objects.all().delete()
    result.created = insert_rows(
        Assignment,
        ASSIGNMENT_COLUMNS,
        rows,
    )
    return result
